// Package cloudchat is a notify.Provider for the official cloud messaging
// API of the chat network (the Graph-style "Cloud API"): the chat
// channel's "cloud" gateway.
//
// Each Send is one request,
//
//	POST {BaseURL}/{Version}/{PhoneNumberID}/messages
//	Authorization: Bearer {Token}
//
// with a JSON body of messaging_product "whatsapp", recipient_type
// "individual", the recipient as country code and number ("91XXXXXXXXXX"),
// and one of:
//
//   - text: {"body", "preview_url": false} for Envelope.Chat.Text;
//   - template: {"name", "language": {"code"}, "components": [...]}, with a
//     "body" component of positional text parameters and, when the
//     template has a media header, a "header" component with the image,
//     document or video link;
//   - document: {"link", "caption", "filename"} and image / video:
//     {"link", "caption"}, for Envelope.Chat.Media. The vendor fetches the
//     link itself, from its own network, so no file passes through here.
//
// A success answers {"messages": [{"id": "wamid..."}]}; that ID is the
// Result's ProviderMessageID. Errors answer {"error": {"message", "type",
// "code", "error_subcode", "error_data": {"details"}, "fbtrace_id"}} and
// are classified by code:
//
//	130429, 131056, 131048, 4, 80007  CodeRateLimited (131056, the pair rate
//	                                  limit, with RetryAfter 6s)
//	131047                            CodeRejected: outside the 24-hour
//	                                  customer service window; send a template
//	132000, 132001, 132005, 132007,   CodeRejected: the template does not
//	132012, 132015, 132016            exist, or does not match the parameters
//	190                               CodeRejected: bad or expired token
//	131026 and other 4xx codes        CodeRejected
//	1, 2, 131000, 131016, 133004, 5xx CodeUnavailable
//
// A network failure before the request was written is CodeUnavailable; one
// after it leaves the outcome unknown and is returned as a bare error,
// which the Notifier does not retry. Error messages carry the vendor's
// message, code and fbtrace_id (for support requests) but never the token
// or the envelope's OTP.
package cloudchat
