// Package email is the e-mail channel of notify: it validates and
// normalises e-mail requests, renders their templates, makes
// the plain-text alternative of HTML bodies, and hands the prepared
// envelope to one provider, such as provider/smtp.
//
// # Fields
//
//   - to is required: one bare address such as asha@example.com, as parsed
//     by net/mail. Display names ("Asha <asha@example.com>"), angle
//     brackets, lists, address literals and single-label domains are
//     refused, so that the address the caller sees is the one that
//     receives; surrounding ASCII spaces are removed. Characters that
//     show as nothing or as something else are refused anywhere in it:
//     control and format characters (category Cf, such as U+200B ZERO
//     WIDTH SPACE), bidirectional controls (U+202A-U+202E, U+2066-U+2069,
//     U+200E, U+200F, U+061C), line and paragraph separators, and white
//     space of any kind (U+00A0 NO-BREAK SPACE, ...), so that
//     "victim@exa\u00a0mple.com" cannot reach a mailbox other than the
//     one a receipt shows. Internationalised addresses such as
//     user@bücher.example or user@例え.jp are allowed: the domain must be
//     one IDNA accepts (golang.org/x/net/idna's Lookup profile, UTS #46),
//     which the provider sends in its ASCII form (xn--bcher-kva.example)
//     while the envelope and the receipt keep it as given; at most 254
//     bytes as given and with the domain in ASCII. A local part that is
//     not ASCII (रमेश@उदाहरण.भारत) needs a relay with SMTPUTF8 (RFC 6531):
//     provider/smtp refuses it, naming the field, when its relay lacks
//     SMTPUTF8.
//   - subject is required unless template_slug is given; then the
//     template supplies it, and a non-empty subject overrides it. At most
//     MaxSubjectLen bytes.
//   - message is the body, unless template_slug is given: HTML when it
//     contains a tag (see IsHTML), then sent with a text alternative made
//     by HTMLToText, else plain text. At most MaxMessageLen bytes, valid
//     UTF-8 without NUL.
//   - template_slug renders the template's e-mail form (subject, HTML,
//     text) with variables through Config.Renderer; a template without a
//     text form gets one from HTMLToText. variables are used only with a
//     template.
//   - from_name replaces the configured sender name: at most
//     MaxFromNameLen characters, without control, bidirectional or
//     invisible format characters (the joiners U+200C and U+200D, which
//     Indic and Persian names need, are allowed), and without anything
//     shaped like an RFC 2047 encoded word ("=?" followed by "?=", such
//     as "=?utf-8?q?x=0D=0ABcc:evil@example.com?="), which some readers
//     would decode into other text.
//   - otp declares the one-time code the message carries, if any:
//     MinOTPDigits to MaxOTPDigits (4 to 10) ASCII digits, which must
//     appear in the subject or the body, or in what the template
//     rendered, on their own rather than inside a longer number. What
//     shows message content (provider/logprovider, the development
//     outbox, the gateway's SMTP log) then hides the code wherever it
//     appears, subject included, as it hides the codes of SMS and chat.
//     Undeclared, a code is hidden only as a run of 4 to 8 digits (in OTP
//     mail, or mail that carries a code), so one of 9 or 10 digits
//     (package verify sends them by e-mail) would show. A declared code
//     makes the envelope CarriesOTP (the Notifier's OTP throttle counts
//     it) and is the Message's OTP.
//   - reply_to is an optional bare address, with the same rules as to.
//   - purpose is otp, invoice, notification or campaign, or empty for the
//     default. It selects the provider's SMTP configuration and the price;
//     campaign mail is Promotional (and carries List-Unsubscribe headers),
//     everything else Transactional.
//   - cc and bcc are further recipients, each checked exactly as to is
//     (the same mailbox rule; an error names the element, "cc[1]").
//     to, cc and bcc together are at most MaxRecipients (50) addresses.
//     An address given twice across to, cc and bcc (compared without
//     case and surrounding spaces) is refused, naming the repeat, rather
//     than silently dropped: each recipient is priced, so the caller
//     should see what it pays for. Every recipient goes into the SMTP
//     envelope (RCPT TO); cc is shown in the Cc header; bcc appears in
//     no delivered header.
//   - attachments are at most MaxAttachments (10) files, each either a
//     public https URL (the HTTP API's form) or, from Go, its bytes
//     (Attachment.Data). A URL is checked here without any lookup, since
//     Prepare has no side effects: https only, no user name, no IP
//     address in any spelling and no local-only name (localhost,
//     *.local, single labels), so https://127.0.0.1/x.pdf or
//     https://localhost/x.pdf is InvalidArgument naming
//     "attachments[0].url", before anything is charged. The provider
//     fetches the file when it sends the message, through the guard chat
//     media use (internal/netguard): a host that resolves to a private
//     address is refused at dial time, a certain refusal that is
//     refunded. file_name (default: the URL path's last segment, else
//     "attachment"; required with Data) is at most MaxFileNameLen bytes,
//     without a path and without control (CR, LF, NUL included),
//     bidirectional or invisible characters or encoded words.
//     content_type must be a media type (parameters other than charset
//     are dropped; multipart and message types are refused); default the
//     type of the file name's extension, else DefaultContentType. The
//     total size is the provider's limit (provider/smtp's
//     Config.MaxAttachmentBytes, 10 MiB by default).
//
// CR, LF and NUL are refused in every header value (to, cc, bcc, reply_to,
// subject, from_name, attachment names and types, and a subject made by
// a template from variables),
// so no request can add a header; other control characters are refused
// there too.
//
// Prepare reports every bad field at once, as a notify.CodeInvalidArgument
// *notify.Error with the HTTP API's JSON field names (docs/api.md); nothing is charged then.
//
// # Price
//
// E-mail is priced per recipient, by purpose: Envelope.Units is
// 1 + len(cc) + len(bcc), and the Notifier's price list (package wallet)
// multiplies the purpose's price by it. A message to one address with two
// cc and one bcc costs four times the purpose's price; attachments do
// not change the price.
package email
