// Package smtptest runs an in-process SMTP server on a loopback port, in
// the manner of net/http/httptest: tests start one with NewServer, point
// an SMTP client at its Addr, read what it received with Messages, and
// stop it with Close.
//
// The server is built on github.com/emersion/go-smtp. Options turn on
// AUTH (PLAIN and LOGIN against one username and password), STARTTLS or
// implicit TLS with a self-signed certificate made at start (CertPool and
// ClientTLSConfig let clients trust it), and SMTPUTF8 (RFC 6531). Like a
// real server, it refuses an address with non-ASCII characters (553
// 5.6.7) unless it offers SMTPUTF8 (WithSMTPUTF8) and the transaction asks
// for it; Message.UTF8 says whether one did. Knobs make it misbehave the way
// real servers do: RejectNext answers the next message with a 4xx or 5xx
// reply; RejectRecipient refuses one address of several, the others
// taken; DropNext, DropNextAt and DropAfter close connections in the
// middle of a batch, before a message's data (certainly not accepted) or
// after its final dot (accepted, but the client gets no answer);
// StallNextAtDataEnd accepts a message and withholds the answer until the
// server is closed, so a client's deadline or context ends after the
// message was delivered; SetLatency makes it slow. Connections counts
// accepted connections, so tests can prove that a client reuses them,
// and WaitMessages waits for messages without sleeping.
//
// A Message holds the envelope (From, and To: every RCPT TO, so bcc
// recipients too) and the raw DATA; Parse reads it with net/mail, and
// Attachments decodes its file parts (base64 or quoted-printable, names
// in RFC 2231 or RFC 2047 form), through nested multipart bodies.
//
// It keeps every message in memory and is meant for tests and for
// development servers, never for real mail.
package smtptest
