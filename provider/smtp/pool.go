package smtp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	mail "github.com/xhit/go-simple-mail/v2"
)

// maxIdle is how long a connection may sit unused before it is closed
// instead of reused: servers may drop idle clients after five minutes
// (RFC 5321 4.5.3.2.7), and a fresh connection beats a failed attempt.
const maxIdle = 2 * time.Minute

// past is a deadline that has passed, to abort blocked I/O at once.
var past = time.Unix(1, 0)

// pool keeps up to size open connections to one SMTP configuration.
type pool struct {
	st      *settings
	secrets secrets
	// tokens holds one value per connection in use or being dialled; its
	// capacity bounds them.
	tokens chan struct{}
	// idle holds open connections that are not in use.
	idle chan *conn

	mu     sync.Mutex
	closed bool
	done   chan struct{}

	// dialContext opens the TCP connection; tests replace it.
	dialContext func(ctx context.Context, network, address string) (net.Conn, error)
}

func newPool(st *settings, size int) *pool {
	return &pool{
		st:      st,
		secrets: newSecrets(st.Username, st.Password),
		tokens:  make(chan struct{}, size),
		idle:    make(chan *conn, size),
		done:    make(chan struct{}),

		dialContext: (&net.Dialer{}).DialContext,
	}
}

// conn is one connection: the go-simple-mail client over a counting
// wrapper of the TCP connection.
type conn struct {
	client *mail.SMTPClient
	tcp    net.Conn
	track  *trackConn
	// reused is set once the connection has carried a message.
	reused bool
	// smtputf8 is set when the relay offers SMTPUTF8 (RFC 6531), which
	// go-simple-mail then puts in every MAIL FROM.
	smtputf8 bool
	idleAt   time.Time
}

// get returns a connection for the caller's exclusive use, waiting for a
// free slot while the pool is at its size; fresh skips the idle ones.
// Return it with put.
func (p *pool) get(ctx context.Context, fresh bool) (*conn, error) {
	select {
	case p.tokens <- struct{}{}:
	case <-ctx.Done():
		return nil, wrapCode(unavailable, fmt.Errorf("smtp: waiting for a connection to %s: %w", p.st.addr, ctx.Err()))
	case <-p.done:
		return nil, wrapCode(unavailable, errClosed)
	}
	for !fresh {
		var c *conn
		select {
		case c = <-p.idle:
		default:
		}
		if c == nil {
			break
		}
		if time.Since(c.idleAt) > maxIdle {
			c.close()
			continue
		}
		return c, nil
	}
	c, err := p.dial(ctx)
	if err != nil {
		<-p.tokens
		return nil, err
	}
	return c, nil
}

// put gives c back; keep says whether it may carry another message.
func (p *pool) put(c *conn, keep bool) {
	if keep {
		c.idleAt = time.Now()
		p.mu.Lock()
		if !p.closed {
			select {
			case p.idle <- c:
				c = nil
			default:
			}
		}
		p.mu.Unlock()
	}
	if c != nil {
		c.close()
	}
	<-p.tokens
}

// close closes the idle connections and makes the busy ones close when
// they are put back.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.done)
	p.mu.Unlock()
	for {
		select {
		case c := <-p.idle:
			c.close()
		default:
			return
		}
	}
}

func (c *conn) close() {
	// QUIT would be polite but costs a round trip under a deadline;
	// servers treat a closed connection the same way.
	_ = c.client.Close()
	_ = c.tcp.Close()
}

// dial opens, secures and logs in a new connection under ctx and the
// connect timeout.
func (p *pool) dial(ctx context.Context) (*conn, error) {
	st := p.st
	deadline := time.Now().Add(st.ConnectTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	tcp, err := p.dialContext(dctx, "tcp", st.addr)
	if err != nil {
		return nil, p.connectError(ctx, err)
	}
	_ = tcp.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = tcp.SetDeadline(past) })
	defer stop()

	track := &trackConn{Conn: tcp}
	// The provider opens the session itself, TLS included, to learn the
	// relay's extensions (see greet); go-simple-mail goes on over the
	// connection greet returns, as if it were in the clear.
	session, ext, err := greet(track, st)
	if err != nil {
		_ = tcp.Close()
		return nil, p.connectError(ctx, err)
	}
	srv := mail.NewSMTPClient()
	srv.Host = st.Host
	srv.Port = st.Port
	srv.Helo = st.Helo
	srv.KeepAlive = true
	// Both timeouts are zero on purpose: go-simple-mail would run each
	// connect and send in a goroutine of its own and send RSET after every
	// message; deadlines on the connection do the same job for free.
	srv.ConnectTimeout = 0
	srv.SendTimeout = 0
	srv.Username = st.Username
	srv.Password = st.Password
	switch {
	case st.Username == "":
		srv.Authentication = mail.AuthNone
	case st.Auth == AuthPlain:
		srv.Authentication = mail.AuthPlain
	case st.Auth == AuthLogin:
		srv.Authentication = mail.AuthLogin
	default:
		srv.Authentication = mail.AuthAuto
	}
	srv.CustomConn = session
	srv.Encryption = mail.EncryptionNone // TLS, when configured, is under session
	client, err := srv.Connect()
	if err != nil {
		if client != nil && client.Client != nil {
			_ = client.Close()
		}
		_ = tcp.Close()
		return nil, p.connectError(ctx, err)
	}
	return &conn{client: client, tcp: tcp, track: track, smtputf8: ext["SMTPUTF8"]}, nil
}

// send sends one message on c under ctx and the send timeout.
func (c *conn) send(ctx context.Context, st *settings, rcpt []string, msg string) (err error, tainted bool) {
	deadline := time.Now().Add(st.SendTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.tcp.SetDeadline(deadline)
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { _ = c.tcp.SetDeadline(past) })
	}
	c.track.reset(len(rcpt))
	err = mail.SendMessage(st.fromAddr, rcpt, msg, c.client)
	if stop != nil && !stop() {
		// The context ended while sending, or just after: its deadline may
		// land on the connection at any moment, so it cannot be reused.
		tainted = true
	}
	return err, tainted
}

// reset ends a failed transaction so that c can carry the next message.
func (c *conn) reset(st *settings) bool {
	_ = c.tcp.SetDeadline(time.Now().Add(st.SendTimeout))
	return c.client.Reset() == nil
}

// trackConn watches one transaction on the TCP connection to tell
// whether it failed before or after the message's final dot
// (CRLF "." CRLF) was handed to the network: before, the server cannot
// have the message and it may be sent again; after, the server may have
// queued it while its answer was lost.
//
// The bytes are encrypted under TLS, so it watches the order of reads
// and writes instead of their contents. go-simple-mail (v2.16.0) sends
// a transaction as MAIL FROM, one RCPT TO per recipient and DATA, each
// one flush (one write, or one TLS record) followed by a read of the
// reply, and then the message and its final dot, written with no read in
// between, followed by the read of the final reply. go-simple-mail
// ignores an error writing the final dot and reads the reply anyway. So
// the dot is out when a read starts after at least 3 + recipients
// writes (four for one recipient), none of which failed; doneDot latches that, so that a write failing later (a
// TLS alert during the final read) cannot undo it. Anything TLS writes on
// its own makes the count higher, never lower, so its errors lean
// towards "may have been delivered", never towards a duplicate.
type trackConn struct {
	net.Conn
	writes    int
	writeFail bool
	doneDot   bool
	// need is the count of writes after which a read means the final
	// dot is out: 3 + the transaction's recipients.
	need int
}

// reset starts watching a transaction of rcpts recipients.
func (t *trackConn) reset(rcpts int) {
	t.writes, t.writeFail, t.doneDot, t.need = 0, false, false, 3+max(rcpts, 1)
}

func (t *trackConn) Write(b []byte) (int, error) {
	t.writes++
	n, err := t.Conn.Write(b)
	if err != nil {
		t.writeFail = true
	}
	return n, err
}

func (t *trackConn) Read(b []byte) (int, error) {
	if t.need > 0 && t.writes >= t.need && !t.writeFail {
		t.doneDot = true
	}
	return t.Conn.Read(b)
}

// finalDotMaySent reports whether the server may have received the whole
// message of the current transaction, its final dot included.
func (t *trackConn) finalDotMaySent() bool { return t.doneDot }

var errClosed = errors.New("smtp: provider is closed")

// connectError classifies a failure to open a connection. Nothing of the
// message was sent, so it is certainly not accepted: Rejected for a 5xx
// reply (a refused login, a server that turns the client away for good),
// else Unavailable, the caller's context included (wrapped so that
// errors.Is(err, ctx.Err()) holds).
func (p *pool) connectError(ctx context.Context, err error) error {
	if cerr := ctxErr(ctx, err); cerr != nil {
		return wrapCode(unavailable, fmt.Errorf("smtp: connect to %s: %w", p.st.addr, cerr))
	}
	err = p.secrets.scrub(err)
	if code, ok := replyCode(err); ok && code >= 500 {
		return wrapCode(rejected, fmt.Errorf("smtp: connect to %s: %w", p.st.addr, err))
	}
	return wrapCode(unavailable, fmt.Errorf("smtp: connect to %s: %w", p.st.addr, err))
}
