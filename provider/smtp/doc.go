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
// List-Unsubscribe-Post for campaign mail) and uses go-simple-mail for the
// SMTP transport: connecting, STARTTLS or implicit TLS, AUTH PLAIN or
// LOGIN, and the MAIL, RCPT and DATA exchange. go-simple-mail's own
// message builder costs more than the whole SMTP exchange on a fast link
// (see message.go), and its send timeout adds a goroutine and an RSET
// round trip to every message; deadlines on the connection replace it.
//
// Errors follow notify.Provider: a 4xx reply or a network failure before
// the message was handed over is CodeUnavailable (the Notifier retries);
// a 5xx reply is CodeRejected; the server's reply text is kept, logins
// never are.
//
// Package smtptest beside this one is an in-process SMTP server for tests
// and development.
package smtp
