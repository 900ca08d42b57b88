package smtp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	netsmtp "net/smtp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
	mail "github.com/xhit/go-simple-mail/v2"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

// The throughput benchmarks send benchMessages messages of about 1 KB of
// HTML (with its text alternative) per iteration to an smtptest server,
// from benchSenders goroutines, and report msgs/s. Run them together so
// the ratios come from one run:
//
//	go test -run '^$' -bench Throughput -benchtime 1x -count 6 ./provider/smtp
const (
	benchMessages = 2000
	benchSenders  = 8
)

// benchServer starts a server that keeps only the last message, so that
// memory stays flat across iterations.
func benchServer(b *testing.B) *smtptest.Server {
	b.Helper()
	return startServer(b, smtptest.WithRetain(1))
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(benchMessages*b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(0, "ns/op") // a whole batch per op says nothing
}

// parallel runs send(i) for i in [0, benchMessages) on benchSenders
// goroutines and fails b on the first error.
func parallel(b *testing.B, send func(g, i int) error) {
	var wg sync.WaitGroup
	var once sync.Once
	per := benchMessages / benchSenders
	for g := range benchSenders {
		wg.Go(func() {
			for i := range per {
				if err := send(g, g*per+i); err != nil {
					once.Do(func() { b.Errorf("send: %v", err) })
					return
				}
			}
		})
	}
	wg.Wait()
}

// sampleMessage returns the bytes the provider sends for a 1 KB HTML
// envelope, for the peers that take a finished message.
func sampleMessage(b *testing.B) []byte {
	b.Helper()
	srv := startServer(b)
	p := newProvider(b, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
	if _, err := p.Send(context.Background(), htmlEnvelope("asha@example.com", email.PurposeNotification)); err != nil {
		b.Fatal(err)
	}
	return srv.Messages()[0].Data
}

func BenchmarkThroughput(b *testing.B) {
	msg := sampleMessage(b)
	b.Logf("message: %d bytes (HTML part %d bytes)", len(msg), len(htmlBody))

	// The server's limit: one connection, every command of every message
	// written back to back (pipelined), replies read concurrently.
	b.Run("raw-limit", func(b *testing.B) {
		srv := benchServer(b)
		var batch bytes.Buffer
		for range benchMessages {
			batch.WriteString("MAIL FROM:<noreply@shop.example>\r\nRCPT TO:<asha@example.com>\r\nDATA\r\n")
			batch.Write(msg) // no line of the sample starts with a dot
			batch.WriteString(".\r\n")
		}
		for b.Loop() {
			if err := rawBatch(srv.Addr, batch.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b)
	})

	b.Run("net-smtp-SendMail", func(b *testing.B) {
		srv := benchServer(b)
		to := []string{"asha@example.com"}
		for b.Loop() {
			parallel(b, func(_, _ int) error {
				return netsmtp.SendMail(srv.Addr, nil, "noreply@shop.example", to, msg)
			})
		}
		reportRate(b)
	})

	b.Run("simple-mail-conn-per-message", func(b *testing.B) {
		srv := benchServer(b)
		for b.Loop() {
			parallel(b, func(_, _ int) error {
				s := mail.NewSMTPClient()
				s.Host, s.Port = srv.Host, srv.Port
				c, err := s.Connect()
				if err != nil {
					return err
				}
				return simpleMailMessage().Send(c) // QUIT and close: KeepAlive is off
			})
		}
		reportRate(b)
	})

	// go-simple-mail as its README shows keep-alive: one client per
	// sender, its own message builder and send timeout (RSET after each).
	b.Run("simple-mail-keepalive", func(b *testing.B) {
		srv := benchServer(b)
		clients := make([]*mail.SMTPClient, benchSenders)
		for g := range clients {
			s := mail.NewSMTPClient()
			s.Host, s.Port, s.KeepAlive = srv.Host, srv.Port, true
			c, err := s.Connect()
			if err != nil {
				b.Fatal(err)
			}
			clients[g] = c
			defer c.Close()
		}
		for b.Loop() {
			parallel(b, func(g, _ int) error { return simpleMailMessage().Send(clients[g]) })
		}
		reportRate(b)
	})

	// A reference, not a peer: a bare go-smtp client sending the finished
	// message on 8 keep-alive connections is the ceiling of any client that
	// waits for each reply (no PIPELINING), as go-simple-mail does.
	b.Run("bare-go-smtp-keepalive", func(b *testing.B) {
		srv := benchServer(b)
		clients := make([]*gosmtp.Client, benchSenders)
		for g := range clients {
			c, err := gosmtp.Dial(srv.Addr)
			if err != nil {
				b.Fatal(err)
			}
			clients[g] = c
			defer c.Close()
		}
		to := []string{"asha@example.com"}
		for b.Loop() {
			parallel(b, func(g, _ int) error {
				return clients[g].SendMail("noreply@shop.example", to, bytes.NewReader(msg))
			})
		}
		reportRate(b)
	})

	for _, pool := range []int{4, 8} {
		b.Run("provider-pool-"+strconv.Itoa(pool), func(b *testing.B) {
			srv := benchServer(b)
			p := newProvider(b, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone), PoolSize: pool})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for b.Loop() {
				parallel(b, func(_, i int) error {
					env := htmlEnvelope("asha@example.com", email.PurposeNotification)
					env.ID = "bench-" + strconv.Itoa(i)
					_, err := p.Send(ctx, env)
					return err
				})
			}
			reportRate(b)
			b.ReportMetric(float64(srv.Connections()), "conns")
		})
	}
}

func simpleMailMessage() *mail.Email {
	e := mail.NewMSG()
	e.SetFrom("Shop <noreply@shop.example>").AddTo("asha@example.com").SetSubject("Your order has shipped")
	e.SetBody(mail.TextHTML, htmlBody)
	e.AddAlternative(mail.TextPlain, "Your order has shipped. Track it (https://shop.example/track)")
	return e
}

// rawBatch writes batch on one connection while reading the replies, and
// checks that every message got 250, 250, 354 and 250.
func rawBatch(addr string, batch []byte) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	readReply := func() (string, error) {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return "", err
			}
			if len(line) < 4 || line[3] != '-' { // last line of a reply
				return line, nil
			}
		}
	}
	if _, err := readReply(); err != nil { // greeting
		return err
	}
	if _, err := c.Write([]byte("EHLO bench\r\n")); err != nil {
		return err
	}
	if _, err := readReply(); err != nil {
		return err
	}
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(batch)
		werr <- err
	}()
	for i := 0; i < 4*benchMessages; i++ {
		line, err := readReply()
		if err != nil {
			return fmt.Errorf("reply %d: %w", i, err)
		}
		if line[0] != '2' && line[0] != '3' {
			return fmt.Errorf("reply %d: %s", i, strings.TrimSpace(line))
		}
	}
	return <-werr
}
