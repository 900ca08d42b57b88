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
// whose JSON body depends on Envelope.SMS.Route:
//
//	sms  {"route": "q", "message", "language": "english"|"unicode", "flash", "numbers"}
//	otp  {"route": "otp", "variables_values": code, "flash", "numbers"}
//	dlt  {"route": "dlt_manual", "sender_id", "message", "template_id", "entity_id", "flash", "numbers"}
//
// numbers is the 10-digit recipient (the vendor takes several, comma
// separated; a Send has one). language is "unicode" when the text needs
// UCS-2 (see sms.Segments), else "english". On the otp route the vendor
// sends its own OTP text around the code; the envelope's Text is not sent.
//
// The vendor answers {"return": true, "request_id": "...", "message":
// ["SMS sent successfully."]}, and request_id becomes the Result's
// ProviderMessageID. A send succeeded only when the body says "return":
// true, whatever the HTTP status.
//
// # Errors
//
// Every error says whether the vendor may have the message
// (notify.OutcomeOf), which decides refunds and retries. Only the vendor's
// own error body, {"return": false, "status_code": N, "message": "..."}
// (HTTP 400, or 401 for a bad key), proves that it refused the message; it
// is classified by status_code, whatever the HTTP status:
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
//	other codes     CodeRejected (the request or the vendor account is
//	                wrong: retrying cannot help), except on an HTTP 5xx:
//	                a code the vendor does not document, or none, does not
//	                say whether the message went out, so CodeOutcomeUnknown
//
// Any other answer is classified by its HTTP status:
//
//	429                   CodeRateLimited, with Retry-After
//	5xx                   CodeOutcomeUnknown: a proxy's 502 or 504 page, an
//	                      empty or HTML body, JSON of another shape; the
//	                      vendor may have taken the message behind it
//	2xx                   CodeOutcomeUnknown: a success that cannot be read,
//	                      or "return": true without a request_id
//	other statuses        CodeRejected
//
// Network failures follow the same rule (internal/vendorhttp makes it for
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
// delivered it; its delivery-report (DLR) callback says that later.
// Webhook takes the callbacks. The vendor's public documentation does
// not describe the callback's fields, so the receiver reads the common
// shape of Indian bulk-SMS DLRs, tolerant in form, strict in meaning:
//
//	POST {callback URL}   a JSON object, an array of them, or {"data": [...]}
//	                      (or a form body; or GET with the same as query
//	                      parameters), each with
//	request_id            the send's request_id (the Result's
//	                      ProviderMessageID): required
//	number                the recipient (mobile, phone, to), 10 digits or
//	                      with the country code; it tells apart the
//	                      numbers of one request
//	status                DELIVERED, DELIVRD, SUCCESS              delivered
//	                      SENT, SUBMITTED, ACCEPTED                sent
//	                      FAILED, UNDELIVERED, UNDELIV, REJECTED,
//	                      REJECTD, EXPIRED, EXPIRD, DND, NDNC,
//	                      BLOCKED, BLACKLISTED, INVALID            failed
//	                      anything else (PENDING, QUEUED, ...)     ignored
//	error_code, description (code, reason, error, message)   the failure's
//	                      code and text: VendorCode "STATUS:code"
//	delivered_at          "2006-01-02 15:04:05" in IST (the vendor's
//	                      zone, assumed when none is given), RFC 3339, or
//	                      Unix seconds or milliseconds (time, timestamp)
//
// Field names are read without regard to case. The vendor signs nothing,
// so the callback URL carries a secret token as its last path segment
// (https://<host>/webhooks/smsgateway/<token>), compared in constant
// time; a wrong or missing token is 401 before the body is read, and
// changes nothing. A body that cannot be read, or a report without a
// request_id, is 400; a body over WebhookConfig.MaxBody is 413; a report
// of an unknown request ID is acknowledged (200) and counted
// (Stats().Unmatched); a report that cannot be applied now is 503, so that
// the vendor calls again.
//
// An undelivered SMS keeps its charge by default: the vendor bills the
// submission (see notify.DefaultRefundPolicy, and
// notify.WithRefundPolicy where your vendor refunds).
//
// Package smsgatewaytest has a fake vendor, on httptest, that checks
// requests the way the vendor does and answers with its bodies, and posts
// delivery reports when a test asks (Server.Report).
package smsgateway
