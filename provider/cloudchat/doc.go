// Package cloudchat is a notify.Provider for the official cloud messaging
// API of the chat network (the Graph-style "Cloud API"): the chat
// channel's "cloud" gateway.
//
// Each Send is one request,
//
//	POST {BaseURL}/{Version}/{PhoneNumberID}/messages
//	Authorization: Bearer {Token}
//
// where {BaseURL} is the API's root: Config.BaseURL may also be given
// with the version, or as that whole endpoint, and the version and phone
// number ID in it are then taken (or checked) rather than repeated.
//
// with a JSON body of messaging_product "whatsapp", recipient_type
// "individual", the recipient as country code and number ("91XXXXXXXXXX"),
// and one of:
//
//   - text: {"body", "preview_url": false} for the chat.Message's Text
//     (the envelope's Content, chat.MessageOf(env));
//   - template: {"name", "language": {"code"}, "components": [...]} for
//     its Template (see Templates below);
//   - document: {"link", "caption", "filename"} and image / video:
//     {"link", "caption"}, for its Media. The vendor fetches the
//     link itself, from its own network, so no file passes through here.
//
// A success answers {"messages": [{"id": "wamid..."}]}; that ID is the
// Result's ProviderMessageID.
//
// The API version is Config.Version, default DefaultVersion (v25.0): the
// vendor retires each version about two years after its release, so an
// app that pins one must move on with it.
//
// # Templates
//
// A chat.Template becomes the components the vendor documents
// (cloud-api/guides/send-message-templates; testdata/requests holds the
// exact bodies, with each source named in golden_test.go):
//
//   - "header": one parameter, text (HeaderText, named by HeaderName in a
//     template approved with named parameters) or the image, document or
//     video link of HeaderURL;
//   - "body": Params as positional text parameters ({{1}}, {{2}}, ...), or
//     NamedParams as text parameters with "parameter_name", in the order
//     of their names;
//   - one "button" component per chat.Button: {"sub_type": "url" |
//     "quick_reply" | "copy_code", "index": "<n>", "parameters": [...]}
//     with a text, payload or coupon_code parameter.
//
// An authentication template, the only kind the vendor lets carry a
// one-time code, has a body of one parameter, the code, and an OTP button
// (copy code or one-tap) that needs the code too, as a URL button at
// index 0; without it the vendor answers 131008 "Button at index 0 of type
// Url requires a parameter". Free text reaches only recipients who wrote
// in the last 24 hours, so the chat channel sends a code to this provider
// only as that template: name yours in chat.Config.CloudOTPTemplate (and
// CloudOTPLanguage). Without one, codes go by the QR gateway under auto,
// and a code for the cloud gateway alone is CodeInvalidArgument naming
// that setting, before anything is charged (package channel/chat).
//
// Values the vendor would refuse are refused before the request as
// CodeInvalidArgument naming the field: an empty parameter, one with a
// line break, a tab or more than four spaces in a row, Params and
// NamedParams together, a name that is not lower-case letters, digits and
// '_', a button index outside 0-9 or given twice, an empty URL suffix, a
// quick-reply payload over 128 characters, a coupon code over 15.
//
// # Errors
//
// Every error says whether the vendor may have the message
// (notify.OutcomeOf), which decides refunds and retries. Errors answer
// {"error": {"message", "type", "code", "error_subcode", "error_data":
// {"details"}, "fbtrace_id"}}. That error object is the vendor's own
// answer: it took nothing, so it is a certain refusal whatever the HTTP
// status, classified by code, following the vendor's error-code
// reference:
//
//	130429, 131056, 131048, 4, 80007  CodeRateLimited (131056, the pair rate
//	                                  limit, with RetryAfter 6s)
//	2, 131016, 133004                 CodeUnavailable: the service is down
//	                                  or overloaded for a while, the message
//	                                  was not taken; retried
//	131000                            CodeUnavailable: "Something went
//	                                  wrong", documented as the message
//	                                  failing to send, to be tried again
//	131047                            CodeRejected: outside the 24-hour
//	                                  customer service window; send a template
//	131008                            CodeRejected: a required parameter is
//	                                  missing (an OTP button's code)
//	132000, 132001, 132005, 132007,   CodeRejected: the template does not
//	132012, 132015, 132016, 132018    exist, or does not match the parameters
//	190                               CodeRejected: bad or expired token
//	10, 200, 131005                   CodeRejected: the token lacks permission
//	131026 and other codes on a 4xx   CodeRejected (1, "API Unknown", too)
//	other codes on a 429              CodeRateLimited
//	other codes on a 5xx              CodeUnavailable (1 too): a temporary
//	                                  refusal, retried
//
// An answer without the error object (a proxy's HTML page, an empty body,
// JSON of another shape) is not the vendor's: CodeRateLimited on a 429
// (with Retry-After), CodeOutcomeUnknown on a 5xx (the vendor may have
// taken the message behind a proxy's 502 or 504), and CodeRejected
// otherwise. A 2xx without a message ID is CodeOutcomeUnknown.
//
// A network failure before the request was written whole (a refused dial,
// DNS, TLS, a context that ended first) is CodeUnavailable, certain and
// retried; one after it (a timeout, a reset, an answer cut short or
// unreadable) is CodeOutcomeUnknown: the charge stands and the Notifier
// never retries it, nor does the chat channel fall over to another
// gateway. provider/vendorhttp makes this rule for every HTTP provider
// alike. An envelope that cannot be sent is CodeInvalidArgument, before
// any I/O. CheckHealth sends nothing, so its failures that would be of
// unknown outcome for a send are CodeUnavailable.
//
// An answer with the vendor's error object is also an *Error, wrapped by
// the *notify.Error: errors.As reaches its Code, Subcode, TraceID and
// text, so an app can act on a code without parsing messages (see
// ExampleError): 131047 asks for a template, 131008 names a missing
// parameter. Error
// messages carry the vendor's message, code and fbtrace_id (for support
// requests) but never the token or the envelope's OTP.
//
// # Delivery reports
//
// The vendor's 200 is not a delivery: it reports what became of each
// message later, in status webhooks, and some refusals come only that way
// (free text outside the customer service window is answered 200 and
// reported failed with 131047; a number that cannot receive messages,
// 131026, too). Webhook takes them:
//
//	GET  {callback}?hub.mode=subscribe&hub.verify_token={VerifyToken}&hub.challenge={n}
//	     the subscription handshake: answered 200 with the challenge when
//	     the token is WebhookConfig.VerifyToken, else 401
//	POST {callback}   X-Hub-Signature-256: sha256={hex HMAC-SHA256 of the raw body, keyed by the app secret}
//	     {"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages",
//	       "value": {"statuses": [{"id": "wamid...", "status": "sent" | "delivered" | "read" | "failed",
//	       "timestamp": "<unix seconds>", "recipient_id": "91XXXXXXXXXX",
//	       "biz_opaque_callback_data": "...", "errors": [{"code", "title", "error_data": {"details"}}]}]}}]}]}
//
// A notification whose signature is missing or wrong is refused with 401
// before its body is read as JSON, and changes nothing; the signature is
// compared in constant time. Each status becomes a notify.DeliveryReport
// (sent, delivered, read, failed; "played" counts as read; others, such
// as deleted, are ignored) handed to WebhookConfig.Reporter, usually the
// Notifier: the message moves on, a failure is refunded (the chat
// channel's notify.ReportHandler says so), and a
// repeated or late report changes nothing. Each message is sent with
// notify.MessageRef as its biz_opaque_callback_data, which the vendor
// echoes, so a status also names a message whose send had an unknown
// outcome (its wamid never reached us).
//
// A failure the QR gateway can overcome (131047, outside the window;
// 131049, the vendor's per-recipient marketing limit; 130472, an
// experiment) is reported with Failover set, so that a message sent with
// the auto gateway goes once more through the QR gateway (see
// notify.Notifier.Report); failoverCodes in webhook.go is the list, with
// the reasons.
//
// Answers: 200 once every status was taken, including statuses of messages
// no record has (counted in Stats().Unmatched: a vendor retries
// unacknowledged webhooks for days), unless a send is in flight whose
// wamid the record may not have yet (then 503, below); 401, before a byte
// of the body is read, for a notification whose X-Hub-Signature-256 is
// missing or not of the vendor's shape, and after it for a wrong one; 400
// for a body that is not JSON, 415 for a Content-Type that is not JSON;
// 413 for one over WebhookConfig.MaxBody (default 3 MiB, the vendor's
// documented largest), refused unread when its Content-Length says so; 503
// when a report could not be applied now (the store failed, the message's
// own send has not finished, or no record has its wamid yet while a send
// is in flight, which the status may have outrun), or while forged
// notifications with signatures of the right shape have spent the
// receiver's budget of unauthenticated reading (1 MiB a second, in bursts
// of 8 MiB), so that the vendor sends it again. Package cloudchattest is a
// fake vendor that posts these webhooks.
package cloudchat
