package smtptest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	// From is the envelope sender (MAIL FROM).
	From string
	// To lists the envelope recipients (RCPT TO), in order.
	To []string
	// Data is the message as received, headers and body, with CRLF line
	// endings and the SMTP dot-stuffing removed. It is shared: do not
	// modify it.
	Data []byte
	// Header is Data's header as parsed by net/mail, or nil when Data has
	// no parseable header.
	Header mail.Header
	// Helo is the name the client gave in EHLO (or HELO).
	Helo string
	// AuthUser is the username the client authenticated as, or "".
	AuthUser string
	// TLS reports whether the message arrived over TLS (STARTTLS or
	// implicit).
	TLS bool
	// UTF8 reports whether the client asked for SMTPUTF8 in MAIL FROM
	// (RFC 6531), which only a server started WithSMTPUTF8 allows.
	UTF8 bool
}

// Parse parses Data with net/mail, giving access to the body.
func (m Message) Parse() (*mail.Message, error) {
	return mail.ReadMessage(bytes.NewReader(m.Data))
}

// Stage is the point of an SMTP transaction at which a rejection applies.
type Stage int

// The stages.
const (
	// StageMail rejects the MAIL FROM command.
	StageMail Stage = iota + 1
	// StageRcpt rejects the RCPT TO command.
	StageRcpt
	// StageData rejects the message after its data was received, the
	// reply to the final dot.
	StageData
)

// String returns "MAIL", "RCPT" or "DATA".
func (s Stage) String() string {
	switch s {
	case StageMail:
		return "MAIL"
	case StageRcpt:
		return "RCPT"
	case StageData:
		return "DATA"
	}
	return "Stage(" + strconv.Itoa(int(s)) + ")"
}

// Option configures a Server in NewServer.
type Option func(*config)

type config struct {
	addr        string
	domain      string
	user, pass  string
	auth        bool
	startTLS    bool
	implicitTLS bool
	smtputf8    bool
	retain      int
	onMessage   func(Message)
}

// WithAuth requires clients to authenticate with AUTH PLAIN or AUTH LOGIN
// as username and password before MAIL FROM. Without TLS the server
// allows AUTH in the clear; with WithStartTLS it requires STARTTLS first,
// as real servers do.
func WithAuth(username, password string) Option {
	return func(c *config) { c.auth, c.user, c.pass = true, username, password }
}

// WithStartTLS offers STARTTLS with a self-signed certificate for
// 127.0.0.1, ::1 and localhost, made when the server starts.
func WithStartTLS() Option { return func(c *config) { c.startTLS = true } }

// WithImplicitTLS makes the server speak TLS from the first byte (as on
// port 465), with the same self-signed certificate as WithStartTLS.
func WithImplicitTLS() Option { return func(c *config) { c.implicitTLS = true } }

// WithSMTPUTF8 offers SMTPUTF8 (RFC 6531) in the reply to EHLO. With it,
// the server takes addresses with non-ASCII characters in a transaction
// whose MAIL FROM asks for SMTPUTF8; without it, or without the request,
// it refuses them with 553 5.6.7, as a real server does: MAIL FROM for a
// sender, RCPT TO for a recipient. Default off.
func WithSMTPUTF8() Option { return func(c *config) { c.smtputf8 = true } }

// WithAddr sets the address to listen on. Default "127.0.0.1:0", a free
// loopback port.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithDomain sets the domain the server greets with. Default "localhost".
func WithDomain(domain string) Option { return func(c *config) { c.domain = domain } }

// WithRetain keeps only the last n messages in memory, for long-running
// development servers; Received still counts them all. Default 0, keep
// every message.
func WithRetain(n int) Option { return func(c *config) { c.retain = n } }

// WithOnMessage calls f with each accepted message, Header parsed, on the
// connection's goroutine, before the client gets its reply; a development
// server can print them. f must not call the Server's methods that wait
// (WaitMessages). Default none.
func WithOnMessage(f func(Message)) Option { return func(c *config) { c.onMessage = f } }

// Server is a running SMTP server. Its methods are safe for concurrent
// use.
type Server struct {
	// Addr is the address the server listens on, "127.0.0.1:port".
	Addr string
	// Host and Port are Addr's parts.
	Host string
	Port int

	cfg      config
	srv      *gosmtp.Server
	ln       net.Listener // what Serve accepts from: tcp, or TLS over tcp
	tcp      *countingListener
	serveErr chan error
	tlsCfg   *tls.Config
	pool     *x509.CertPool
	conns    atomic.Int64
	closed   chan struct{}
	closing  sync.Once

	mu          sync.Mutex
	msgs        []Message
	parsed      int // msgs[:parsed] have Header set (or failed to parse)
	total       int
	arrived     chan struct{} // closed and replaced when a message arrives
	rejects     map[Stage][]*gosmtp.SMTPError
	rcptRejects map[string]*gosmtp.SMTPError // by lower-case address
	drops       map[Stage]int
	stallsAtEnd int
	dropAfter   int
	latency     time.Duration
	latencySet  chan struct{} // closed and replaced by SetLatency
}

// NewServer starts a server on a free loopback port and returns it. It
// panics if it cannot listen or make its certificate, as
// httptest.NewServer does: both mean a broken test machine. Stop it with
// Close.
func NewServer(opts ...Option) *Server {
	s, err := Start(opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// Start is NewServer returning its error instead of panicking, for
// development servers.
func Start(opts ...Option) (*Server, error) {
	cfg := config{addr: "127.0.0.1:0", domain: "localhost"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.startTLS && cfg.implicitTLS {
		return nil, errors.New("smtptest: WithStartTLS and WithImplicitTLS exclude each other")
	}
	s := &Server{
		cfg:        cfg,
		serveErr:   make(chan error, 1),
		closed:     make(chan struct{}),
		arrived:    make(chan struct{}),
		latencySet: make(chan struct{}),
		rejects:    make(map[Stage][]*gosmtp.SMTPError),
		drops:      make(map[Stage]int),
	}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(s.newSession))
	srv.Domain = cfg.domain
	srv.ErrorLog = log.New(io.Discard, "", 0) // dropped connections are the point of some tests
	srv.AllowInsecureAuth = !cfg.startTLS
	srv.EnableSMTPUTF8 = cfg.smtputf8
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	if cfg.startTLS || cfg.implicitTLS {
		cert, pool, err := selfSigned()
		if err != nil {
			return nil, fmt.Errorf("smtptest: certificate: %w", err)
		}
		s.pool = pool
		s.tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		srv.TLSConfig = s.tlsCfg
	}
	s.srv = srv

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("smtptest: listen: %w", err)
	}
	s.tcp = &countingListener{Listener: ln, n: &s.conns}
	s.ln = s.tcp
	if cfg.implicitTLS {
		s.ln = tls.NewListener(s.tcp, s.tlsCfg)
	}
	s.Addr = ln.Addr().String()
	host, port, _ := net.SplitHostPort(s.Addr)
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	go func() { s.serveErr <- srv.Serve(s.ln) }()
	return s, nil
}

// Close stops the server: it closes the listener and every connection,
// wakes every waiter, and waits for the accept loop to end. It is safe to
// call more than once.
func (s *Server) Close() {
	s.closing.Do(func() {
		close(s.closed)
		_ = s.srv.Close()
		// go-smtp closes only the listeners and connections it has
		// registered; the accept loop or a connection's goroutine may not
		// have started yet.
		s.tcp.closeAll()
		<-s.serveErr
	})
}

// CertPool returns a pool holding the server's certificate, or nil
// without TLS.
func (s *Server) CertPool() *x509.CertPool { return s.pool }

// ClientTLSConfig returns a TLS configuration that trusts the server's
// certificate and names the server by its Host, or nil without TLS. Each
// call returns a new value.
func (s *Server) ClientTLSConfig() *tls.Config {
	if s.pool == nil {
		return nil
	}
	return &tls.Config{RootCAs: s.pool, ServerName: s.Host, MinVersion: tls.VersionTLS12}
}

// Connections returns how many connections the server has accepted.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Received returns how many messages the server has accepted, counting
// those WithRetain let go.
func (s *Server) Received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Messages returns the retained messages in the order they were accepted.
// The slice is a copy; the messages' Data is shared.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Headers are parsed here rather than on arrival so that receiving
	// stays cheap for throughput benchmarks.
	for ; s.parsed < len(s.msgs); s.parsed++ {
		m := &s.msgs[s.parsed]
		if msg, err := m.Parse(); err == nil {
			m.Header = msg.Header
		}
	}
	return append([]Message(nil), s.msgs...)
}

// WaitMessages waits until the server has accepted at least n messages in
// all (see Received), or ctx ends, or the server is closed.
func (s *Server) WaitMessages(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		total, ch := s.total, s.arrived
		s.mu.Unlock()
		if total >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("smtptest: %d of %d messages arrived: %w", total, n, ctx.Err())
		case <-s.closed:
			return fmt.Errorf("smtptest: server closed after %d of %d messages", total, n)
		}
	}
}

// RejectNext makes the server refuse the next message at the end of its
// data with the reply code (400-599) and text msg, which may start with an
// enhanced status code ("5.7.1 Refused"). Calls queue: two calls refuse
// the next two messages.
func (s *Server) RejectNext(code int, msg string) { s.RejectNextAt(StageData, code, msg) }

// RejectNextAt is RejectNext at another stage of the transaction.
func (s *Server) RejectNextAt(stage Stage, code int, msg string) {
	e := smtpError(code, msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejects[stage] = append(s.rejects[stage], e)
}

// RejectRecipient makes the server refuse every RCPT TO of addr
// (compared without case) with the reply code and text msg, as
// RejectNextAt does, until the server closes; the transaction's other
// recipients are taken. It lets a test refuse one recipient of several.
func (s *Server) RejectRecipient(addr string, code int, msg string) {
	e := smtpError(code, msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rcptRejects == nil {
		s.rcptRejects = make(map[string]*gosmtp.SMTPError)
	}
	s.rcptRejects[strings.ToLower(addr)] = e
}

// rejectFor returns the refusal RejectRecipient set for addr, or nil.
func (s *Server) rejectFor(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.rcptRejects[strings.ToLower(addr)]; ok {
		return e
	}
	return nil
}

// smtpError is the reply of code and msg.
func smtpError(code int, msg string) *gosmtp.SMTPError {
	e := &gosmtp.SMTPError{Code: code, EnhancedCode: gosmtp.EnhancedCodeNotSet, Message: msg}
	// go-smtp writes the enhanced code itself; take it from msg when msg
	// starts with one, such as "5.7.1 Refused".
	if first, rest, ok := strings.Cut(msg, " "); ok {
		var ec gosmtp.EnhancedCode
		parts := strings.Split(first, ".")
		valid := len(parts) == 3
		for i := 0; valid && i < 3; i++ {
			n, err := strconv.Atoi(parts[i])
			valid = err == nil && n >= 0 && n < 1000
			ec[i] = n
		}
		if valid {
			e.EnhancedCode, e.Message = ec, rest
		}
	}
	return e
}

// DropNext makes the server close the connection on which the next MAIL
// FROM arrives, without replying: that message is certainly not accepted.
// Calls queue. It is DropNextAt(StageMail).
func (s *Server) DropNext() { s.DropNextAt(StageMail) }

// DropNextAtDataEnd makes the server accept the next message (it is
// counted and kept) and then close the connection instead of replying to
// the final dot: the client cannot know whether it was accepted. Calls
// queue. It is DropNextAt(StageData).
func (s *Server) DropNextAtDataEnd() { s.DropNextAt(StageData) }

// DropNextAt makes the server close a connection without replying at
// stage of the next transaction that reaches it:
//
//   - StageMail, StageRcpt: on the MAIL FROM or RCPT TO command, before
//     any data; the message is certainly not accepted, nothing is kept.
//   - StageData: after the whole message including its final dot was
//     received; the message is accepted (counted and kept), and the
//     client, which gets no reply, cannot know it.
//
// Calls queue per stage. Other stages are ignored.
func (s *Server) DropNextAt(stage Stage) {
	switch stage {
	case StageMail, StageRcpt, StageData:
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops[stage]++
}

// StallNextAtDataEnd makes the server accept the next message (it is
// counted and kept, and WaitMessages sees it) and then withhold its reply
// to the final dot until the server is closed, when it drops the
// connection unanswered. A client waiting for that reply hits its own
// deadline, or its context ends, with the message delivered. Calls queue.
func (s *Server) StallNextAtDataEnd() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stallsAtEnd++
}

// takeDrop reports whether a drop is queued at stage, dequeuing it.
func (s *Server) takeDrop(stage Stage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drops[stage] == 0 {
		return false
	}
	s.drops[stage]--
	return true
}

// DropAfter makes the server close the connection that accepts the n-th
// message from now, right after replying 250 to it, as a server that
// limits messages per connection does. n < 1 cancels a pending DropAfter.
func (s *Server) DropAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropAfter = max(n, 0)
}

// SetLatency makes every MAIL FROM wait d before its reply; waiting
// commands are released when the latency changes or the server closes.
// Zero restores prompt replies.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
	close(s.latencySet)
	s.latencySet = make(chan struct{})
}

func (s *Server) takeReject(stage Stage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.rejects[stage]
	if len(q) == 0 {
		return nil
	}
	s.rejects[stage] = q[1:]
	return q[0]
}

// wait applies the latency.
func (s *Server) wait() {
	s.mu.Lock()
	d, changed := s.latency, s.latencySet
	s.mu.Unlock()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case <-s.closed:
	}
}

// accept records m and reports what to do with the connection: drop it
// now without a reply, stall the reply until the server closes, or drop
// it after the reply.
func (s *Server) accept(m Message) (dropNow, stall, dropAfterReply bool) {
	s.mu.Lock()
	s.total++
	s.msgs = append(s.msgs, m)
	if r := s.cfg.retain; r > 0 && len(s.msgs) > r {
		drop := len(s.msgs) - r
		s.msgs = append(s.msgs[:0], s.msgs[drop:]...)
		s.parsed = max(s.parsed-drop, 0)
	}
	close(s.arrived)
	s.arrived = make(chan struct{})
	if s.drops[StageData] > 0 {
		s.drops[StageData]--
		dropNow = true
	} else if s.stallsAtEnd > 0 {
		s.stallsAtEnd--
		stall = true
	}
	if s.dropAfter > 0 {
		s.dropAfter--
		dropAfterReply = s.dropAfter == 0
	}
	s.mu.Unlock()
	return dropNow, stall, dropAfterReply
}

// countingListener counts accepted connections and remembers the open
// ones, so that Close can end those go-smtp has not registered yet.
type countingListener struct {
	net.Listener
	n *atomic.Int64

	mu     sync.Mutex
	closed bool
	open   map[*trackedConn]struct{}
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.n.Add(1)
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	if l.open == nil {
		l.open = make(map[*trackedConn]struct{})
	}
	l.open[tc] = struct{}{}
	return tc, nil
}

// closeAll closes the listener and every connection it accepted.
func (l *countingListener) closeAll() {
	l.mu.Lock()
	l.closed = true
	open := l.open
	l.open = nil
	l.mu.Unlock()
	_ = l.Listener.Close()
	for c := range open {
		_ = c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.open, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
