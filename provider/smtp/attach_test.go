package smtp_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/toorop/go-dkim"
)

// testPDF returns a small, real PDF document of about n bytes.
func testPDF(n int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n")
	b.WriteString("2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n")
	b.WriteString("3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >> endobj\n")
	for i := 0; b.Len() < n-64; i++ {
		// Binary-looking filler, so that base64 and line handling are
		// exercised with every byte value.
		b.WriteByte(byte(i * 7))
	}
	b.WriteString("\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	return b.Bytes()
}

// fileServer is an HTTPS server on loopback serving files by path, which
// a test resolver maps files.example.com to.
type fileServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newFileServer(t *testing.T, files map[string][]byte) *fileServer {
	t.Helper()
	fs := &fileServer{}
	fs.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.hits.Add(1)
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(data)
	}))
	t.Cleanup(fs.Close)
	return fs
}

// url returns an https URL for path on files.example.com: the test
// resolver maps that name to the server's loopback address, and
// httptest's certificate covers example.com's subdomains.
func (fs *fileServer) url(path string) string {
	u, _ := url.Parse(fs.URL)
	return "https://files.example.com:" + u.Port() + path + "?token=s3cr3t"
}

type testResolver map[string]string

func (r testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// fileConfig lets the provider fetch from fs on loopback: the test-only
// guard hook (AllowAttachmentAddr), never the production default.
func fileConfig(srv *smtptest.Server, fs *fileServer) smtp.Config {
	return smtp.Config{
		Default:             serverConfig(srv, smtp.EncryptionNone),
		Resolver:            testResolver{"files.example.com": "127.0.0.1", "intranet.example.com": "10.0.0.7"},
		AllowAttachmentAddr: func(a netip.Addr) bool { return a.IsLoopback() },
		AttachmentTLSConfig: fs.Client().Transport.(*http.Transport).TLSClientConfig,
	}
}

func mailEnvelope(m *email.Message) *notify.Envelope {
	env := htmlEnvelope("asha@example.com", "")
	m.Subject, m.HTML, m.Text = "Your invoice", "<p>Invoice attached.</p>", "Invoice attached."
	env.Content = m
	return env
}

func sendCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAttachmentFromURLArrivesIntact(t *testing.T) {
	pdf := testPDF(300 << 10)
	fs := newFileServer(t, map[string][]byte{"/INV-7.pdf": pdf})
	srv := startServer(t)
	p := newProvider(t, fileConfig(srv, fs))

	logo := []byte("\x89PNG\r\n\x1a\n small logo")
	env := mailEnvelope(&email.Message{Attachments: []email.Attachment{
		{FileName: "INV-7.pdf", ContentType: "application/pdf", URL: fs.url("/INV-7.pdf")},
		{FileName: "logo €.png", ContentType: "image/png", Data: logo},
	}})
	if _, err := p.Send(sendCtx(t), env); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("Content-Type %q (%v), want multipart/mixed", m.Header.Get("Content-Type"), err)
	}
	// The first part is the body, text and HTML as alternatives.
	pm, _ := m.Parse()
	first, err := multipart.NewReader(pm.Body, params["boundary"]).NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if ct := first.Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/alternative;") {
		t.Errorf("first part %q, want multipart/alternative", ct)
	}
	atts, err := m.Attachments()
	if err != nil {
		t.Fatalf("Attachments: %v", err)
	}
	if len(atts) != 2 {
		t.Fatalf("%d attachments, want 2", len(atts))
	}
	if atts[0].FileName != "INV-7.pdf" || atts[0].ContentType != "application/pdf" {
		t.Errorf("attachment 0 = %q %q", atts[0].FileName, atts[0].ContentType)
	}
	if sha256.Sum256(atts[0].Data) != sha256.Sum256(pdf) {
		t.Errorf("the PDF arrived changed: %d bytes, want %d", len(atts[0].Data), len(pdf))
	}
	if atts[1].FileName != "logo €.png" || !bytes.Equal(atts[1].Data, logo) {
		t.Errorf("attachment 1 = %q, %q", atts[1].FileName, atts[1].Data)
	}
	for i, line := range strings.Split(string(m.Data), "\r\n") {
		if len(line) > 998 {
			t.Fatalf("line %d is %d bytes long", i, len(line))
		}
	}
}

func TestAttachmentRefusalsSendNothing(t *testing.T) {
	pdf := testPDF(4 << 10)
	tests := []struct {
		name string
		max  int64
		att  email.Attachment
		code notify.Code
		// notFetched: the guard refused before any request reached the
		// file server.
		notFetched bool
	}{
		{name: "host resolves to a private address", att: email.Attachment{URL: "https://intranet.example.com/x.pdf"},
			code: notify.CodeRejected, notFetched: true},
		{name: "unknown host", att: email.Attachment{URL: "https://nowhere.example.com/x.pdf"},
			code: notify.CodeRejected, notFetched: true},
		{name: "IP literal", att: email.Attachment{URL: "https://127.0.0.1/x.pdf"}, code: notify.CodeRejected, notFetched: true},
		{name: "file over the limit", max: 1 << 10, att: email.Attachment{URL: "/INV-7.pdf"}, code: notify.CodeRejected},
		{name: "HTTP 404", att: email.Attachment{URL: "/missing.pdf"}, code: notify.CodeRejected},
		{name: "HTTP 503", att: email.Attachment{URL: "/fail"}, code: notify.CodeUnavailable},
		{name: "data over the limit", max: 1 << 10, att: email.Attachment{Data: pdf}, code: notify.CodeInvalidArgument, notFetched: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFileServer(t, map[string][]byte{"/INV-7.pdf": pdf})
			srv := startServer(t)
			cfg := fileConfig(srv, fs)
			if tc.name == "host resolves to a private address" {
				cfg.AllowAttachmentAddr = nil // the production setting
			}
			cfg.MaxAttachmentBytes = tc.max
			p := newProvider(t, cfg)
			att := tc.att
			att.FileName = "INV-7.pdf"
			if strings.HasPrefix(att.URL, "/") {
				att.URL = fs.url(att.URL)
			}
			_, err := p.Send(sendCtx(t), mailEnvelope(&email.Message{Attachments: []email.Attachment{att}}))
			if notify.CodeOf(err) != tc.code || notify.OutcomeOf(err) != record.StateFailed {
				t.Fatalf("Send: %v (code %s, outcome %s), want %s, certainly not accepted", err, notify.CodeOf(err), notify.OutcomeOf(err), tc.code)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error shows the URL's token: %v", err)
			}
			if tc.notFetched && fs.hits.Load() != 0 {
				t.Errorf("the file server got %d requests, want none", fs.hits.Load())
			}
			if srv.Connections() != 0 || srv.Received() != 0 {
				t.Errorf("SMTP server: %d connections, %d messages; want none", srv.Connections(), srv.Received())
			}
		})
	}
}

func TestCcBcc(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
	env := mailEnvelope(&email.Message{Cc: []string{"ravi@example.com", "meena@bücher.example"}, Bcc: []string{"audit@example.org"}})
	if _, err := p.Send(sendCtx(t), env); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := srv.Messages()[0]
	want := []string{"asha@example.com", "ravi@example.com", "meena@xn--bcher-kva.example", "audit@example.org"}
	if fmt.Sprint(m.To) != fmt.Sprint(want) {
		t.Errorf("RCPT TO %v, want %v", m.To, want)
	}
	cc, err := m.Header.AddressList("Cc")
	if err != nil || len(cc) != 2 || cc[0].Address != "ravi@example.com" || cc[1].Address != "meena@xn--bcher-kva.example" {
		t.Errorf("Cc header %q: %v %v", m.Header.Get("Cc"), cc, err)
	}
	if _, ok := m.Header["Bcc"]; ok {
		t.Errorf("the delivered message has a Bcc header")
	}
	head, _, _ := bytes.Cut(m.Data, []byte("\r\n\r\n"))
	if bytes.Contains(bytes.ToLower(head), []byte("audit@example.org")) {
		t.Errorf("the bcc address shows in the headers:\n%s", head)
	}
}

// A cc's or bcc's 5.1.1 is that address's bounce, as RCPT TO carried it,
// never the To address's; the To address's own refusal is To's.
func TestCcRefusedIsTheCcBounce(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
	for _, m := range []*email.Message{
		{Cc: []string{"meena@example.com", "ravi@example.com"}},
		{Cc: []string{"meena@example.com"}, Bcc: []string{"ravi@example.com"}},
	} {
		srv.RejectRecipient("ravi@example.com", 550, "5.1.1 No such user")
		_, err := p.Send(sendCtx(t), mailEnvelope(m))
		if notify.CodeOf(err) != notify.CodeRejected {
			t.Fatalf("Send: %v, want Rejected", err)
		}
		var b store.Bounce
		if !errors.As(err, &b) {
			t.Fatalf("a cc or bcc recipient's 5.1.1 is no bounce: %v", err)
		}
		if reason, to := b.BounceReason(); reason != store.SuppressHardBounce || to != "ravi@example.com" {
			t.Errorf("BounceReason = %s, %q; want the refused cc or bcc, not To", reason, to)
		}
	}
	if srv.Received() != 0 {
		t.Errorf("server took %d messages", srv.Received())
	}

	// The To address's own refusal is its bounce.
	srv.RejectRecipient("asha@example.com", 550, "5.1.1 No such user")
	_, err := p.Send(sendCtx(t), mailEnvelope(&email.Message{Cc: []string{"meena@example.com"}}))
	var b store.Bounce
	if !errors.As(err, &b) {
		t.Fatalf("the To address's refusal is not a bounce: %v", err)
	}
	if _, to := b.BounceReason(); to != "" {
		t.Errorf("the To address's bounce names %q; want the envelope's To (empty)", to)
	}
}

func TestEnvelopeRecipientChecks(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, smtp.Config{Default: serverConfig(srv, smtp.EncryptionNone)})
	tests := []struct {
		name  string
		m     email.Message
		field string
	}{
		{"cc header injection", email.Message{Cc: []string{"a@example.com", "b@example.com\r\nBcc: x@evil.example"}}, "cc[1]"},
		{"bcc invisible", email.Message{Bcc: []string{"b@exa\u200bmple.com"}}, "bcc[0]"},
		{"file name injection", email.Message{Attachments: []email.Attachment{{FileName: "a.pdf\r\nX-Evil: 1", Data: []byte("x")}}}, "attachments[0].file_name"},
		{"content type injection", email.Message{Attachments: []email.Attachment{{FileName: "a.pdf", ContentType: "text/plain\r\nX: y", Data: []byte("x")}}}, "attachments[0].content_type"},
		{"url and data", email.Message{Attachments: []email.Attachment{{FileName: "a.pdf", URL: "https://files.example.com/a", Data: []byte("x")}}}, "attachments[0].url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			_, err := p.Send(sendCtx(t), mailEnvelope(&m))
			var ne *notify.Error
			if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) == 0 || ne.Fields[0].Field != tc.field {
				t.Fatalf("Send: %v, want InvalidArgument on %s", err, tc.field)
			}
		})
	}
	if srv.Connections() != 0 {
		t.Errorf("%d SMTP connections, want none", srv.Connections())
	}
}

// TestDKIMCoversCcAndFiles: a signed message with cc, bcc and a file
// verifies; its signature covers Cc, and a changed Cc or file fails it.
func TestDKIMCoversCcAndFiles(t *testing.T) {
	key := readKey(t, "dkim-test-rsa2048.pem")
	record, pub := dnsRecord(t, key)
	lookup := dkim.DNSOptLookupTXT(func(name string) ([]string, error) {
		if name != "s2025._domainkey.shop.example" {
			return nil, errors.New("no such host")
		}
		return []string{record}, nil
	})
	srv := startServer(t)
	cfg := serverConfig(srv, smtp.EncryptionNone)
	cfg.DKIM = smtp.DKIM{Domain: "shop.example", Selector: "s2025", PrivateKey: key}
	p := newProvider(t, smtp.Config{Default: cfg})
	env := mailEnvelope(&email.Message{Cc: []string{"ravi@example.com"}, Bcc: []string{"audit@example.org"},
		Attachments: []email.Attachment{{FileName: "a.pdf", ContentType: "application/pdf", Data: testPDF(2000)}}})
	if _, err := p.Send(sendCtx(t), env); err != nil {
		t.Fatal(err)
	}
	data := srv.Messages()[0].Data
	verify := func(data []byte) error {
		d := bytes.Clone(data)
		status, err := dkim.Verify(&d, lookup)
		if err == nil && status != dkim.SUCCESS {
			err = fmt.Errorf("status %v", status)
		}
		return errors.Join(err, verifyIndependently(t, data, pub))
	}
	if err := verify(data); err != nil {
		t.Fatalf("the signature does not verify: %v", err)
	}
	if h := parseSignature(t, data).headers(); !slices.Contains(h, "cc") {
		t.Errorf("h= %v does not cover cc", h)
	}
	for _, edit := range [][2]string{{"Cc: <ravi@example.com>", "Cc: <ravi@evil.example>"}, {"JVBERi0xLjQ", "JVBERi0xLjU"}} {
		forged := bytes.Replace(data, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(forged, data) {
			t.Fatalf("%q is not in the message", edit[0])
		}
		if verify(forged) == nil {
			t.Errorf("changing %q kept the signature valid", edit[0])
		}
	}
}
