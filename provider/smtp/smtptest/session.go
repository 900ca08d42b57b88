package smtptest

import (
	"bytes"
	"crypto/subtle"
	"io"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

var (
	errAuthRequired = &gosmtp.SMTPError{Code: 530, EnhancedCode: gosmtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	errNoRecipient  = &gosmtp.SMTPError{Code: 554, EnhancedCode: gosmtp.EnhancedCode{5, 5, 1}, Message: "No valid recipients"}
	// RFC 6531 3.7.4.2's replies to a non-ASCII address in a transaction
	// without SMTPUTF8.
	errUTF8Sender    = &gosmtp.SMTPError{Code: 553, EnhancedCode: gosmtp.EnhancedCode{5, 6, 7}, Message: "Non-ASCII addresses not permitted for that sender without SMTPUTF8"}
	errUTF8Recipient = &gosmtp.SMTPError{Code: 553, EnhancedCode: gosmtp.EnhancedCode{5, 6, 7}, Message: "Non-ASCII addresses not permitted for that recipient without SMTPUTF8"}
)

// session is one client's SMTP session; go-smtp calls it from the
// connection's goroutine only.
type session struct {
	s        *Server
	c        *gosmtp.Conn
	authUser string
	from     string
	size     int64 // the client's SIZE, to size the buffer once
	utf8     bool  // MAIL FROM asked for SMTPUTF8
	to       []string
	// dropOnReset closes the connection at the reset that follows the
	// reply to the final dot (go-smtp resets the session after replying).
	dropOnReset bool
}

func (s *Server) newSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &session{s: s, c: c}, nil
}

func (ss *session) AuthMechanisms() []string {
	if !ss.s.cfg.auth {
		return nil
	}
	return []string{sasl.Plain, sasl.Login}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if !ss.s.cfg.auth {
		return nil, gosmtp.ErrAuthUnsupported
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, username, password string) error {
			if identity != "" && identity != username {
				return gosmtp.ErrAuthFailed
			}
			return ss.login(username, password)
		}), nil
	case sasl.Login:
		return &loginServer{check: ss.login}, nil
	}
	return nil, gosmtp.ErrAuthUnknownMechanism
}

func (ss *session) login(username, password string) error {
	cfg := &ss.s.cfg
	u := subtle.ConstantTimeCompare([]byte(username), []byte(cfg.user))
	p := subtle.ConstantTimeCompare([]byte(password), []byte(cfg.pass))
	if u&p != 1 {
		return gosmtp.ErrAuthFailed
	}
	ss.authUser = username
	return nil
}

func (ss *session) Mail(from string, opts *gosmtp.MailOptions) error {
	ss.s.wait()
	if ss.s.takeDrop(StageMail) {
		_ = ss.c.Conn().Close()
		return errNoRecipient // never seen: the connection is gone
	}
	if ss.s.cfg.auth && ss.authUser == "" {
		return errAuthRequired
	}
	if err := ss.s.takeReject(StageMail); err != nil {
		return err
	}
	utf8 := opts != nil && opts.UTF8 // go-smtp refuses it unless WithSMTPUTF8
	if !utf8 && !isASCII(from) {
		return errUTF8Sender
	}
	ss.from, ss.utf8 = from, utf8
	if opts != nil {
		ss.size = opts.Size
	}
	return nil
}

func (ss *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if ss.s.takeDrop(StageRcpt) {
		_ = ss.c.Conn().Close()
		return errNoRecipient // never seen: the connection is gone
	}
	if err := ss.s.takeReject(StageRcpt); err != nil {
		return err
	}
	if err := ss.s.rejectFor(to); err != nil {
		return err
	}
	if !ss.utf8 && !isASCII(to) {
		return errUTF8Recipient
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	var buf bytes.Buffer
	if ss.size > 0 && ss.size < 1<<20 {
		buf.Grow(int(ss.size) + bytes.MinRead) // ReadFrom wants MinRead spare bytes
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return err
	}
	if err := ss.s.takeReject(StageData); err != nil {
		return err
	}
	_, isTLS := ss.c.TLSConnectionState()
	m := Message{
		From:     ss.from,
		To:       ss.to,
		Data:     buf.Bytes(),
		Helo:     ss.c.Hostname(),
		AuthUser: ss.authUser,
		TLS:      isTLS,
		UTF8:     ss.utf8,
	}
	ss.to = nil // the Message owns the slice now
	if f := ss.s.cfg.onMessage; f != nil {
		if pm, err := m.Parse(); err == nil {
			m.Header = pm.Header
		}
		f(m)
	}
	dropNow, stall, dropAfter := ss.s.accept(m)
	if stall {
		<-ss.s.closed
		dropNow = true
	}
	if dropNow {
		_ = ss.c.Conn().Close()
		return nil
	}
	ss.dropOnReset = dropAfter
	return nil
}

func (ss *session) Reset() {
	ss.from, ss.to, ss.size, ss.utf8 = "", nil, 0, false
	if ss.dropOnReset {
		ss.dropOnReset = false
		_ = ss.c.Conn().Close()
	}
}

func (ss *session) Logout() error { return nil }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// loginServer is the server side of AUTH LOGIN, which go-sasl lacks: the
// username (possibly as the initial response), then the password, each
// prompted by a base64 "Username:" or "Password:" challenge.
type loginServer struct {
	check    func(username, password string) error
	state    int
	username string
}

func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	switch l.state {
	case 0:
		if response == nil {
			l.state = 1
			return []byte("Username:"), false, nil
		}
		l.username, l.state = string(response), 2
		return []byte("Password:"), false, nil
	case 1:
		l.username, l.state = string(response), 2
		return []byte("Password:"), false, nil
	case 2:
		l.state = 3
		return nil, true, l.check(l.username, string(response))
	}
	return nil, false, sasl.ErrUnexpectedClientResponse
}

// Interface guards
var (
	_ gosmtp.Session     = (*session)(nil)
	_ gosmtp.AuthSession = (*session)(nil)
	_ sasl.Server        = (*loginServer)(nil)
)
