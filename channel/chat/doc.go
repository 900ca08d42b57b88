// Package chat is the chat channel of notify: it validates and
// normalises chat requests, formats OTP messages, renders templates,
// checks media URLs, picks the gateway and delivers through the cloud
// provider (provider/cloudchat) or the QR-session provider
// (provider/qrchat), falling over from one to the other under the auto
// gateway.
//
// # What a request sends: the precedence rule
//
// A request may carry several contents; exactly one is sent, the first
// present in this order:
//
//  1. media_url: the file, as a document or an image, with message as its
//     caption (at most 1024 characters).
//  2. template_slug / template_name: a template (see below), with
//     variables; otp, when also given, fills the template's OTP variable,
//     and action and brand fill ACTION and BRAND_NAME unless variables
//     give them.
//  3. otp: a priority authentication message, formatted by Config.OTPText
//     from the code, the action and the brand (default: the account's
//     name): "*482915* is your Acme login code. For your security, do not
//     share this code with anyone." The QR gateway sends that text; the
//     cloud gateway sends the code only in Config.CloudOTPTemplate (see
//     One-time codes on the cloud gateway).
//  4. message: the text as it is (at most 4096 characters).
//
// A request with none of them is InvalidArgument on "message". Fields of
// a lower rank are ignored when a higher one is present, except that
// every given field is still validated (a bad action, type, gateway,
// language, otp or header_url is refused even when unused).
//
// # Gateways
//
// gateway is cloud, qr or auto (the default). auto is the account's
// primary gateway (Settings.PrimaryGateway), or the other one when
// the primary has no provider configured, or cannot carry the message (a
// file, when the QR provider reports with SupportsMedia that it cannot
// attach files, as qrchat on WAHA Core does; a one-time code, see below);
// the Message's Gateway (and Envelope.Route) is the resolved gateway and
// its Auto is set. Under auto, a certain, temporary refusal by the first
// gateway (notify.IsRetryable: Unavailable or RateLimited, the message was
// not accepted) falls over to the other gateway once per delivery attempt;
// a permanent refusal does not, and neither does an unknown outcome (the
// first gateway may have the message, and the other would deliver it
// twice). The Result's Route (the receipt's Gateway) says which gateway
// delivered, and its Note why that one. The message is charged the price of the gateway
// chosen in Prepare; when a failover delivers it through a cheaper one, the
// Notifier credits the difference back, and it never charges more. An explicit gateway whose provider is not configured is
// CodeUnavailable, before anything is charged.
//
// # One-time codes on the cloud gateway
//
// The cloud vendor takes one-time codes only in an approved
// authentication template, whose body is its preset "{{1}} is your
// verification code." and whose OTP button (copy code or one-tap) carries
// the code too; free text reaches only recipients who wrote in the last
// 24 hours. So a message that carries a code (an otp request, the chat leg
// of the dual OTP, a template_slug whose variables give OTP) goes to the
// cloud gateway only as Config.CloudOTPTemplate, in CloudOTPLanguage or
// the request's language, with the code in its body and its button; the
// QR gateway gets the text. Without that template the cloud gateway
// carries no code: under auto such a message goes by the QR gateway (and
// never falls over to cloud), an explicit gateway cloud is
// CodeInvalidArgument naming CloudOTPTemplate, and so is every message
// with a code on a channel with a Cloud provider and no QR provider,
// which sends templates, text and files.
// template_name naming the authentication template needs otp; another
// template_name with otp is sent as the caller named it.
//
// # Templates
//
//   - template_name names a template registered with the cloud channel:
//     it is sent through the cloud gateway with language (default en_US)
//     and the positional variables "1", "2", ... (or a JSON array) as body
//     parameters; an otp with no variables is the single parameter. Named
//     variables are refused: a template approved with named parameters
//     takes Request.NamedParams instead, and a text header's value and
//     button values come in HeaderText, HeaderName and Buttons (with
//     template_name only; not for the authentication template). header_url, for templates with a media
//     header, is a document (.pdf), a video (.mp4, .3gp) or an image (any
//     other path). Under auto, template_name pins the cloud gateway, since
//     the QR gateway cannot send cloud templates; with gateway qr it is
//     InvalidArgument unless template_slug is also given, which is then
//     used instead.
//   - template_slug names a stock or custom template, rendered by
//     Config.Renderer into the message text. For the cloud gateway the
//     slug is also mapped to a cloud template (Config.CloudTemplates;
//     template.Renderer does this), so that it is sent as a template
//     message, which the cloud channel delivers outside the 24-hour
//     customer service window; the rendered text goes to the QR gateway.
//     With both template_slug and template_name, template_name is used on
//     the cloud gateway and the slug's text on the QR gateway.
//
// # Type and price class
//
// type is otp (the default, the transactional rate; invoices and
// notifications use it too) or promotional. A template whose class is
// promotional is always sent at the promotional rate, whatever type says,
// so marketing cannot be priced as a transaction; Envelope.Class and
// the Message's Type then say promotional.
//
// # Media
//
// media_url and header_url must be public https URLs: no other scheme, no
// user info, no IP literal in any spelling, no local-only names, and a
// host whose every address is public (not loopback, private, link-local,
// CGNAT, unspecified, multicast or reserved); see internal/netguard. The
// QR provider fetches media again through a dial-time guard, so a name
// that changes its answer after this check gains nothing.
//
// file_name (default Document.pdf) names the attachment. The kind comes
// from the extension of file_name when it is given, else of the URL's
// path: .jpg, .jpeg, .png and .webp are sent as images, anything else as a
// document. Without file_name a document whose URL ends in another known
// document extension (.docx, .xlsx, ...) is named Document.<ext>, and an
// image Image.<ext>.
//
// # Content
//
// The prepared Envelope's Content is a *Message (read it with
// MessageOf(env)); its Route is the gateway, which prices it.
//
// # Errors
//
// Prepare reports every bad field at once as a notify.CodeInvalidArgument
// *notify.Error with the HTTP API's JSON field names (docs/api.md); nothing is charged then.
package chat
