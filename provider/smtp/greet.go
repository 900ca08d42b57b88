package smtp

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"strings"
)

// extensions are the ESMTP extensions a relay named in its reply to
// EHLO, by upper-case keyword, without their parameters.
type extensions map[string]bool

// greet opens the SMTP session on c, the counting wrapper of the TCP
// connection, up to knowing the relay's extensions, and returns the
// connection go-simple-mail is to go on with, and those extensions.
//
// go-simple-mail (v2.16.0) reads the extensions too, and adds SMTPUTF8 to
// MAIL FROM when the relay offers it, but does not tell its caller
// whether it did; a message whose addresses need SMTPUTF8 (RFC 6531) must
// not go to a relay without it. So the provider says EHLO itself: it
// reads the greeting, says EHLO, and with STARTTLS upgrades the
// connection and says EHLO again over TLS (RFC 3207 4.2: what the relay
// offered in the clear does not count). With implicit TLS, the
// connection is TLS from the first byte. The connection it returns is
// the TLS one when there is TLS, and hands go-simple-mail the relay's
// greeting (already read here) before anything else; go-simple-mail then
// says EHLO once more, as a client may (RFC 5321 4.1.4), and logs in.
//
// A server that does not offer STARTTLS when the configuration asks for
// it is refused here, before any login or mail is sent in the clear.
func greet(c net.Conn, st *settings) (net.Conn, extensions, error) {
	conn := c
	if st.Encryption == EncryptionImplicitTLS {
		conn = tls.Client(c, st.tls)
	}
	tp := textproto.NewConn(conn)
	_, banner, err := tp.ReadResponse(220)
	if err != nil {
		return nil, nil, fmt.Errorf("greeting: %w", err)
	}
	ext, err := hello(tp, st.Helo)
	if err != nil {
		return nil, nil, err
	}
	if st.Encryption == EncryptionSTARTTLS {
		if !ext["STARTTLS"] {
			return nil, nil, errors.New("the server does not offer STARTTLS; refusing to continue in the clear")
		}
		if _, _, err := command(tp, 220, "STARTTLS"); err != nil {
			return nil, nil, fmt.Errorf("STARTTLS: %w", err)
		}
		if tp.R.Buffered() > 0 {
			// Bytes sent in the clear after the 220 would be read as if
			// they had come over TLS (command injection).
			return nil, nil, errors.New("STARTTLS: the server sent data before the TLS handshake")
		}
		tc := tls.Client(c, st.tls)
		if err := tc.Handshake(); err != nil {
			return nil, nil, fmt.Errorf("STARTTLS: %w", err)
		}
		conn = tc
		tp = textproto.NewConn(conn)
		if ext, err = hello(tp, st.Helo); err != nil {
			return nil, nil, err
		}
	}
	if tp.R.Buffered() > 0 {
		return nil, nil, errors.New("the server sent data out of turn")
	}
	return &replayConn{Conn: conn, pending: greeting(banner)}, ext, nil
}

// hello says EHLO and returns the extensions the reply names. A server
// that refuses EHLO with a 5xx reply gets HELO, as go-simple-mail does
// then, and offers no extension.
func hello(tp *textproto.Conn, name string) (extensions, error) {
	code, msg, err := command(tp, 250, "EHLO %s", name)
	if err != nil {
		if code < 500 || code > 599 {
			return nil, fmt.Errorf("EHLO: %w", err)
		}
		if _, _, err := command(tp, 250, "HELO %s", name); err != nil {
			return nil, fmt.Errorf("HELO: %w", err)
		}
		return extensions{}, nil
	}
	ext := extensions{}
	lines := strings.Split(msg, "\n")
	for _, l := range lines[1:] { // the first line names the server
		kw, _, _ := strings.Cut(strings.TrimSpace(l), " ")
		ext[strings.ToUpper(kw)] = true
	}
	return ext, nil
}

// command sends one command and reads its reply, which must have the
// code expect (or start with it, for a one-digit expect).
func command(tp *textproto.Conn, expect int, format string, args ...any) (int, string, error) {
	id, err := tp.Cmd(format, args...)
	if err != nil {
		return 0, "", err
	}
	tp.StartResponse(id)
	defer tp.EndResponse(id)
	return tp.ReadResponse(expect)
}

// greeting renders a 220 reply whose text, line by line, is banner.
func greeting(banner string) []byte {
	lines := strings.Split(banner, "\n")
	var b []byte
	for i, l := range lines {
		sep := "-"
		if i == len(lines)-1 {
			sep = " "
		}
		b = append(b, "220"+sep...)
		b = append(b, l...)
		b = append(b, "\r\n"...)
	}
	return b
}

// replayConn reads pending before the connection: the relay's greeting,
// which greet read, for go-simple-mail, which expects to read it.
type replayConn struct {
	net.Conn
	pending []byte
}

func (c *replayConn) Read(b []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
