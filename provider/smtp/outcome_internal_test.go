package smtp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/record"
)

// These tests drive the provider against a scripted SMTP server over
// net.Pipe, whose writes block until the other side reads them. That makes
// a connection lost in the middle of the message, before its final dot,
// reproducible: the server reads a few bytes and hangs up while the
// client is still writing, which a TCP socket's buffers would hide.

// step is what the scripted server does with one transaction, after it
// answered MAIL FROM, RCPT TO and DATA.
type step int

const (
	accept        step = iota // read the message, answer 250
	dropMidBody               // read a few bytes of the message, hang up
	dropAfterDot              // read the message and its dot, hang up
	stallAt354                // read nothing more; signal, wait for the test
	stallAfterDot             // read the message and its dot; signal, wait
)

// pipeServer is a scripted SMTP server; each connection the provider dials
// gets the next script.
type pipeServer struct {
	t        *testing.T
	scripts  [][]step
	dials    atomic.Int32
	accepted atomic.Int32
	reached  chan struct{} // a stall step was reached
	release  chan struct{} // closed at the end of the test
	wg       sync.WaitGroup
}

func newPipeServer(t *testing.T, scripts ...[]step) *pipeServer {
	return &pipeServer{t: t, scripts: scripts, reached: make(chan struct{}, len(scripts)), release: make(chan struct{})}
}

func (s *pipeServer) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	n := int(s.dials.Add(1))
	if n > len(s.scripts) {
		return nil, errors.New("pipe server: no script left")
	}
	client, server := net.Pipe()
	s.wg.Go(func() { s.serve(server, s.scripts[n-1]) })
	return client, nil
}

func (s *pipeServer) serve(c net.Conn, script []step) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) bool {
		_, err := io.WriteString(c, line+"\r\n")
		return err == nil
	}
	expect := func(prefix string) bool {
		line, err := r.ReadString('\n')
		return err == nil && strings.HasPrefix(strings.ToUpper(line), prefix)
	}
	readThroughDot := func() bool {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return false
			}
			if line == ".\r\n" {
				return true
			}
		}
	}
	// Two EHLOs: the provider's own (greet), then go-simple-mail's.
	if !say("220 pipe ESMTP") || !expect("EHLO") || !say("250 pipe") || !expect("EHLO") || !say("250 pipe") {
		return
	}
	for _, st := range script {
		if !expect("MAIL FROM:") || !say("250 ok") || !expect("RCPT TO:") || !say("250 ok") {
			return
		}
		// Further recipients (cc, bcc), then DATA.
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(strings.ToUpper(line), "RCPT TO:") {
				if !say("250 ok") {
					return
				}
				continue
			}
			if !strings.HasPrefix(strings.ToUpper(line), "DATA") || !say("354 go ahead") {
				return
			}
			break
		}
		// The client writes the message only after it read the 354, so
		// r holds nothing of it yet.
		switch st {
		case accept:
			if !readThroughDot() {
				return
			}
			s.accepted.Add(1)
			if !say("250 queued") {
				return
			}
		case dropMidBody:
			_, _ = io.ReadFull(c, make([]byte, 16))
			return
		case dropAfterDot:
			if readThroughDot() {
				s.accepted.Add(1)
			}
			return
		case stallAt354:
			s.reached <- struct{}{}
			<-s.release
			return
		case stallAfterDot:
			if readThroughDot() {
				s.accepted.Add(1)
			}
			s.reached <- struct{}{}
			<-s.release
			return
		}
	}
}

func pipeProvider(t *testing.T, srv *pipeServer) *Provider {
	t.Helper()
	p, err := New(Config{PoolSize: 1, Default: Server{Host: "127.0.0.1", Port: 2525, Encryption: EncryptionNone, From: "noreply@shop.example"}})
	if err != nil {
		t.Fatal(err)
	}
	p.def.pool.dialContext = srv.dial
	t.Cleanup(func() {
		_ = p.Close()
		close(srv.release)
		srv.wg.Wait()
	})
	return p
}

func pipeEnvelope(id string) *notify.Envelope {
	return &notify.Envelope{
		ID:   id,
		Kind: email.Kind,
		To:   "a@example.com",
		Content: &email.Message{
			Purpose: email.PurposeOTP,
			Subject: "Your code",
			Text:    strings.Repeat("Your code is in the app. ", 20),
		},
	}
}

func pipeSend(ctx context.Context, t *testing.T, p *Provider) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := p.Send(ctx, pipeEnvelope("m1"))
	return err
}

func TestConnectionLostMidMessageIsRetryable(t *testing.T) {
	srv := newPipeServer(t, []step{dropMidBody})
	p := pipeProvider(t, srv)
	err := pipeSend(t.Context(), t, p)
	if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("connection lost before the final dot: %v (code %q); want a retryable unavailable", err, notify.CodeOf(err))
	}
	if srv.accepted.Load() != 0 {
		t.Error("the server accepted a message it never got whole")
	}
}

func TestConnectionLostAfterDotIsUnknown(t *testing.T) {
	srv := newPipeServer(t, []step{dropAfterDot})
	p := pipeProvider(t, srv)
	err := pipeSend(t.Context(), t, p)
	if notify.OutcomeOf(err) != record.StateUnknown || notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Errorf("connection lost after the final dot: %v (code %q); want outcome_unknown", err, notify.CodeOf(err))
	}
	if srv.accepted.Load() != 1 {
		t.Errorf("server got %d messages, want 1", srv.accepted.Load())
	}
}

// TestRedialOnlyBeforeDot: a reused connection that fails before the final
// dot is replaced once by a fresh one; one that fails after it is not.
func TestRedialOnlyBeforeDot(t *testing.T) {
	t.Run("before", func(t *testing.T) {
		srv := newPipeServer(t, []step{accept, dropMidBody}, []step{accept})
		p := pipeProvider(t, srv)
		for i := range 2 {
			if err := pipeSend(t.Context(), t, p); err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		}
		if srv.dials.Load() != 2 || srv.accepted.Load() != 2 {
			t.Errorf("dials %d, accepted %d; want 2 and 2", srv.dials.Load(), srv.accepted.Load())
		}
	})
	t.Run("after", func(t *testing.T) {
		srv := newPipeServer(t, []step{accept, dropAfterDot}, []step{accept})
		p := pipeProvider(t, srv)
		if err := pipeSend(t.Context(), t, p); err != nil {
			t.Fatal(err)
		}
		err := pipeSend(t.Context(), t, p)
		if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
			t.Errorf("second send: %v, want outcome_unknown", err)
		}
		if srv.dials.Load() != 1 || srv.accepted.Load() != 2 {
			t.Errorf("dials %d, accepted %d; want 1 and 2: no resend after the dot", srv.dials.Load(), srv.accepted.Load())
		}
	})
}

func TestContextEndsMidTransaction(t *testing.T) {
	for _, tc := range []struct {
		name    string
		step    step
		outcome record.State
		code    notify.Code
	}{
		{"before the dot", stallAt354, record.StateFailed, notify.CodeUnavailable},
		{"after the dot", stallAfterDot, record.StateUnknown, notify.CodeOutcomeUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newPipeServer(t, []step{tc.step})
			p := pipeProvider(t, srv)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- pipeSend(ctx, t, p) }()
			<-srv.reached
			cancel()
			err := <-done
			if notify.OutcomeOf(err) != tc.outcome || notify.CodeOf(err) != tc.code {
				t.Errorf("got %v (code %q, outcome %v), want %q", err, notify.CodeOf(err), notify.OutcomeOf(err), tc.code)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("errors.Is(%v, context.Canceled) = false", err)
			}
		})
	}
}

// TestManyRecipientsLostMidMessageIsRetryable: with cc and bcc, each RCPT
// TO is one more exchange before DATA; a connection lost while the
// message is written is still before the final dot.
func TestManyRecipientsLostMidMessageIsRetryable(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		srv := newPipeServer(t, []step{dropMidBody})
		p := pipeProvider(t, srv)
		env := pipeEnvelope("m1")
		m := email.MessageOf(env)
		for i := range n {
			m.Bcc = append(m.Bcc, fmt.Sprintf("b%d@example.com", i))
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := p.Send(ctx, env)
		cancel()
		if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable {
			t.Errorf("%d bcc, connection lost before the final dot: %v (code %q); want a retryable unavailable", n, err, notify.CodeOf(err))
		}
	}
}

func TestManyRecipientsLostAfterDotIsUnknown(t *testing.T) {
	srv := newPipeServer(t, []step{dropAfterDot})
	p := pipeProvider(t, srv)
	env := pipeEnvelope("m1")
	email.MessageOf(env).Cc = []string{"c1@example.com", "c2@example.com"}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := p.Send(ctx, env)
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Errorf("connection lost after the final dot: %v (code %q); want outcome_unknown", err, notify.CodeOf(err))
	}
}
