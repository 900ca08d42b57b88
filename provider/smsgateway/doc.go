// Package smsgateway is a notify.Provider for SMS gateways that speak the
// Fast2SMS-style bulk API, the SMS channel's vendor.
//
// Each Send is one request,
//
//	POST {BaseURL}/dev/bulkV2
//	authorization: {APIKey}
//	Content-Type: application/json
//
// where {BaseURL} is Config.BaseURL without the endpoint's path when it
// was given as the full endpoint (https://www.fast2sms.com/dev/bulkV2):
// both forms send to the same URL.
//
// whose JSON body depends on the route of the envelope's sms.Message
// (sms.MessageOf(env).Route):
//
//	sms  {"route": "q", "message", "language": "english"|"unicode", "flash", "numbers"}
//	otp  {"route": "otp", "variables_values": code, "flash", "numbers"}
//	dlt  {"route": "dlt", "sender_id", "message": Message ID, "variables_values": "v1|v2", "flash", "numbers"}
//	     when the account's registered template has the vendor's Message ID
//	     (store.DLTTemplate.MessageID, from the vendor's DLT manager);
//	     otherwise {"route": "dlt_manual", "sender_id", "message",
//	     "template_id", "entity_id", "flash", "numbers"} with the whole text
//
// numbers is the 10-digit recipient; SendBatch (sms.BatchSender, used
// by an sms.BulkRequest) puts up to Config.MaxBatch numbers (default
// DefaultMaxBatch, 1,000) in one request, comma-separated, as the vendor
// takes them, and every recipient's record gets the request's request_id
// (the delivery reports tell them apart by number). A BulkRequest names
// up to notify.MaxBulkRecipients (10,000) numbers; each is its own
// charged record, settled, refunded and reported on its own. language is "unicode" when the text needs
// UCS-2 (see sms.Segments), else "english". On the otp route the vendor
// sends its own OTP text around the code; the envelope's Text is not sent.
// A DLT value holding '|' cannot go on the dlt route and is
// CodeInvalidArgument. testdata/requests holds the bodies, each with the
// vendor's page that documents it (golden_test.go).
//
// The vendor answers {"return": true, "request_id": "...", "message":
// ["SMS sent successfully."]}, and request_id becomes the Result's
// ProviderMessageID. A send succeeded only when the body says "return":
// true, whatever the HTTP status.
//
// # Errors
//
// Every error says whether the vendor may have the message
// (notify.OutcomeOf), which decides refunds and retries. The vendor's own
// error body, {"return": false, "status_code": N, "message": "..."} (HTTP
// 400, 401 for a bad key, or any other status), is its answer that it
// took nothing: a certain refusal whatever the HTTP status, refunded,
// classified by status_code:
//
//	412, 413        CodeRejected: the API key is wrong or disabled; the
//	                message says to check Config.APIKey (never the key)
//	416             CodeUnavailable: the vendor wallet is too low; top it
//	                up (see Provider.Balance); retried like an outage
//	995             CodeRateLimited: the vendor's spam check (the same number
//	                too often), with RetryAfter of a minute
//	411             CodeRejected: the vendor refused the number
//	406, 401        CodeRejected: the sender ID is not approved, or missing
//	424, 425, 426   CodeRejected: the DLT template or its values
//	500             CodeRejected: template or sender blacklisted at DLT
//	other codes     a code the vendor does not document, or none, by the
//	                HTTP status: on a 5xx CodeUnavailable, a temporary
//	                refusal that is retried (the vendor shedding load:
//	                {"return": false, "status_code": 503, "message":
//	                "busy"} on a 503); on a 429 CodeRateLimited, with
//	                Retry-After; else CodeRejected (the request or the
//	                vendor account is wrong: retrying cannot help)
//
// Any other answer is not the vendor's, and is classified by its HTTP
// status:
//
//	429                   CodeRateLimited, with Retry-After
//	5xx                   CodeOutcomeUnknown: a proxy's 502 or 504 page, an
//	                      empty, HTML or cut body, JSON of another shape;
//	                      the vendor may have taken the message behind it
//	2xx                   CodeOutcomeUnknown: a success that cannot be read,
//	                      or "return": true without a request_id
//	other statuses        CodeRejected
//
// Network failures follow the same rule (provider/vendorhttp makes it for
// every HTTP provider alike): a failure before the request was written
// whole (a refused dial, DNS, TLS, a context that ended first, which stays
// visible to errors.Is) is CodeUnavailable, certain and retried. Once the
// request may have been written, the vendor may have the message and a
// retry could send the SMS twice: a timeout, a reset or closed connection,
// an answer cut short, unreadable or over 64 KiB is CodeOutcomeUnknown,
// whose charge stands and which is never retried. Nothing that fails
// before any I/O is unknown: an envelope the vendor could not take is
// CodeInvalidArgument.
//
// Balance reads the vendor wallet (POST {BaseURL}/dev/wallet), so that the
// host can watch it; CheckHealth uses the same call. It sends nothing, so
// a failure that would leave a send's outcome unknown (a 5xx, a lost
// answer) is CodeUnavailable for it; an answer without a readable wallet
// figure is CodeInternal.
//
// # Delivery reports
//
// The vendor's answer says it took the SMS, not that the operator
// delivered it; its delivery-report (DLR) webhook says that later, and
// Webhook takes it. The vendor documents the webhook's transport
// (https://docs.fast2sms.com/reference/sms-webhook): a POST with a JSON
// or form (URL-encoded) body, or a GET (PUT may be chosen too), to a URL
// set in its dashboard, with a "Standard" body the account owner composes
// from the vendor's variables, or the fixed "CleverTap" template. The
// stored copy of that page consulted for this package did not include
// the variables' table, so the fields below follow the public client
// code that reads the vendor's webhook
// (https://github.com/itxshakil/laravel-fast2sms, docs/webhooks.md:
// request_id, mobile, status delivered or failed,
// status_description, failure_reason, delivery_timestamp, post_attempt;
// CleverTap's {"statuses": [{"msgId", "status", "timestamp",
// "description"}]}) and the vendor's delivery-report API (mobile, status,
// status_description, delivery_time). Compose the Standard body with
// request_id, mobile, status, failure_reason and delivery_timestamp.
// The receiver is tolerant in form and strict in meaning; it accepts:
//
//	GET                   the report in the query parameters
//	POST, PUT             a JSON object, an array of them, or objects
//	                      wrapping them under data, reports, statuses or
//	                      delivery_status (a wrapped report lacking its
//	                      request_id takes the wrapper's; a wrapper may
//	                      hold its JSON as a string); JSON is recognised
//	                      by its first character, whatever the
//	                      Content-Type (the vendor's "Raw JSON" form
//	                      transform); else a form body, one report, or a
//	                      form field data holding JSON; an empty body
//	                      takes the report from the query. XML is 400.
//
// Field names are read without regard to case; numbers and strings alike.
// Each report is read from the first of these names it has:
//
//	request_id, requestid, msgId     the send's request_id (the Result's
//	                                 ProviderMessageID): required
//	mobile, number, recipient_id,    the recipient, 10 digits or with the
//	msisdn, phone, to                country code: DeliveryReport.To, so
//	                                 that the numbers of one request are
//	                                 told apart (notify matches the last
//	                                 ten digits); without it, the report
//	                                 names the request's record, and one
//	                                 of a request to several numbers is
//	                                 ignored: it cannot say whose it is
//	status, dlr_status,              the status, in the table below
//	delivery_status
//	error_code, err_code,            a failure's code: VendorCode is
//	status_code, code                "STATUS:code", or "STATUS" without
//	failure_reason,                  a failure's text: Error is
//	status_description,              "smsgateway: " and it
//	description, reason, error
//	delivery_timestamp,              when it happened (a report of sent
//	delivery_time, delivered_at,     tries sent_timestamp, sent_time
//	done_date, timestamp, time       first): Unix seconds or
//	                                 milliseconds, RFC 3339, or
//	                                 "2006-01-02 15:04:05" (or with a T)
//	                                 in IST, UTC+05:30, the vendor's zone,
//	                                 assumed when none is given; missing
//	                                 or unreadable, the Notifier's now
//
// The statuses, in any letter case (the vendor sends delivered and
// failed; the others are the operators' words other Indian DLRs pass
// on):
//
//	DELIVERED, DELIVRD, SUCCESS                        delivered
//	SENT, SUBMITTED, ACCEPTED, ENROUTE                 sent
//	FAILED, FAIL, UNDELIVERED, UNDELIV, UNDELIVERABLE,
//	REJECTED, REJECTD, EXPIRED, EXPIRD, DELETED, DND,
//	NDNC, BLOCKED, BLACKLISTED, INVALID                failed
//	anything else (PENDING, QUEUED, UNKNOWN, ...)      ignored, counted
//	                                                   in Stats().Ignored
//
// The vendor signs nothing, so the callback URL carries a secret token as
// its last path segment (https://<host>/webhooks/smsgateway/<token>, or
// a ServeMux pattern's {token}), compared in constant time; a wrong or
// missing token is 401 before the body is read, and reports nothing. A
// method other than GET, POST and PUT is 405. A body that cannot be read,
// or a report without a request_id, is 400 (nothing of that callback is
// reported); a body over WebhookConfig.MaxBody is 413; a report of an
// unknown request ID (or of another number) is acknowledged (200) and
// counted (Stats().Unmatched), unless the provider has a send in flight,
// whose request ID the record may not have yet (a report that outran the
// Notifier's move to sent): then, as for a report that cannot be applied
// now (a store failure, a message still being sent), the answer is 503,
// so that the vendor calls again. Reports are applied as notify.Notifier.Report applies
// them: a repeated, late or out-of-order report changes nothing.
//
// An undelivered SMS keeps its charge by default: the vendor bills the
// submission (sms.Channel.Refund; set sms.Config.RefundReportedFailures
// where your vendor refunds).
//
// Package smsgatewaytest has a fake vendor, on httptest, that checks
// requests the way the vendor does and answers with its bodies, and posts
// delivery reports to the receiver under test when a test asks
// (Server.ReportNumber, Server.FlushDLRs with Config.AutoDLR).
package smsgateway
