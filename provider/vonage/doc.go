// Package vonage is a notify.Provider for Vonage's SMS API (formerly
// Nexmo's): SMS envelopes (sms.MessageOf(env)) to any country Vonage
// reaches, India's DLT route included.
//
// Each Send is one request,
//
//	POST {BaseURL}/sms/json
//	Content-Type: application/x-www-form-urlencoded
//	Accept: application/json
//
//	api_key=a1b2c3d4&api_secret=...&from=AcmeInc&text=Your+order+has+shipped.&to=447700900000&type=text
//
// whose form parameters are
//
//	api_key, api_secret   Config.APIKey and APISecret
//	from                  Config.From, a number without its +; on the dlt
//	                      route the message's SenderID (sms.Message.SenderID,
//	                      its registered DLT header) when it has one. A
//	                      SenderID that is no sender (ValidSender) is
//	                      CodeInvalidArgument on "sender_id"
//	to                    env.To without its +: Vonage takes E.164 without
//	                      it. Anything but E.164 (+ and 7 to 15 digits) is
//	                      CodeInvalidArgument on "to", and nothing is sent
//	text                  the sms.Message's Text on every route (on the
//	                      otp route the whole OTP text; on the dlt route
//	                      the DLT template's text); empty, it is
//	                      CodeInvalidArgument on "message"
//	type                  unicode for a UCS-2 message (sms.Message.Encoding,
//	                      or the text itself when the message has none),
//	                      else text (GSM 03.38)
//	entity-id, content-id on the dlt route, the message's DLTEntityID and
//	                      DLTTemplateID: India's DLT entity and content
//	                      template registrations; missing or not digits,
//	                      CodeInvalidArgument on dlt_entity_id or
//	                      dlt_template_id
//	client-ref            notify.MessageRef(account, message ID), when the
//	                      envelope names both and the reference fits in
//	                      MaxClientRef (100) characters: Vonage echoes it
//	                      in the delivery receipts
//	callback              Config.Callback, when set: where Vonage sends the
//	                      message's delivery receipts
//
// testdata/requests holds each shape as sent (golden_test.go). The wire
// format is Vonage's SMS API reference (developer.vonage.com/en/api/sms,
// "Send an SMS"; its OpenAPI definition's NewMessage, whose newest
// versions give client-ref 100 characters and callback 100) and its
// troubleshooting guide's status table. entity-id and content-id are
// spelled as Vonage's .NET library sends them; one version of the OpenAPI
// definition spells them entity_id and content_id.
//
// Vonage answers 200 with one entry for each SMS part the text takes,
//
//	{"message-count": "2", "messages": [
//	  {"to": "447700900000", "message-id": "0A0000000123ABCD1", "status": "0",
//	   "remaining-balance": "3.14159265", "message-price": "0.03330000",
//	   "network": "23410", "client-ref": "..."}, ...]}
//
// A status of 0 is a part Vonage took: the first part's message-id
// becomes the Result's ProviderMessageID. A longer text is one message
// of several parts, each charged and each reported on by Vonage: the
// Result's Note says how many and names the parts after the first. When
// Vonage took some parts and refused others, the send succeeded (what
// was taken is sent and charged), and the Note says so.
//
// # What Vonage requires
//
// The API key and one of its secrets, for an account provisioned for the
// SMS API (status 11 otherwise). A demo account (before its first top-up)
// sends only to its test numbers (status 29). from must be a sender the
// destination country takes: a Vonage virtual number or short code in
// the US and Canada, an alphanumeric sender ID elsewhere where the
// country allows one, registered where it must be (status 15). India
// takes SMS only on the DLT route: the header registered with the DLT
// template as the sender ID, the template's exact text, and its entity
// and content template IDs. The account needs credit (status 9).
//
// # Errors
//
// Every error says whether Vonage may have the message (notify.OutcomeOf),
// which decides refunds and retries. Vonage's refusal of a part,
//
//	{"message-count": "1", "messages": [{"status": "4", "error-text": "Bad Credentials"}]}
//
// (a status other than 0 with an error-text, on HTTP 200 as Vonage answers
// them, or on any other status) is Vonage's answer that it took nothing: a
// certain refusal, refunded, whose cause is an *Error carrying the
// status, the error-text (with the API secret and the OTP replaced by
// "[redacted]") and the HTTP status (errors.As):
//
//	1  Throttled                 CodeRateLimited, RetryAfter at least 1s
//	10 Too many existing binds   CodeRateLimited, RetryAfter at least 1s
//	5  Internal error            CodeUnavailable: retried, and offered to
//	                             the channel's next provider
//	9  Partner quota violation   CodeUnavailable: the account's credit is
//	                             too low; top it up (retried like an outage)
//	6  Invalid message           CodeInvalidArgument on "to" (an
//	                             unrecognised number prefix)
//	12 Message too long          CodeInvalidArgument on "message"
//	15 Invalid sender address    CodeInvalidArgument on "sender_id"
//	3  Invalid params            CodeInvalidArgument on the field its
//	                             error-text names right after "invalid",
//	                             "missing" or "bad", or before "param" (to,
//	                             msisdn, from, sender, text, message, type,
//	                             entity, content, ...), else CodeRejected
//	2  Missing params            CodeRejected
//	4  Invalid credentials       CodeRejected: check Config.APIKey and
//	                             APISecret (never repeated)
//	7  Number barred, 33 Number  CodeRejected
//	de-activated
//	8  Partner account barred,   CodeRejected: the account
//	11 Account not enabled for
//	HTTP, 29 Non-whitelisted
//	destination
//	14 Invalid signature, 22     CodeRejected
//	Invalid network code, 23
//	Invalid callback URL, 32
//	Signature and API secret
//	disallowed
//	other statuses               by the HTTP status: 429 CodeRateLimited,
//	                             5xx CodeUnavailable (Vonage formed the
//	                             answer and took nothing), else CodeRejected
//
// Any other answer is not Vonage's, and is classified by its HTTP status
// (vendorhttp.Foreign): 429 CodeRateLimited, with Retry-After; a 5xx (a
// proxy's 502 or 504 page, an empty, HTML or cut body) or a 2xx that
// cannot be read, or whose parts have no message-id, CodeOutcomeUnknown:
// Vonage may have taken the message behind it; any other CodeRejected.
//
// Network failures follow the rule provider/vendorhttp makes for every
// HTTP provider: a failure before the request was written whole (a
// refused dial, DNS, TLS, a context that ended first, which stays
// visible to errors.Is) is CodeUnavailable, certain and retried. Once the
// request may have been written, Vonage may have taken the message and a
// retry could send it twice: a timeout, a reset or closed connection, an
// answer cut short, unreadable or over 64 KiB is CodeOutcomeUnknown,
// whose charge stands and which is never retried. The provider retries
// nothing itself. No error holds the request's body, where the API secret
// travels.
//
// # Balance and health
//
// Balance reads the Account API's GET {BaseURL}/account/get-balance,
// authenticated with the key and secret in an Authorization header
// (HTTP basic, as Vonage documents; never in the URL, which proxies log),
// which answers {"value": 10.28, "autoReload": false}: the balance in
// euros, read from the JSON number's text, exactly, and cut to the cent.
// CheckHealth, the readiness check of notify.Provider, is that query.
//
// # Delivery receipts
//
// Vonage sends each part's delivery receipt to the message's callback
// (Config.Callback), or to the account's delivery receipt webhook, as the
// dashboard's API settings say: a GET with the fields in the query, a
// POST of a form, or a POST of a JSON object. Its fields are msisdn (the
// recipient), to (the sender), network-code, messageId, price, status,
// scts (the carrier's time, YYMMDDHHMM without a zone, so not read: a
// report's time is when it arrives), err-code, api-key,
// message-timestamp, client-ref (as Send set it) and, when the account
// has signed webhooks on, timestamp (Unix seconds), nonce and sig. A GET
// receipt's fields share the query with the callback URL's own, which
// would be read (and, signed, checked) as receipt fields: give
// Config.Callback no query; Send puts its reference in client-ref.
// Webhook takes them:
//
//	delivered                 a delivered report
//	accepted                  a sent report (the downstream carrier took it)
//	expired, failed, rejected a failed report: VendorCode is err-code (the
//	                          status without one); Error is "vonage: the
//	                          message was rejected: anti-spam rejection
//	                          (err-code 6)"
//	buffered, unknown, others nothing final: acknowledged (200), counted
//	                          in Stats().Ignored
//
// Each report names the message by messageId and, through client-ref, by
// its account and message ID, so that a receipt finds a message whose
// send's answer was lost (an unknown outcome) and settles it. The receipt
// of the first part settles a message of several parts; the others name
// message-ids the record does not hold, and are acknowledged and counted
// Unmatched.
//
// Vonage signs its webhooks only when signed webhooks are on for the
// account (Vonage support turns them on), under the API key's signature
// secret by the dashboard's signature method (Sign): the fields other
// than sig, sorted by name, as "&name=value" with each '&' and '=' of a
// value made '_', hashed with the secret after them (md5hash, the
// default; lower-case hex) or under an HMAC-MD5, SHA-1, SHA-256 or
// SHA-512 keyed with it (upper-case hex). With
// WebhookConfig.SignatureSecret set, a receipt without a sig that matches
// (compared in constant time, its hex in either case) or whose timestamp
// is older than WebhookConfig.MaxAge (24 hours: Vonage's retries of a
// receipt that was not acknowledged keep coming for a day) or more than
// five minutes ahead is 401 and reports nothing. An account without
// signed webhooks authenticates its receiver by a secret token as the
// callback URL's last path segment (WebhookConfig.Token, compared in
// constant time before the body is read); both may be set. With
// WebhookConfig.APIKey set, a receipt of another API key is refused too.
//
// A method other than GET or POST is 405, a body that cannot be read or a
// receipt without messageId 400, a body over WebhookConfig.MaxBody (64
// KiB by default) 413. A receipt of a message no record has is
// acknowledged (200) and counted (Stats().Unmatched), unless the provider
// has a send in flight whose message-id the record may not have yet: then,
// as for a receipt that cannot be applied now (a store failure, a message
// still being sent), the answer is 503, and Vonage sends it again.
// Reports are applied as notify.Notifier.Report applies them: a repeated,
// late or out-of-order report changes nothing.
//
// Vonage charges for every part it took, delivered or not; the SMS
// channel keeps the charge of a message a report fails unless
// sms.Config.RefundReportedFailures.
//
// Package vonagetest is a strict fake of the SMS API and the balance
// query on httptest, with injected failures, that sends receipts, signed
// as the account's would be, when a test asks (Server.Report, Server.Flush
// with Config.AutoReceipts), and sends forged ones (Server.Send).
package vonage
