// Package httpapi serves the notification gateway's JSON-over-HTTP API
// (spec/gateway-api.md, DESIGN.md section 7) as an http.Handler on top of a
// notify.Notifier. It is an optional adapter: applications that embed
// notify need not import it.
//
// Routes, under BasePath (/api/v1):
//
//	POST /sms, /sms/send               SMS (spec 4.1)
//	POST /send-otp                     dual-channel OTP (spec 4.2)
//	POST /email/send                   e-mail (spec 4.3)
//	POST /messenger/send, /messenger/send-otp, /send-messenger   chat (spec 4.4)
//	GET  /balance                      wallet balance (spec 4.5)
//
// Every request is authenticated with "Authorization: <key>" or
// "Authorization: Bearer <key>" through notify.AccountStore.AccountByKey;
// the key selects the account. Bodies are JSON objects of at most 1 MiB
// sent as application/json. Every alias of the spec is accepted (to/numbers,
// message/variables_values, route/rout, domain/website, brand_name/brand);
// a field and its alias with different values is a 400 naming both.
// Mobile numbers, OTP codes and numeric IDs may be JSON strings or JSON
// integers; unknown fields are ignored. The Idempotency-Key header (or the
// idempotency_key field) makes a repeated request return the first
// receipt; the X-Domain header is recorded as the domain when the body has
// none.
//
// Every response is JSON: {"success": true, ...} with the receipt, or
// {"success": false, "error": {"code", "message", "fields"}} with the HTTP
// status given by StatusOf. Every response carries an X-Request-ID.
//
// A send runs detached from the client's connection, bounded by
// WithSendTimeout: a client that hangs up while the vendor call is in
// flight changes nothing about what is sent, charged or recorded. A send
// whose outcome is unknown (the vendor may have the message) answers 202
// with success false, the message_id, status "unknown", the cost that
// stays charged and error code outcome_unknown; a repeat with the same
// Idempotency-Key returns the same answer and never sends again.
//
// Rate limits and the OTP throttle are the Notifier's
// (notify.WithRateLimit, notify.WithOTPThrottle); their refusals answer
// 429 with Retry-After, and only after the request was found valid.
package httpapi
