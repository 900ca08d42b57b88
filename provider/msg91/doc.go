// Package msg91 is a notify.Provider for MSG91, the Indian SMS vendor,
// through its Send SMS (flow) API: DLT-native, every SMS is a template
// approved in the MSG91 panel, and there is no free-text send.
//
// Each Send is one request,
//
//	POST {BaseURL}/api/v5/flow
//	authkey: {AuthKey}
//	Content-Type: application/json
//
//	{"template_id": "<MSG91 template ID>", "short_url": "0"|"1",
//	 "recipients": [{"mobiles": "919876543210", "VAR1": "...", ...}]}
//
// (Config.BaseURL may also be the endpoint itself, with or without a
// trailing slash, as MSG91's pages give it:
// https://control.msg91.com/api/v5/flow/.) mobiles is the recipient in
// international form without the plus: envelopes name it in E.164
// (+919876543210), and a bare Indian mobile number (9876543210, with 91
// or 0 before it) is read as +91. The template, the route of the
// envelope's sms.Message (sms.MessageOf(env).Route) and its variables are:
//
//	dlt  template_id = Message.DLTMessageIDFor(the provider's name), the
//	     ID of the template in the MSG91 panel (sms.DLTTemplate.MessageIDs
//	     ["msg91"] of the account's DLT template); its DLTValues, the values of the DLT template's
//	     {#var#} slots in order, go to the template's variables: by
//	     default VAR1, VAR2, ... (Config.VarPrefix, "VAR"; "var" for a
//	     template written with ##var1##), or, for a template whose
//	     variables have names of their own (##name##, ##date##), the
//	     names Config.TemplateVars lists for its ID, in slot order. A
//	     dlt message without its ID is CodeInvalidArgument naming
//	     dlt_message_id: set the account's DLT template's
//	     message_ids.msg91 to the MSG91 template ID. The Provider is a
//	     sms.DLTByIDSender, so the SMS channel offers it no such message:
//	     it goes to the next provider, or is refused before any charge.
//	otp  template_id = Config.OTPTemplateID, an approved OTP template, with
//	     the code in its variable Config.OTPVar (default "OTP", for
//	     ##OTP##); the envelope's Text is not sent. Without
//	     OTPTemplateID the otp route is CodeInvalidArgument naming it.
//	sms  CodeInvalidArgument: MSG91 sends no free text (in India every SMS
//	     is a DLT template; its legacy text APIs are not used here).
//
// MSG91 variable names are case sensitive, as the template writes them.
// The sender ID is the template's, not the envelope's: MSG91 sends with
// the header its template is mapped to. short_url is "1" with
// Config.ShortURL, when MSG91 shortens the links. SendBatch
// (sms.BatchSender, used by an sms.BulkRequest) puts up to
// Config.MaxBatch recipients (default DefaultMaxBatch, 100) in one
// request, each with the same variables, and every recipient's record
// gets the request's ID (the delivery reports tell them apart by
// number). testdata/requests holds the bodies (golden_test.go).
//
// The wire format is MSG91's documentation's: "Send SMS via FLOW"
// (https://control.msg91.com/apidoc/textsms/send-sms-flow.php: the
// endpoint, the authkey header, recipients with mobiles and the
// variables named as in the template, VAR1 and VAR2 in its sample, the
// answer {"message": "5762846b4f8d285d378b4567", "type": "success"});
// its error body and codes, {"type": "error", "message": "Missing
// Authentication Key", "code": "106"}, from the same API documentation
// (https://api.msg91.com/apidoc/textsms/send-sms-v1.php); its help pages
// on the API (https://msg91.com/help/api: the auth key and its IP
// security, error 418) and on templates
// (https://msg91.com/help/template/how-to-create-flow-id-to-send-sms-via-api).
// The stored copies consulted for this package did not include MSG91's
// current reference page (https://docs.msg91.com/sms/send-sms), whose
// template_id and short_url ("1 (On) or 0 (Off)") in place of the older
// flow_id and sender follow the clients that cite it (Pipedream's MSG91
// component, and the request quoted in utopia-php/messaging issue 23).
//
// # What MSG91 needs
//
//   - In India, DLT: the entity, the sender IDs (6-letter headers) and
//     every content template registered on a DLT platform, each {#var#}
//     at most 30 characters.
//   - Each DLT template created in the MSG91 panel (SMS, Templates) with
//     its DLT template ID, the sender ID mapped to it and the exact
//     approved text, its {#var#} slots written as MSG91 variables
//     (##VAR1##, ##VAR2##, ... by default here); its MSG91 template ID is
//     the message_id of the account's DLT template. An OTP template the
//     same way, with ##OTP##, for Config.OTPTemplateID.
//   - The auth key (MSG91 panel, Authkey). Its IP security is on by
//     default: whitelist the addresses this program calls from, or MSG91
//     answers 418.
//
// The answer {"type": "success", "message": request ID} is the only
// success, whatever the HTTP status: the request ID becomes the Result's
// ProviderMessageID.
//
// # Errors
//
// Every error says whether MSG91 may have the message (notify.OutcomeOf),
// which decides refunds and retries. MSG91's own error body, {"type":
// "error", "message": "...", "code": ...} (code a string or a number, or
// absent), is its answer that it took nothing: a certain refusal whatever
// the HTTP status (MSG91 answers errors with 200 as well as 4xx and 5xx),
// refunded. Its cause is an *Error holding MSG91's code and message.
// It is classified by code, from MSG91's error-code table, else by the
// words of its message, in any case (tried in this order: IP whitelist,
// auth key, balance, rate limit, DLT, template, blocked, number):
//
//	106, 207, 401; "authkey",    CodeRejected: the auth key is missing or
//	"authentication"             wrong; the message says to check
//	                             Config.AuthKey (never the key)
//	208, 418; "whitelist"        CodeRejected: MSG91's IP security refused
//	                             this server's address
//	301; "balance"               CodeUnavailable: the account's balance is
//	                             too low: top it up; retried like an outage
//	311                          CodeRateLimited, RetryAfter 10s: the same
//	                             request twice within 10 seconds
//	429, 506; "too many",        CodeRateLimited, with Retry-After
//	"rate limit", "throttl"
//	306                          CodeUnavailable: the route is closed at
//	                             this hour
//	001, 002, 601                CodeUnavailable: MSG91's internal error
//	202; "mobile", "number"      CodeRejected: the number
//	"ndnc", "dnd", "blocked",    CodeRejected: the number is blocked
//	"blacklist"
//	"template", "flow"           CodeRejected: the template ID is unknown
//	                             or the template not approved
//	"dlt"                        CodeRejected: a DLT mismatch
//	203, 302, 303, 505, 101-103, CodeRejected: the sender, the account, an
//	107, 209, 210, 310           incomplete request
//	any other                    by the HTTP status: on a 5xx
//	                             CodeUnavailable (MSG91 shedding load with
//	                             its own body), on a 429 CodeRateLimited,
//	                             else CodeRejected
//
// Any other answer is not MSG91's, and is classified by its HTTP status:
//
//	429              CodeRateLimited, with Retry-After
//	5xx              CodeOutcomeUnknown: a proxy's 502 or 504 page, an
//	                 empty, HTML or cut body, JSON of another shape; MSG91
//	                 may have taken the message behind it
//	2xx              CodeOutcomeUnknown: a success that cannot be read, or
//	                 "type": "success" without a request ID
//	other statuses   CodeRejected
//
// Network failures follow the same rule (provider/vendorhttp makes it for
// every HTTP provider alike): a failure before the request was written
// whole (a refused dial, DNS, TLS, a context that ended first, which
// stays visible to errors.Is) is CodeUnavailable, certain and retried.
// Once the request may have been written, MSG91 may have the message and
// a retry could send the SMS twice: a timeout, a reset or closed
// connection, an answer cut short, unreadable or over 64 KiB is
// CodeOutcomeUnknown, whose charge stands and which is never retried.
// Nothing that fails before any I/O is unknown: an envelope MSG91 could
// not take is CodeInvalidArgument. No error holds the auth key or the
// message's code: MSG91's text is stripped of them.
//
// # Balance and health
//
// Balance reads the MSG91 wallet, so that the host can watch it, and
// CheckHealth, the readiness check that sms.Channel.CheckHealth and the
// gateway's /readyz ask of a provider, is nil when the same call answers.
// It is MSG91's balance API, as its API documentation gives it ("Check
// Route Balance", https://api.msg91.com/apidoc/basic/route-balance.php:
// GET balance.php with the required authkey and type, answering the
// balance "if all parameters are correct or appropriate error message"),
// under Config.BaseURL:
//
//	GET {BaseURL}/api/balance.php?authkey={AuthKey}&type=0
//
// type 0 is the wallet (MSG91's help page on checking the balance,
// https://msg91.com/help/MSG91/how-can-i-check-my-balance; 1 and 4 are
// the promotional and transactional routes' SMS credits, counts rather
// than money). The answer is a plain number, the balance in
// rupees: Balance returns it as notify.Money in INR, parsed exactly, its
// digits past the paisa cut and never rounded up. No v5 endpoint for the
// balance is documented in the MSG91 pages consulted. The auth key goes
// in the query, as MSG91 documents it (so a proxy's access log may hold
// it); it never appears in an error.
//
// MSG91's error body ({"type": "error", ...}, or its older {"msgType":
// "error", "msg": ...}), or a line of text on a 2xx, which is how its
// older APIs answer an error, is classified as for a send: a wrong or
// missing auth key (106, 207, 401, or words such as "authkey" or
// "authentication") is CodeRejected, saying to check Config.AuthKey; an IP
// the key's IP security does not whitelist (418) CodeRejected too. MSG91's
// help page says the balance API answers only for a key whose IP security
// is on: with it off, CheckHealth may fail though sends work. The call
// sends nothing, so no error of it is of unknown outcome: a 5xx, a proxy's
// page, a timeout or a lost answer is CodeUnavailable, and an ended
// context stays visible to errors.Is. A balance too low to send, zero
// included, is healthy: watch Balance for that.
//
// # Delivery reports
//
// MSG91's answer says it took the SMS, not that the operator delivered
// it; its delivery-report webhook says that later, and Webhook takes it.
// MSG91 documents the webhook
// (https://msg91.com/help/how-can-i-get-the-delivery-reports-on-my-webhook-url,
// and https://msg91.com/help/webhook-new/how-to-receive-sms-delivery-reports-via-webhook-new):
// a POST to the URL set in its panel (SMS, Webhook), in the version
// chosen there:
//
//	v2   a form (application/x-www-form-urlencoded) whose data field holds
//	     [{"senderId", "requestId", "report": [{"date": "2024-05-22
//	     10:06:20", "number": "919876543210", "status": "1", "desc":
//	     "DELIVERED", "failedReason", ...}], "userId", "campaignName"}]:
//	     every number of a request in one POST
//	v3   one JSON object per number: {"date", "number", "senderId",
//	     "requestId", "status", "desc", ...}
//	v4   CleverTap's, which carries no request ID: not read (400)
//	New  Webhook (New), "On Report Received": a JSON body composed in the
//	     panel from MSG91's variables, one per number; compose it with
//	     requestId, telNum, status, deliveryTime and failureReason
//
// The receiver reads any of them: JSON is recognised by its first
// character whatever the Content-Type (an object, an array of them, the
// v2 list itself, or {"data": ...} holding it as JSON or as a string);
// else a form whose data field holds it, or whose fields are one report.
// Field names are read without regard to case, values as strings or
// numbers, each from the first of these names it has:
//
//	requestId, request_id            the send's request ID (the Result's
//	                                 ProviderMessageID), or the wrapping
//	                                 object's: required
//	number, telNum, mobile, mobiles  the recipient: DeliveryReport.To, so
//	                                 that the numbers of one request are
//	                                 told apart (notify matches numbers
//	                                 once normalised: 91 before them or
//	                                 not)
//	status                           MSG91's status, in the table below;
//	                                 a status in words is read as desc
//	desc, description                the status in words, when status is
//	                                 absent; a failure's text otherwise
//	failedReason, failureReason      a failure's text
//	date, deliveryTime, ts           when it happened: "2006-01-02
//	                                 15:04:05" in IST (UTC+05:30, MSG91's
//	                                 zone; a T may separate date and
//	                                 time), RFC 3339, or Unix seconds;
//	                                 missing or unreadable, the
//	                                 Notifier's now
//
// The statuses, as MSG91's webhook documentation lists them:
//
//	1                                delivered
//	2                                failed
//	9                                failed: NDNC (the do-not-call registry;
//	                                 promotional SMS only)
//	16, 25                           failed: rejected
//	17                               failed: blocked number
//	any other number                 ignored, counted in Stats().Ignored
//	DELIVERED, DELIVRD, SUCCESS      delivered (in words, any case)
//	SENT, SUBMITTED                  sent
//	FAILED, UNDELIVERED, REJECTED,   failed
//	EXPIRED, NDNC, DND, BLOCKED, ...
//
// A failure's VendorCode is MSG91's status ("16", or the word), and its
// Error "msg91: " and failedReason, or what the status means.
//
// MSG91 signs nothing, so the webhook URL carries a secret token as its
// last path segment (https://<host>/webhooks/msg91/<token>, or a
// ServeMux pattern's {token}), compared in constant time; a wrong or
// missing token is 401 before the body is read, and reports nothing. A
// method other than POST is 405. A body that cannot be read, or a report
// without a request ID, is 400 (nothing of that POST is reported); a body
// over WebhookConfig.MaxBody is 413; a report of an unknown request ID
// (or of another number) is acknowledged (200) and counted
// (Stats().Unmatched), unless the provider has a send in flight, whose
// request ID the record may not have yet: then, as for a report that
// cannot be applied now (a store failure, a message still being sent),
// the answer is 503, so that MSG91 posts again. Reports are applied as
// notify.Notifier.Report applies them: a repeated, late or out-of-order
// report changes nothing.
//
// An undelivered SMS keeps its charge by default: MSG91 bills the
// submission (sms.Channel.Refund; set sms.Config.RefundReportedFailures
// where your contract refunds).
//
// Package msg91test has a strict fake of MSG91, on httptest, that checks
// requests as MSG91 does and answers with its bodies (the flow API, and
// the balance API with a wallet a test sets), fails on demand,
// and posts delivery reports to the receiver under test when a test asks
// (Server.Report).
package msg91
