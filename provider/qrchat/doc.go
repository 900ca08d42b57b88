// Package qrchat is a notify.Provider for a QR-session chat gateway in the
// style of WAHA (an HTTP API in front of a chat session linked by scanning
// a QR code): the chat channel's "qr" gateway.
//
// Requests carry the key in X-Api-Key and name the session:
//
//	GET  {BaseURL}/api/sessions/{session}   {"name", "status": "WORKING" | "STARTING" | "SCAN_QR_CODE" | "STOPPED" | "FAILED", ...}
//	GET  {BaseURL}/api/contacts/check-exists?phone=91XXXXXXXXXX&session={session}
//	                                        {"numberExists": true, "chatId": "91XXXXXXXXXX@c.us"} (Config.CheckNumber only)
//	POST {BaseURL}/api/sendText             {"session", "chatId": "91XXXXXXXXXX@c.us", "text"}
//	POST {BaseURL}/api/sendImage            {"session", "chatId", "file": {"mimetype", "filename", "data"}, "caption"}
//	POST {BaseURL}/api/sendVideo            {"session", "chatId", "file": {...}, "caption", "asNote": false, "convert": false}
//	POST {BaseURL}/api/sendFile             (as sendImage, for documents and other files)
//
// where {BaseURL} is the gateway's root; Config.BaseURL may also be given
// with /api or a send endpoint after it, which is then not repeated.
//
// Media go by kind: images to sendImage, videos to sendVideo (a playable
// video, not a round video note, not converted), documents and anything
// else to sendFile, where they arrive as documents.
//
// testdata/golden holds the request bodies, each naming the WAHA page
// (and the DTO of devlikeapro/waha) that gives its shape
// (golden_test.go); the tests' fake gateway refuses what WAHA refuses.
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
// Config.MediaMaxBytes and the fetch to Config.MediaTimeout. The first 512
// bytes are sniffed (a PDF must look like a PDF, an image like an image)
// before anything is sent; the file then goes as base64 "data"; the
// gateway never sees the URL.
//
// The file is streamed: the request's JSON body is written as the media
// arrive (through an io.Pipe, base64-encoded on the way, sent with
// chunked transfer encoding), so a send holds a few 32 KiB buffers and
// never the whole file or its base64 copy, whatever its size. Eight
// concurrent sends of 16 MiB files peak at a few MiB of heap, where
// reading each file whole peaked at about 600 MiB
// (BenchmarkMediaPeakHeap, stream and whole). No memory budget is needed
// between sends for that reason. A source that fails (or a file that
// turns out larger than the limit) after the request has started makes
// the provider abort the request before its last chunk: the gateway
// never receives a whole body, cannot parse it and takes nothing, so the
// send is certainly not accepted (the media's error: CodeUnavailable, or
// CodeRejected for the size).
//
// # Number check
//
// The gateway takes a message for a number that is not on the chat
// network and reports success; the message is never delivered. With
// Config.CheckNumber (off by default: it costs a request per send) the
// provider asks check-exists first: a number that does not exist is
// CodeRejected on the field "to" and nothing is sent (certainly not
// accepted, so refunded); a check that fails is CodeUnavailable and
// nothing is sent. The message goes to the chatId of the answer, which
// may differ from the number's (the network keeps some countries'
// numbers in another form).
//
// # Editions
//
// WAHA comes as Core, the free edition, and Plus. Core sends text only:
// it answers every image, video or document with HTTP 422 ("The feature
// is available only in Plus version ..."). Config.Edition says which one
// the gateway runs (EditionPlus by default). For EditionCore,
// Config.CoreMedia chooses what becomes of an envelope with media:
//
//   - MediaRefuse (the default) refuses it in Send before anything is
//     fetched or sent: CodeInvalidArgument on media_url, so nothing is
//     charged. The provider sees no request before Send, so this is the
//     earliest place; Provider.SupportsMedia (false for Core) lets the
//     chat channel refuse media for this gateway when it prepares a send,
//     and send a file by the cloud gateway instead under auto.
//   - MediaAsLink sends the caption and, on a line of its own, the media
//     URL as text through /api/sendText with "linkPreview": false (a
//     preview would have the gateway fetch the URL from inside the
//     operator's network). The file is not fetched.
//
// A provider left at EditionPlus in front of a Core gateway gets the 422
// as CodeRejected, telling the operator to set EditionCore.
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
//	API key refused (401, 403), other 4xx, media on a
//	Core gateway (422 "available only in Plus version")    CodeRejected
//	media on an EditionCore provider with MediaRefuse      CodeInvalidArgument
//	number not on the network (Config.CheckNumber)         CodeRejected, field "to"
//	number check failed (no answer, 5xx, unreadable)       CodeUnavailable
//	HTTP 500 with an engine error known to refuse the
//	recipient before sending (invalid wid, no LID for
//	the number, a recipient with a device part; the
//	table engineRefusals in engine.go, with sources)       CodeRejected
//	media refused by the guard, too large, wrong type,
//	or answered 4xx by its server                          CodeRejected
//	media server down or 5xx (before the send), or its
//	body failing while it is streamed (the request is
//	aborted before it is whole)                            CodeUnavailable
//	an envelope that cannot be sent                        CodeInvalidArgument
//	the gateway's own error answer on a 5xx other than
//	500 (its JSON with that statusCode): an HTTP error it
//	raised itself, before sending                          CodeUnavailable
//	                                                       (501: CodeRejected)
//	other HTTP 5xx: the gateway reports its engine's
//	failures as 500, an answer that it does not know
//	(the engine may have sent the message before it
//	failed), and a proxy's 502 or 504 page says nothing
//	of the gateway behind it                               CodeOutcomeUnknown
//	no complete answer after the request was written (a
//	timeout, a reset, an answer cut short), a 2xx
//	without a message ID                                   CodeOutcomeUnknown
//
// CodeOutcomeUnknown keeps the charge and is never retried nor failed
// over: the recipient could get the message twice. provider/vendorhttp
// makes the rule for network failures for every HTTP provider alike.
//
// Error messages never contain the API key, the OTP or the media URL's
// query.
//
// # Delivery reports
//
// The gateway's answer to a send says only that its engine took the
// message. What became of it comes later, in "message.ack" webhook
// events, which Webhook turns into notify.DeliveryReports for
// WebhookConfig.Reporter, usually the Notifier. Configure the session's
// webhook on the gateway (config.webhooks of the session, or the
// WHATSAPP_HOOK_* variables) with the event and an HMAC key:
//
//	{"url": "https://app.example.com/webhooks/waha", "events": ["message.ack"], "hmac": {"key": "{WebhookConfig.Secret}"}}
//
// The gateway then posts each event on its own:
//
//	POST {url}   X-Webhook-Hmac: {hex HMAC-SHA512 of the raw body, keyed by hmac.key}
//	             X-Webhook-Hmac-Algorithm: sha512
//	{"id": "evt_...", "timestamp": {Unix milliseconds}, "event": "message.ack",
//	 "session": "default", "engine": "WEBJS" | "NOWEB" | "GOWS", "me": {...},
//	 "payload": {"id": "true_91XXXXXXXXXX@c.us_3EB0...", "from", "to", "participant",
//	   "fromMe": true, "ack": -1 | 0 | 1 | 2 | 3 | 4,
//	   "ackName": "ERROR" | "PENDING" | "SERVER" | "DEVICE" | "READ" | "PLAYED",
//	   "error": {"code", "reason", ...} (newer gateways, on ERROR)}}
//
// Ack levels become states (ackName stands in for a missing ack):
//
//	1 SERVER             sent: the network's server has the message
//	2 DEVICE             delivered
//	3 READ, 4 PLAYED     read
//	-1 ERROR             failed, with VendorCode "ack:-1" and the payload's
//	                     error as its text (else "the gateway reported an
//	                     error delivering the message"); the Notifier
//	                     refunds it, as the chat channel says
//	                     (chat.Channel.Refund)
//	0 PENDING, others    ignored
//
// Only acks of messages the session sent (fromMe) are reports. Other
// events (message.ack.group among them: the provider sends to no group),
// and events of sessions other than WebhookConfig.Session when it is set,
// are acknowledged and ignored. A report's time is the event's timestamp
// (seconds are accepted too; without one, the time it arrives); the
// payload's own timestamp, the message's, is not read. Its recipient is
// the chat of the message ID when that is a phone chat (not a group, not
// a @lid address), so that it names only the message sent to that
// number; "from" is not read, since WEBJS puts the session's own number
// there.
//
// The gateway names a message by its serialized ID,
// <fromMe>_<chat>_<id>, whatever its engine, while the record keeps what
// the send answered (see Results and errors): the same serialized ID with
// WEBJS, the bare <id> with NOWEB and GOWS. So a report is handed over
// under the serialized ID first and, when no record has that (NotFound,
// or not yet while a send is in flight: notify.ErrNotRecordedYet), once
// more under the bare ID. The reverse cannot be done (a bare ID does not say
// its chat), which is why the provider keeps the ID exactly as the send
// answered it. The gateway echoes no reference of ours, so the acks of a
// message whose send had an unknown outcome (no ID in its record) are
// unmatched: it stays unknown until an operator settles it.
//
// WebhookConfig.Secret is required: a failed message is refunded, so an
// unauthenticated receiver would let anyone who reaches it give messages
// away. An event without X-Webhook-Hmac of its very body under the key
// (compared in constant time; an X-Webhook-Hmac-Algorithm other than
// sha512 cannot be checked and is refused too) is answered 401 before its
// body is read as JSON, and changes nothing. Set the same key, 32 random
// bytes or more, on both sides. The signature covers the body but
// no time, so a captured event can be sent again; that changes nothing:
// a record moves only forward and money moves at most once (see
// notify.Notifier.Report).
//
// Answers: 200 once the report was taken, for the ack of a message no
// record has (counted in Stats().Unmatched; it is not retried) and for an
// event ignored (Stats().Ignored); 401, before a byte of the body is read,
// for an X-Webhook-Hmac that is missing or not 128 hex digits, and after
// it for a wrong one; 400 for a body that is not a JSON event, 415 for a
// Content-Type that is not JSON, 413 for one over WebhookConfig.MaxBody (1
// MiB), 405 for a method other than POST; 503 when the report could not be
// applied now (the store failed, the message's own send is still running,
// or no record has its ID yet while a send is in flight, which it may have
// outrun), or while forged events have spent the receiver's budget of
// unauthenticated reading (1 MiB a second, in bursts of 8 MiB), so that
// the gateway sends the event again, as it does for an answer of 5xx or
// none (WAHA: 15 attempts, 2 seconds apart, by default). The secret never
// appears in answers or errors.
package qrchat
