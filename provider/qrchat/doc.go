// Package qrchat is a notify.Provider for a QR-session chat gateway in the
// style of WAHA (an HTTP API in front of a chat session linked by scanning
// a QR code): the chat channel's "qr" gateway.
//
// Requests carry the key in X-Api-Key and name the session:
//
//	GET  {BaseURL}/api/sessions/{session}   {"name", "status": "WORKING" | "STARTING" | "SCAN_QR_CODE" | "STOPPED" | "FAILED", ...}
//	POST {BaseURL}/api/sendText             {"session", "chatId": "91XXXXXXXXXX@c.us", "text"}
//	POST {BaseURL}/api/sendImage            {"session", "chatId", "file": {"mimetype", "filename", "data"}, "caption"}
//	POST {BaseURL}/api/sendFile             (the same, for documents and other files)
//
// where {BaseURL} is the gateway's root; Config.BaseURL may also be given
// with /api or a send endpoint after it, which is then not repeated.
//
// # Session state
//
// Only a WORKING session can send. Before a send the provider asks for the
// session's status, and trusts a WORKING answer for Config.StatusTTL; any
// other status is CodeUnavailable, so the Notifier may retry and the chat
// channel's auto gateway falls over to the cloud gateway. The question
// sends no message, so an unknown session, a 5xx or a lost answer to it is
// CodeUnavailable too (a refused API key stays CodeRejected). The gateway's own answer to a send
// on a session that stopped meanwhile (HTTP 422, "Session status is not as
// expected") is CodeUnavailable too, and forgets the cached status, as
// does every send whose outcome is unknown.
//
// # Media
//
// Such a gateway would fetch a media URL itself, from inside the
// operator's network, where a URL naming an internal address could reach
// services that were never meant to be public. So the provider fetches the
// file itself, through internal/netguard's guarded client: the address of
// every connection is checked when it is dialed (loopback, private,
// link-local, CGNAT, unspecified, multicast and reserved ranges are
// refused, so DNS rebinding cannot get around the channel's URL check), no
// proxy is used, redirects are re-checked, the body is limited to
// Config.MediaMaxBytes and the fetch to Config.MediaTimeout. The bytes are
// sniffed (a PDF must look like a PDF, an image like an image) and sent as
// base64 "data"; the gateway never sees the URL.
//
// # Results and errors
//
// The message ID of the answer is the Result's ProviderMessageID: "id" as a
// string, or the "_serialized" form of an "id" object, or "key.id",
// depending on the gateway's engine.
//
// Every error says whether the gateway may have the message
// (notify.OutcomeOf), which decides refunds, retries and the chat
// channel's failover:
//
//	session not WORKING (asked before the send, or the
//	gateway's answer naming the session status), unknown
//	session (404), a 5xx or no answer to the status
//	question, a network failure before the request was
//	written whole                                          CodeUnavailable
//	HTTP 429                                               CodeRateLimited
//	API key refused (401, 403), other 4xx                  CodeRejected
//	media refused by the guard, too large, wrong type,
//	or answered 4xx by its server                          CodeRejected
//	media server down or 5xx (before the send)             CodeUnavailable
//	an envelope that cannot be sent                        CodeInvalidArgument
//	HTTP 5xx: the gateway reports its engine's failures
//	as 500 (the engine may have sent the message before
//	it failed), and a proxy's 502 or 504 page says
//	nothing of the gateway behind it                       CodeOutcomeUnknown
//	no complete answer after the request was written (a
//	timeout, a reset, an answer cut short), a 2xx
//	without a message ID                                   CodeOutcomeUnknown
//
// CodeOutcomeUnknown keeps the charge and is never retried nor failed
// over: the recipient could get the message twice. internal/vendorhttp
// makes the rule for network failures for every HTTP provider alike.
//
// Error messages never contain the API key, the OTP or the media URL's
// query.
package qrchat
