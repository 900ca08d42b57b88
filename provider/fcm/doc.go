// Package fcm is a notify.Provider for Firebase Cloud Messaging's HTTP v1
// API: push envelopes (push.MessageOf(env)) to FCM registration tokens,
// the push channel's Config.FCM.
//
// Each Send is one request,
//
//	POST {BaseURL}/v1/projects/{ProjectID}/messages:send
//	Authorization: Bearer {access token}
//	Content-Type: application/json; charset=utf-8
//	Accept: application/json
//
// whose body is FCM's Message (testdata/requests holds each shape as
// sent; golden_test.go names its source):
//
//	{"message": {
//	  "token": env.To,
//	  "notification": {"title", "body", "image"},
//	  "data": {...Data, "message_id": env.ID},
//	  "android": {"ttl": "<TTL seconds>s", "priority": "HIGH" | "NORMAL"},
//	  "webpush": {"headers": {"TTL": "<TTL seconds>", "Urgency": "<urgency>"},
//	              "fcm_options": {"link": Link}},
//	  "apns": {"headers": {"apns-expiration": "<now + TTL, unix seconds>",
//	                       "apns-priority": "10" | "5"}}}}
//
// mapped from the push.Message so:
//
//	Title, Body, Image   notification.title, body and image, each left out
//	                     when empty (and notification when all are); FCM
//	                     shows them on Android, iOS and the web alike
//	Data                 data, with push.MessageIDKey ("message_id") set
//	                     to env.ID, so that the app can confirm delivery
//	                     (the channel reserves that key); left out when
//	                     both are empty
//	TTL                  android.ttl, a protobuf Duration in whole seconds
//	                     ("3600s"); the Web Push TTL header; and APNs's
//	                     apns-expiration, the Unix time it ends (Config.Now
//	                     plus the TTL). Zero is push.DefaultTTL (four
//	                     weeks, FCM's default and its longest); one over
//	                     four weeks or negative is CodeInvalidArgument on
//	                     "ttl"
//	Urgency              high: android priority HIGH and apns-priority 10
//	                     (deliver now, waking the device); very-low, low
//	                     and normal: NORMAL and 5 (FCM may batch them to
//	                     save battery). The Web Push Urgency header carries
//	                     the urgency as it is (RFC 8030's four values)
//	Link                 webpush.fcm_options.link, the page a web
//	                     notification opens; FCM takes https only, so
//	                     anything else is CodeInvalidArgument on "link".
//	                     Android and iOS have no such field: an app that
//	                     opens a deep link reads it from Data
//	Keys                 not used: an FCM token has none
//
// An envelope without push content is CodeInvalidArgument on "message",
// one without a token on "token"; nothing is sent for either. FCM answers
// 200 {"name": "projects/{project}/messages/0:1500415314455276%31bd..."};
// the name becomes the Result's ProviderMessageID (a success without one
// is CodeOutcomeUnknown). FCM reports no delivery: the app confirms it
// (package channel/push).
//
// # Authentication
//
// FCM takes OAuth2 access tokens of Scope
// (https://www.googleapis.com/auth/firebase.messaging). With
// Config.CredentialsJSON, a service account's JSON key, Send signs a JWT
// (RS256 under the key's private_key; iss its client_email, aud and the
// endpoint its token_uri, scope Scope, an hour's lifetime) and trades it
// at token_uri for an access token, the JWT-bearer grant of RFC 7523,
// through golang.org/x/oauth2's jwt flow (google.JWTConfigFromJSON). With
// Config.TokenSource, the source gives the tokens instead.
//
// The sends share one token, cached with oauth2.ReuseTokenSource's rule:
// it is reused until it is within oauth2's expiry margin (10 seconds) of
// its expiry, so an hour's token serves every send of most of an hour with
// one token request. When it must be renewed, one send fetches it and
// those arriving meanwhile wait for that fetch; the fetch runs within the
// send's context (and the HTTP client's timeout), on the same HTTP
// client as the sends (oauth2.HTTPClient), and a send whose context ends
// stops waiting. FCM's 401 UNAUTHENTICATED on a token (revoked, or ended
// early) drops it, so the next send fetches another.
//
// A token request sends no message, so its failures are certain: the
// token endpoint's refusal of the credentials (invalid_grant,
// invalid_client, unauthorized_client: a deleted key, a disabled
// account) is CodeRejected naming Config.CredentialsJSON, another OAuth2
// error CodeRejected, a 429 CodeRateLimited, and the network, a 5xx, or
// an answer that cannot be read CodeUnavailable, which the Notifier
// retries. The key, the signed assertion and the access tokens never
// appear in errors: New names a bad key's field, never its value, and a
// token endpoint's text that quotes the assertion has it replaced.
//
// # Errors
//
// Every error says whether FCM may have the message (notify.OutcomeOf),
// which decides refunds and retries. FCM answers errors in Google's
// format,
//
//	{"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND",
//	  "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"},
//	              {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field", "description"}]}]}}
//
// FCM's own answer that it took nothing: a certain refusal whatever the
// HTTP status, whose cause is an *Error (errors.As) with the status, FCM's
// errorCode, the message and the first field violation. By the errorCode,
// then Google's status:
//
//	UNREGISTERED (404)            CodeRejected, and a hard bounce (below)
//	INVALID_ARGUMENT (400)        naming message.token: CodeRejected and a
//	                              hard bounce; naming a field of the push
//	                              request (notification title, body or
//	                              image, data, webpush link, android ttl):
//	                              CodeInvalidArgument on that field
//	                              (title, body, image, data, link, ttl);
//	                              otherwise CodeRejected
//	SENDER_ID_MISMATCH (403)      CodeRejected: the token is of another
//	                              Firebase project than Config.ProjectID
//	QUOTA_EXCEEDED (429)          CodeRateLimited, RetryAfter from
//	                              Retry-After
//	UNAVAILABLE (503)             CodeUnavailable, RetryAfter from
//	                              Retry-After; retried
//	INTERNAL (500)                CodeUnavailable: FCM formed the answer and
//	                              took nothing; retried
//	THIRD_PARTY_AUTH_ERROR (401)  CodeRejected: FCM's own credentials for
//	                              APNs or Web Push (the Firebase project's
//	                              APNs key, web credentials) were refused
//	UNAUTHENTICATED, no errorCode CodeUnavailable: FCM refused the access
//	(401)                         token; the token is dropped, the next
//	                              attempt fetches a new one
//	PERMISSION_DENIED (403)       CodeRejected: the project, or the
//	                              account's role or scope, or the API is
//	                              not enabled for the project
//	NOT_FOUND without             CodeRejected, naming ProjectID and
//	UNREGISTERED                  BaseURL; not a bounce
//	RESOURCE_EXHAUSTED            CodeRateLimited, with Retry-After
//	other codes                   by the HTTP status: 429 CodeRateLimited,
//	                              5xx CodeUnavailable, else CodeRejected
//
// Any other answer is not FCM's (vendorhttp.Foreign): 429 CodeRateLimited
// with Retry-After; a 5xx (a proxy's 502 or 504 page, an empty, cut or
// HTML body, JSON of another shape) and a 2xx that cannot be read are
// CodeOutcomeUnknown, FCM may have taken the message behind it; anything
// else (a redirect included: the default client follows none) is
// CodeRejected. Network failures follow provider/vendorhttp's rule: a
// failure before the request was written whole (a refused dial, a context
// that ended first, which stays visible to errors.Is) is CodeUnavailable;
// once it may have been written (a timeout, a reset, an answer cut short
// or over 64 KiB) CodeOutcomeUnknown, whose charge stands and which is
// never retried. The provider retries nothing itself.
//
// # Suppression
//
// FCM's UNREGISTERED means the token will never receive a message again
// (the app was uninstalled, its data cleared, or the token expired after
// months offline), and an INVALID_ARGUMENT naming message.token that FCM
// does not take it at all. Their errors implement store.Bounce (a hard
// bounce of the envelope's token), so the Notifier refunds the push and
// puts the token on the account's suppression list: the next push to it
// is refused with CodeSuppressed before it is charged or sent. No other
// error is a bounce: a 404 for a wrong project, a SENDER_ID_MISMATCH, a
// field-less INVALID_ARGUMENT may be the sender's configuration or
// message, not the token.
//
// # Health
//
// CheckHealth gets a token (the cached one, or a new one): nil when the
// credentials work. It sends FCM nothing.
//
// Package fcmtest is a strict fake of FCM and of the token endpoint on
// httptest, with a service account of its own, injected failures, and
// what it received.
package fcm
