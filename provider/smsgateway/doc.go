// Package smsgateway is a notify.Provider for SMS gateways that speak the
// Fast2SMS-style bulk API, the SMS channel's vendor.
//
// Each Send is one request,
//
//	POST {BaseURL}/dev/bulkV2
//	authorization: {APIKey}
//	Content-Type: application/json
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
// true, whatever the HTTP status; errors answer {"return": false,
// "status_code": N, "message": "..."} (HTTP 400, or 401 for a bad key) and
// are classified by status_code:
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
//	                wrong: retrying cannot help), or CodeUnavailable when
//	                the HTTP status is 5xx
//
// A body that is not the vendor's JSON is classified by the HTTP status:
// 5xx is CodeUnavailable, 429 CodeRateLimited (with Retry-After), other
// statuses CodeRejected, and a 2xx whose body cannot be read or parsed is
// CodeInternal, since the vendor may have sent the message.
//
// Network failures are retried only when the message certainly did not
// reach the vendor: a failure before the request was written, or an
// attempt timeout that struck then, is CodeUnavailable (the ended context
// stays visible to errors.Is). Once the request was written the outcome is
// unknown, and a retry could send the SMS twice: such failures are the
// ended context's error, CodeDeadlineExceeded for a network timeout, and a
// bare (unclassified) error otherwise, none of which the Notifier retries,
// so the charge is refunded and the caller decides. internal/vendorhttp
// makes this rule, for every HTTP provider alike. The same holds when the vendor answers success without a
// request_id.
//
// Balance reads the vendor wallet (POST {BaseURL}/dev/wallet), so that the
// host can watch it; CheckHealth uses the same call.
//
// Package smsgatewaytest has a fake vendor, on httptest, that checks
// requests the way the vendor does and answers with its bodies.
package smsgateway
