// Package httpapi serves the notification gateway's JSON-over-HTTP API
// (its full reference is docs/api.md, and the handler serves an OpenAPI
// 3.1 document at GET /api/v1/openapi.json) as an http.Handler on top of a
// notify.Notifier. It is an optional adapter: applications that embed
// notify need not import it.
//
// Routes, under BasePath (/api/v1):
//
//	POST /sms, /sms/send               SMS
//	POST /send-otp                     dual-channel OTP
//	POST /email/send                   e-mail
//	POST /messenger/send, /messenger/send-otp, /send-messenger   chat
//	POST /push, /push/bulk, /push/confirm   push notifications, beyond the spec (push.go)
//	GET  /balance                      wallet balance
//	GET  /messages/{id}                a message's record (another account's is 404)
//	DELETE /messages/{id}              cancel a queued or scheduled message (refunded)
//	GET  /openapi.json                 this API's OpenAPI 3.1 document, without a key
//
// WithVerifications adds the verifications of package verify, beyond the
// spec: POST /verifications (start: a code by SMS and chat at once),
// POST /verifications/{id}/check, POST /verifications/{id}/resend,
// GET and DELETE /verifications/{id}. Their bodies refuse unknown keys
// and the Idempotency-Key, and no answer or log line carries a code.
//
// Recipient preferences, beyond the spec (issue 48): every send body
// (/sms, /sms/bulk, /send-otp, /email/send, the chat routes, and the steps
// of a chat's fallback, which take the chat's unless they name their own)
// takes an optional "category", a category the account defines
// (store.Category), put in the request's Category. A recipient who
// declined it on the channel, or has not allowed an opt-in one there, is
// refused 422 declined (notify.CodeDeclined) before anything is charged;
// a category the account does not define is a 400 naming category.
// WithPreferences serves the account's categories and its recipients'
// choices, and each recipient's locale, for an app's settings screen:
// GET /categories, POST /preferences/lookup and POST /preferences, the
// recipient always in the body, never in a URL.
// WithPreferenceLinks adds POST /preferences/link: a signed, expiring
// link to the recipient's own preference page (package prefpage).
//
// WithPush serves the push channel's device registry (POST
// /push/subscriptions, /push/subscriptions/lookup and
// /push/subscriptions/delete: devices registered for an app's users,
// whom POST /push/bulk's "recipients" names) and GET
// /push/vapid-public-key, the key a browser subscribes with, without an
// API key.
//
// Queued and scheduled sends, beyond the spec, need a Notifier with a
// queue (notify.WithQueue). On the single-message send endpoints (/sms,
// /sms/send, /email/send, /messenger/send, /send-messenger, /push) a body field
// send_at, an RFC 3339 time with its offset, schedules the send
// (queued.Sender.SendAt), and, with WithRespondAsync, the header "Prefer:
// respond-async" (RFC 7240) queues it (queued.Sender.Enqueue, answered with
// "Preference-Applied: respond-async"); send_at wins over the header.
// Both are charged at once and answered 202 with the receipt, status
// "scheduled" (with send_at, in UTC) or "queued"; a worker of the queue
// sends them. The OTP endpoints (/send-otp, /messenger/send-otp) refuse a
// send_at (400: a code must go at once) and ignore the preference, as do
// WithRoute's endpoints and a Handler without WithRespondAsync. Without a
// queue a send_at is 503. DELETE /messages/{id} cancels a queued or
// scheduled message no worker has taken (queued.Sender.Cancel): 200 with its
// record, failed with error code canceled and refunded; 409 once it is
// taken or settled.
//
// WithRoute adds a send endpoint of your own: a path and a Decoder that
// turns its JSON body into the notify.Request to send, such as a request
// of a channel of your own (examples/pushchannel does this). It is
// authenticated, limited and answered as the built-in ones are.
//
// Every request is authenticated with "Authorization: <key>" or
// "Authorization: Bearer <key>" through store.Accounts.AccountByKey;
// the key selects the account. Build the Notifier on
// RequestAccounts(accounts) and its sends through the API take that
// account from the request instead of reading it again. Bodies are JSON objects of at most 1 MiB
// sent as application/json. Every alias the API defines is accepted (to/numbers,
// message/variables_values, route/rout, domain/website, brand_name/brand);
// a field and its alias with different values is a 400 naming both.
// Mobile numbers, OTP codes and numeric IDs may be JSON strings or JSON
// integers; unknown fields are ignored (but by the verification routes). The Idempotency-Key header (or the
// idempotency_key field) makes a repeated request return the first
// receipt; the X-Domain header is recorded as the domain when the body has
// none.
//
// Input is read strictly, so that the gateway never acts on something
// other than what the client believes it sent; each of these is a 400
// (invalid_argument) that names what is wrong, where encoding/json alone
// would guess:
//
//   - a key given twice in any object of the body, nested ones included
//     ("to" twice, or a name twice in "variables"): the error field is the
//     key's path, such as "to" or "variables.NAME";
//   - a key that matches a field only when case is ignored ("TO", "Message"),
//     also in the name/value pairs of a "variables" array: keys are
//     case-sensitive, and the error suggests the field; a key that matches
//     no field in any case is ignored as before;
//   - a string, key or value, holding invalid UTF-8 or a lone UTF-16
//     surrogate escape (I-JSON, RFC 7493), instead of turning it into
//     U+FFFD;
//   - the Authorization, Content-Type, Idempotency-Key or X-Domain header
//     sent twice, checked before the API key so that the answer never
//     tells which of two keys is valid.
//
// Every response the Handler writes is JSON: {"success": true, ...} with
// the receipt, or {"success": false, "error": {"code", "message",
// "fields"}} with the HTTP status given by StatusOf. Every response
// carries an X-Request-ID (the client's, when sane, else a new one), which
// a send's context carries too (RequestID; NewLogHandler adds it to log
// records). Paths are matched exactly: one that is not
// clean ("//sms", "/api/v1/./sms", a trailing slash) is a 404, not
// ServeMux's redirect. A request line and headers over WithMaxHeaderBytes
// (64 KiB) are a 431; the http.Server's own MaxHeaderBytes must be larger,
// since net/http answers heads over it, and other malformed requests, in
// plain text before any Handler runs. A body over WithMaxBodyBytes is a
// 413 with "Connection: close", sent after the rest of the body (up to
// DrainFactor times the limit) was read, so that a client that writes its
// whole body before reading gets the answer rather than a reset; every
// other refusal (401, 404, 405, 415, 431, 400) reads the unread rest of
// the body to the same bound before it answers, for the same reason.
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
