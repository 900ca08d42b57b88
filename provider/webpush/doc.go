// Package webpush is a notify.Provider for Web Push: push envelopes
// (push.MessageOf(env)) to a browser's push subscription, through the
// push service its endpoint names (Mozilla autopush, Google's FCM web
// endpoint, Apple's, ...). The push channel (channel/push) hands it the
// envelopes of requests with a Subscription (push.Config.WebPush).
//
// # Wire format
//
// Each Send makes one request to the subscription's endpoint, env.To
// (RFC 8030 section 5),
//
//	POST {endpoint}
//	Authorization: vapid t={JWT}, k={Config.VAPIDPublicKey}
//	Content-Encoding: aes128gcm
//	Content-Type: application/octet-stream
//	TTL: 3600
//	Urgency: high
//
//	{4096 bytes: the encrypted payload}
//
// with
//
//	TTL              the whole seconds of push.Message.TTL (a fraction of a
//	                 second is dropped; the push channel's default is four
//	                 weeks): how long the service keeps the message for an
//	                 offline browser; a negative TTL is CodeInvalidArgument
//	Urgency          push.Message.Urgency (very-low, low, normal, high),
//	                 left out when empty; another is CodeInvalidArgument
//	body             push.Message.Payload(env.ID), the JSON object the
//	                 service worker reads (event.data.json()), encrypted
//	                 for the subscription's keys (RFC 8291): an ephemeral
//	                 P-256 key agreed with the subscription's p256dh key,
//	                 HKDF with its auth secret, AES-128-GCM, one aes128gcm
//	                 record (RFC 8188) padded to MaxRecord (4096) bytes so
//	                 that its size says nothing of the message; the payload
//	                 is at most push.MaxPayload bytes
//	Authorization    VAPID (RFC 8292): a JWT signed with ES256 under
//	                 Config.VAPIDPrivateKey, whose claims are aud the
//	                 endpoint's origin, exp 12 hours ahead and sub
//	                 Config.Subscriber; k is the public key, the one the
//	                 browser subscribed with (PublicKey)
//
// The encryption and the signature are github.com/SherClockHolmes/webpush-go's
// (v1.4.0); the provider gives it the request's values and an HTTP client
// of its own, through which the request goes once, classified by the
// vendor kit (provider/vendorhttp) as every HTTP provider's is.
// testdata/requests holds each shape as sent (golden_test.go).
//
// Before anything is sent, the envelope is checked: a *push.Message
// ("message"), an https endpoint ("to"), the subscription's keys
// ("subscription.keys.p256dh": a P-256 point; "subscription.keys.auth": 16
// bytes), the payload's size ("body"), the TTL and the urgency. A failure
// is CodeInvalidArgument naming the field, and nothing is sent.
//
// # Outcomes
//
// Every error says whether the push service may have the message
// (notify.OutcomeOf), which decides refunds and retries:
//
//	200, 201, 202    accepted; the ProviderMessageID is the Location the
//	                 service answers, the push message resource (RFC 8030
//	                 section 5.1), made absolute against the endpoint; an
//	                 acceptance without a usable Location gets
//	                 LocalIDPrefix and 32 random hex digits, so that every
//	                 accepted message has an ID of its own
//	404, 410         CodeRejected: the subscription no longer exists (the
//	                 user unsubscribed, the browser dropped it). The error
//	                 implements store.Bounce (a hard bounce of env.To), so
//	                 the Notifier puts the endpoint on the account's
//	                 suppression list, and the next push to it is refused
//	                 (CodeSuppressed) before anything is charged
//	401, 403         CodeRejected: the service refused the VAPID
//	                 authorization; the message says to check
//	                 Config.VAPIDPublicKey, VAPIDPrivateKey and Subscriber,
//	                 and that the browser subscribed with PublicKey, never
//	                 repeating a key. Not a bounce: it is the sender's
//	                 configuration, not the subscription, that is wrong
//	413              CodeInvalidArgument on "body": over the service's
//	                 size limit
//	429              CodeRateLimited, with RetryAfter from Retry-After
//	5xx, own error   CodeUnavailable, with RetryAfter from Retry-After:
//	                 the service formed the answer and took nothing
//	5xx, other       CodeOutcomeUnknown (below)
//	other 2xx        CodeOutcomeUnknown: not an acceptance the provider
//	                 knows
//	3xx              CodeRejected: a redirect, not followed
//	other 4xx, 400   CodeRejected
//
// The refusals' cause is an *Error (errors.As) with the status and, from
// the service's own error, its errno, reason and message.
//
// Which 5xx answers are the service's own: by the notify.Provider rule,
// an answer the service formed in its documented error format is a
// certain refusal whatever its status, and any other 5xx leaves the
// outcome unknown, since a proxy or load balancer in front of the service
// may answer so after the service took the message. The service's own
// error is a JSON object of one of the shapes push services answer with,
// and nothing else:
//
//	{"code": 503, "errno": 202, "error": "...", "message": "..."}    Mozilla autopush: code equal to the
//	                                                                 HTTP status, errno a positive integer
//	{"error": {"code": 503, "message": "...", "status": "UNAVAILABLE"}}
//	                                                                 Google's API error: code equal to the
//	                                                                 status, status a word
//	{"reason": "InternalServerError"}                                Apple's push service: reason a word,
//	                                                                 the only field
//
// An empty, cut or unreadable body, a proxy's HTML page, or JSON of
// another shape is not the service's: a 5xx of it is CodeOutcomeUnknown,
// whose charge stands and which is never retried, even a 503 with
// Retry-After. 4xx and 429 answers are refusals whatever their body:
// RFC 8030 gives them their meaning, and nothing is taken on them.
//
// Network failures follow the vendor kit's rule: a failure before the
// request was written whole (a refused dial, DNS, TLS, a context that
// ended first, which stays visible to errors.Is) is CodeUnavailable,
// certain and retried; once the request may have been written, a
// timeout, a reset or closed connection, an answer cut short, unreadable
// or over 64 KiB is CodeOutcomeUnknown. An error of webpush-go before any
// I/O (the keys were checked, so only the system's randomness or a bug)
// is CodeRejected naming the configuration. The provider retries nothing
// itself. Errors never hold a key, the auth secret or the payload.
//
// # Endpoints and the private network (SSRF)
//
// Endpoints come from browsers, through the app's API: anyone can send an
// endpoint of their choosing. So, without Config.HTTPClient, the
// provider's client dials only public addresses (internal/netguard): an
// endpoint must be an https URL that passes netguard's syntax rules (no
// IP literal in any spelling, no local name such as localhost or *.local:
// CodeInvalidArgument on "to", before any I/O, as the push channel
// requires), and every address its name resolves to is checked at dial
// time, so that a name that resolves to a loopback, private, link-local
// or otherwise special address is never dialed (CodeRejected, saying the
// endpoint is not dialed; nothing is sent). The client uses no proxy (a
// proxy would dial for it, unchecked) and follows no redirect (a push
// service answers at the endpoint; a redirect is handed back as the
// answer, a refusal). A Config.HTTPClient is used as it is, and dials
// whatever the endpoint names: it is for tests and for networks whose
// egress the operator controls.
//
// # Testing
//
// Package webpushtest is a strict fake push service on a loopback TLS
// port: its subscriptions hold real keys, it checks the VAPID token and
// the headers as a service does and decrypts every payload, and it
// injects the service's refusals, a gone subscription, a proxy's page, a
// lost answer and latency.
package webpush
