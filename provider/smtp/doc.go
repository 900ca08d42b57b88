// Package smtp is a notify.Provider that sends e-mail over SMTP with
// github.com/xhit/go-simple-mail/v2.
//
// Each purpose of mail (otp, invoice, notification, campaign) may have a
// configuration of its own (server, encryption, login, From address),
// falling back to Config.Default. Every distinct configuration keeps a
// small pool of keep-alive connections (Config.PoolSize, default 4) that
// are reused from message to message, replaced when the server dropped
// them, and closed by Provider.Close.
//
// The provider builds each MIME message itself (multipart/alternative
// when there is HTML and text, 7bit or quoted-printable parts, RFC 2047
// headers, a Message-ID per message, List-Unsubscribe and
// List-Unsubscribe-Post for campaign mail, multipart/mixed with files;
// see Recipients and attachments) and uses go-simple-mail for the SMTP
// transport: AUTH PLAIN or LOGIN, and the MAIL, RCPT and DATA
// exchange, over a connection the provider opened up to EHLO itself,
// STARTTLS or implicit TLS included (see Internationalised addresses).
// go-simple-mail's own message builder costs more than the whole SMTP
// exchange on a fast link (see message.go), and its send timeout adds a
// goroutine and an RSET round trip to every message; deadlines on the
// connection replace it.
//
// # Recipients and attachments
//
// A message goes to every recipient of its envelope in one SMTP
// transaction: RCPT TO for To, each Cc and each Bcc (email.Message), in
// that order. The Cc header lists Cc; Bcc is in no header of the
// delivered message. A recipient the server refuses refuses the whole
// message (nothing is sent; with a 5xx it is Rejected). A 5.1.x refusal
// of one RCPT TO is reported as that address's bounce (store.Bounce): To's
// for the first, a cc's or bcc's for a later one, so the Notifier
// suppresses the address refused, never To for a bad cc. A refusal of the
// whole message (DATA) suppresses nobody.
//
// A message with attachments is multipart/mixed: its body first (one
// text part, or multipart/alternative of text and HTML), then each file
// in base64, in lines of 76 characters, named by Content-Type's name and
// Content-Disposition's filename (RFC 2231 form when not ASCII). A file
// given by URL is fetched when the message is sent, before a connection
// is taken from the pool, through the guard chat media use
// (internal/netguard): https only, every address the host resolves to
// checked at dial time and only those dialled, no proxy, redirects
// checked, Config.AttachmentTimeout per file. The bytes stream from the
// network into the base64 encoder, so only the encoded message is held;
// Config.MaxAttachmentBytes (default 10 MiB) bounds the files of one
// message together, counted while reading, so no fetch reads past it.
// The message is built whole before it is sent, because DKIM signs it
// whole and go-simple-mail takes it as one string: that limit bounds
// the memory of a send too (about 1.4 times it, base64 included).
// Because every fetch ends before anything is written to the SMTP
// server, a failed fetch is a certain refusal: refunded, and retried
// when temporary.
//
// # DKIM and EHLO
//
// Server.DKIM signs every message of a configuration (RFC 6376,
// rsa-sha256, relaxed/relaxed) with a key for the From domain or a
// parent of it. The signature covers From, To, Subject, Date,
// Message-ID, MIME-Version, Content-Type and, when present, Cc, Reply-To,
// Content-Transfer-Encoding, List-Unsubscribe and List-Unsubscribe-Post,
// as RFC 8058 requires for one-click unsubscribe. It is off by default;
// New refuses a malformed, non-RSA or short key, or a domain that does
// not match From, naming the field and never showing the key. See
// ExampleDKIM.
//
// Server.Helo is the EHLO name; by default the machine's host name, or
// "localhost" when that is not a valid host name.
//
// # Internationalised addresses
//
// Every address goes to the relay with its domain in ASCII: an
// internationalised domain becomes its A-labels (user@bücher.example is
// sent as user@xn--bcher-kva.example), in MAIL FROM, RCPT TO and the From,
// To and Reply-To headers, so the message is well-formed on a relay
// without SMTPUTF8. The conversion is golang.org/x/net/idna's Lookup
// profile (UTS #46, non-transitional, as IDNA2008), the one the e-mail
// channel's address rule uses; a domain it refuses is InvalidArgument
// naming the field (New refuses such a From). Domains already in ASCII
// are sent as written. Envelopes keep the address as the caller gave it,
// and so do receipts and unsubscribe tokens.
//
// A local part that is not ASCII (रमेश@उदाहरण.भारत) has no ASCII form: it
// needs SMTPUTF8 (RFC 6531). The provider reads the relay's extensions
// itself (go-simple-mail, which adds SMTPUTF8 to MAIL FROM when the relay
// offers it, does not say whether it did): it opens each connection up to
// EHLO, over TLS when configured, and hands it to go-simple-mail. With
// SMTPUTF8 such a message goes out with it; without, the send is refused
// before MAIL FROM, a certain non-acceptance: InvalidArgument naming to or
// reply_to, saying the relay does not offer SMTPUTF8, or Rejected for a
// configured From, which only the configuration can fix.
//
// # Unsubscribe links
//
// Campaign mail carries List-Unsubscribe, and List-Unsubscribe-Post for
// one-click unsubscribe (RFC 8058) when Server.ListUnsubscribeURL is set.
// The URL should name the recipient by "{token}", with
// Server.UnsubscribeSecret set: an opaque token (see UnsubscribeToken)
// that hides the address and that nobody without the secret can make.
// The host application's endpoint gets the address back with
// VerifyUnsubscribeToken and records it; see its example. The older
// "{email}" placeholder puts the plain address in the URL, which anybody
// can write for somebody else's address; New refuses it when a secret is
// set.
//
// # Checks
//
// Send checks each envelope itself, for callers that build envelopes
// without the e-mail channel, with the channel's own character rule:
// addresses (to, reply_to, and the configured From) refuse control,
// format, bidirectional and space characters anywhere (U+00A0, U+200B,
// U+202E, ...), and display names refuse control, bidirectional and
// invisible characters and anything shaped like an RFC 2047 encoded
// word. A refused envelope is InvalidArgument naming the field.
//
// Errors follow notify.Provider's three outcomes. What decides between
// "certainly not accepted" and "unknown" is whether the final dot of DATA
// (CRLF "." CRLF) was written: before it the server cannot have the
// message; after it, it may have queued the message even when its answer
// never came.
//
//	what happened                                   code                 outcome
//	----------------------------------------------  -------------------  ------------
//	250 to the final dot                            (Result)             accepted
//	bad envelope (address, header injection)        InvalidArgument      not accepted
//	non-ASCII local part in to or reply_to, relay   InvalidArgument      not accepted
//	  without SMTPUTF8 (in From: Rejected)
//	campaign mail, no List-Unsubscribe configured   Rejected             not accepted
//	DKIM signing failed (not seen with a key New    Rejected             not accepted
//	  accepted)
//	too many attachments, data over                 InvalidArgument      not accepted
//	  MaxAttachmentBytes, a bad file name or type
//	attachment URL refused by the guard (private    Rejected             not accepted
//	  address, unknown host), HTTP 4xx, files
//	  over MaxAttachmentBytes
//	attachment fetch: network failure, timeout,     Unavailable          not accepted, retried
//	  HTTP 5xx or 429, ctx ended
//	4xx reply at any stage (421 included)           Unavailable          not accepted, retried
//	5xx reply at any stage (login refused too)      Rejected             not accepted
//	dial, TLS, login or network failure before      Unavailable          not accepted, retried
//	  the final dot; the connection lost while
//	  writing the message; provider closed
//	ctx ended before the final dot was written      Unavailable, wraps   not accepted
//	                                                ctx.Err()
//	connection lost, send timeout, or a reply out   OutcomeUnknown       unknown, never retried
//	  of protocol after the final dot was written
//	ctx ended after the final dot was written       OutcomeUnknown,      unknown, never retried
//	                                                wraps ctx.Err()
//
// A connection from the pool that the server had closed while idle is
// replaced by a fresh one within the same Send only when the failure is a
// certain non-acceptance, so no message reaches the server twice. The
// server's reply text is kept in errors; logins never are.
//
// Package smtptest beside this one is an in-process SMTP server for tests
// and development.
package smtp
