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
// # Session state
//
// Only a WORKING session can send. Before a send the provider asks for the
// session's status, and trusts a WORKING answer for Config.StatusTTL; any
// other status is CodeUnavailable, so the Notifier may retry and the chat
// channel's auto gateway falls over to the cloud gateway. The gateway's
// own answer to a send on a session that stopped meanwhile (HTTP 422,
// "Session status is not as expected") is CodeUnavailable too, and
// forgets the cached status.
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
// depending on the gateway's engine. Errors:
//
//	session not WORKING, unknown session (404), HTTP 5xx,
//	network failure before the request was sent          CodeUnavailable
//	HTTP 429                                             CodeRateLimited
//	API key refused (401, 403), other 4xx                CodeRejected
//	media refused by the guard, too large, wrong type,
//	or answered 4xx by its server                        CodeRejected
//	no answer after the request was sent                 a bare error (the
//	                                                     message may have
//	                                                     gone; not retried)
//
// Error messages never contain the API key, the OTP or the media URL's
// query.
package qrchat
