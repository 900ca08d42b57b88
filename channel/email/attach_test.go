package email_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// fileStack is a Notifier with the e-mail channel, the SMTP provider on
// an smtptest server and an HTTPS file server on loopback, which the
// provider may fetch from through the guard's test hook only.
type fileStack struct {
	*stack
	files *httptest.Server
}

type loopResolver struct{}

func (loopResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "files.example.com" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func newFileStack(t *testing.T, files map[string][]byte) *fileStack {
	t.Helper()
	fs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(fs.Close)
	srv := smtptest.NewServer()
	t.Cleanup(srv.Close)
	p, err := smtp.New(smtp.Config{
		Default: smtp.Server{Host: srv.Host, Port: srv.Port, Encryption: smtp.EncryptionNone, From: "noreply@acme.example"},
		// The test hook of the guard: loopback only, for this test server.
		Resolver:            loopResolver{},
		AllowAttachmentAddr: func(a netip.Addr) bool { return a.IsLoopback() },
		AttachmentTLSConfig: fs.Client().Transport.(*http.Transport).TLSClientConfig,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return &fileStack{stack: stackOf(t, email.Config{Provider: p}, srv), files: fs}
}

func (s *fileStack) url(path string) string {
	u, _ := url.Parse(s.files.URL)
	return "https://files.example.com:" + u.Port() + path
}

func pdfBytes() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n")
	b.WriteString("2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n")
	for i := range 20000 {
		b.WriteByte(byte(i*31 + i>>8))
	}
	b.WriteString("\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	return b.Bytes()
}

func TestSendPDFFromURL(t *testing.T) {
	pdf := pdfBytes()
	s := newFileStack(t, map[string][]byte{"/inv/INV-42.pdf": pdf})
	rc, err := s.n.Send(context.Background(), &email.Request{
		Account: "acme", To: "asha@example.com", Subject: "Invoice 42", Message: "Your invoice is attached.",
		Purpose:     email.PurposeInvoice,
		Attachments: []email.Attachment{{URL: s.url("/inv/INV-42.pdf")}},
	})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if rc.Cost.Minor != 10 || rc.Units != 1 {
		t.Errorf("cost %v for %d units, want 10 paise for 1", rc.Cost, rc.Units)
	}
	atts, err := s.srv.Messages()[0].Attachments()
	if err != nil || len(atts) != 1 {
		t.Fatalf("attachments %v, %v", atts, err)
	}
	// The name and type come from the URL's last segment.
	if atts[0].FileName != "INV-42.pdf" || atts[0].ContentType != "application/pdf" {
		t.Errorf("attachment %q %q", atts[0].FileName, atts[0].ContentType)
	}
	if sha256.Sum256(atts[0].Data) != sha256.Sum256(pdf) {
		t.Errorf("PDF changed on the way: %d bytes, want %d", len(atts[0].Data), len(pdf))
	}
}

func TestPrivateAttachmentURLRefusedBeforeCharge(t *testing.T) {
	s := newFileStack(t, nil)
	for _, raw := range []string{
		"https://127.0.0.1/x.pdf", "https://10.0.0.1/x.pdf", "https://localhost/x.pdf", "https://[::1]/x.pdf",
		"https://2130706433/x.pdf", "http://files.example.com/x.pdf", "https://printer.local/x.pdf", "file:///etc/passwd",
	} {
		_, err := s.n.Send(context.Background(), &email.Request{
			Account: "acme", To: "asha@example.com", Subject: "Invoice", Message: "Attached.",
			Attachments: []email.Attachment{{FileName: "a.pdf", Data: []byte("%PDF-1.4")}, {URL: raw}},
		})
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != "attachments[1].url" {
			t.Errorf("%s: %v, want InvalidArgument on attachments[1].url", raw, err)
		}
	}
	if b := s.balance(t); b != opening {
		t.Errorf("balance %d, want %d untouched", b, opening)
	}
	entries, _, err := s.wallet.Ledger("acme")
	if err != nil || len(entries) != 0 {
		t.Errorf("wallet entries %v (%v), want none", entries, err)
	}
	recs, err := s.ledger.ByAccount(context.Background(), "acme", store.MessageCursor{}, 10)
	if err != nil || len(recs) != 0 {
		t.Errorf("records %d (%v), want none", len(recs), err)
	}
	if s.srv.Connections() != 0 {
		t.Errorf("%d SMTP connections, want none", s.srv.Connections())
	}
}

func TestCcBccPricedPerRecipient(t *testing.T) {
	s := newFileStack(t, nil)
	rc, err := s.n.Send(context.Background(), &email.Request{
		Account: "acme", To: "asha@example.com", Subject: "Minutes", Message: "See the minutes.",
		Cc:  []string{"ravi@example.com", " meena@example.org "},
		Bcc: []string{"audit@acme.example"},
	})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	// Notification mail is 8 paise a recipient in DefaultINR: 4 recipients.
	if rc.Units != 4 || rc.Cost.Minor != 4*8 || s.balance(t) != opening-4*8 {
		t.Errorf("units %d, cost %v, balance %d; want 4 units at 8 paise", rc.Units, rc.Cost, s.balance(t))
	}
	m := s.srv.Messages()[0]
	if want := "[asha@example.com ravi@example.com meena@example.org audit@acme.example]"; fmt.Sprint(m.To) != want {
		t.Errorf("RCPT TO %v, want %s", m.To, want)
	}
	if cc := m.Header.Get("Cc"); cc != "<ravi@example.com>, <meena@example.org>" {
		t.Errorf("Cc %q", cc)
	}
	head, _, _ := strings.Cut(string(m.Data), "\r\n\r\n")
	if strings.Contains(strings.ToLower(head), "bcc") || strings.Contains(head, "audit@acme.example") {
		t.Errorf("bcc shows in the delivered headers:\n%s", head)
	}
}

func TestRecipientChecks(t *testing.T) {
	ch, err := email.New(email.Config{Provider: nopProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	acct := &notify.Account{ID: "acme", Currency: record.INR()}
	many := make([]string, email.MaxRecipients)
	for i := range many {
		many[i] = fmt.Sprintf("r%d@example.com", i)
	}
	tests := []struct {
		name  string
		mod   func(r *email.Request)
		field string
	}{
		{"cc injection", func(r *email.Request) { r.Cc = []string{"a@example.com", "b@example.com\r\nBcc: x@evil.example"} }, "cc[1]"},
		{"cc display name", func(r *email.Request) { r.Cc = []string{"B <b@example.com>"} }, "cc[0]"},
		{"bcc nbsp", func(r *email.Request) { r.Bcc = []string{"b@exa\u00a0mple.com"} }, "bcc[0]"},
		{"bcc bidi", func(r *email.Request) { r.Bcc = []string{"x@example.com", "b\u202e@example.com"} }, "bcc[1]"},
		{"cc repeats to", func(r *email.Request) { r.Cc = []string{"Asha@Example.com"} }, "cc[0]"},
		{"bcc repeats cc", func(r *email.Request) { r.Cc = []string{"b@example.com"}; r.Bcc = []string{"b@example.com"} }, "bcc[0]"},
		{"too many", func(r *email.Request) { r.Bcc = many }, "cc"},
		{"cc of a code", func(r *email.Request) {
			r.Message, r.OTP = "your code is 482913", "482913"
			r.Cc = []string{"b@example.com"}
		}, "cc"},
		{"bcc of purpose otp", func(r *email.Request) { r.Purpose = email.PurposeOTP; r.Bcc = []string{"b@example.com"} }, "bcc"},
		{"too many files", func(r *email.Request) {
			r.Attachments = make([]email.Attachment, email.MaxAttachments+1)
		}, "attachments"},
		{"no url or data", func(r *email.Request) { r.Attachments = []email.Attachment{{FileName: "a.pdf"}} }, "attachments[0].url"},
		{"both", func(r *email.Request) {
			r.Attachments = []email.Attachment{{FileName: "a.pdf", URL: "https://files.example.com/a.pdf", Data: []byte("x")}}
		}, "attachments[0].url"},
		{"data without name", func(r *email.Request) { r.Attachments = []email.Attachment{{Data: []byte("x")}} }, "attachments[0].file_name"},
		{"name injection", func(r *email.Request) {
			r.Attachments = []email.Attachment{{FileName: "a.pdf\r\nX-Evil: 1", Data: []byte("x")}}
		}, "attachments[0].file_name"},
		{"name path", func(r *email.Request) { r.Attachments = []email.Attachment{{FileName: "../a.pdf", Data: []byte("x")}} }, "attachments[0].file_name"},
		{"name bidi", func(r *email.Request) {
			r.Attachments = []email.Attachment{{FileName: "invoice\u202efdp.exe", Data: []byte("x")}}
		}, "attachments[0].file_name"},
		{"name encoded word", func(r *email.Request) {
			r.Attachments = []email.Attachment{{FileName: "=?utf-8?q?a?=.pdf", Data: []byte("x")}}
		}, "attachments[0].file_name"},
		{"type injection", func(r *email.Request) {
			r.Attachments = []email.Attachment{{FileName: "a.pdf", ContentType: "application/pdf\r\nX: y", Data: []byte("x")}}
		}, "attachments[0].content_type"},
		{"type not a type", func(r *email.Request) {
			r.Attachments = []email.Attachment{{FileName: "a.pdf", ContentType: "pdf", Data: []byte("x")}}
		}, "attachments[0].content_type"},
		{"type multipart", func(r *email.Request) {
			r.Attachments = []email.Attachment{{FileName: "a", ContentType: "multipart/mixed; boundary=x", Data: []byte("x")}}
		}, "attachments[0].content_type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &email.Request{Account: "acme", To: "asha@example.com", Subject: "S", Message: "M"}
			tc.mod(r)
			_, err := ch.Prepare(context.Background(), acct, r)
			var ne *notify.Error
			if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) == 0 || ne.Fields[0].Field != tc.field {
				t.Fatalf("Prepare: %v, want InvalidArgument on %s", err, tc.field)
			}
			if strings.Contains(err.Error(), "evil.example") {
				t.Errorf("the error echoes the value: %v", err)
			}
		})
	}
}

func TestAttachmentDefaults(t *testing.T) {
	ch, err := email.New(email.Config{Provider: nopProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := ch.Prepare(context.Background(), &notify.Account{ID: "acme"}, &email.Request{
		Account: "acme", To: "asha@example.com", Subject: "S", Message: "M",
		Cc: []string{" ravi@example.com"}, Bcc: []string{"b@example.com"},
		Attachments: []email.Attachment{
			{FileName: "report.pdf", Data: []byte("%PDF-1.4")},
			{FileName: "notes.unknownext", Data: []byte("x")},
			{FileName: "readme.txt", ContentType: "Text/Plain; charset=UTF-8; x=y", Data: []byte("x")},
			{URL: "https://files.example.com/"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := email.MessageOf(env)
	got := []string{}
	for _, a := range m.Attachments {
		got = append(got, a.FileName+" "+a.ContentType)
	}
	want := "[report.pdf application/pdf notes.unknownext application/octet-stream readme.txt text/plain; charset=UTF-8 attachment application/octet-stream]"
	if fmt.Sprint(got) != want {
		t.Errorf("attachments %v,\nwant %s", got, want)
	}
	if env.Units != 3 || fmt.Sprint(m.Cc) != "[ravi@example.com]" || fmt.Sprint(m.Recipients(env.To)) != "[asha@example.com ravi@example.com b@example.com]" {
		t.Errorf("units %d, cc %q, recipients %q", env.Units, m.Cc, m.Recipients(env.To))
	}
}

func TestFingerprintCoversNewFields(t *testing.T) {
	base := email.Request{To: "a@example.com", Subject: "S", Message: "M"}
	fp := func(r email.Request) string {
		h := sha256.New()
		r.Fingerprint(h)
		return string(h.Sum(nil))
	}
	seen := map[string]string{fp(base): "base"}
	for name, r := range map[string]email.Request{
		"cc":       {To: base.To, Subject: "S", Message: "M", Cc: []string{"b@example.com"}},
		"bcc":      {To: base.To, Subject: "S", Message: "M", Bcc: []string{"b@example.com"}},
		"data":     {To: base.To, Subject: "S", Message: "M", Attachments: []email.Attachment{{FileName: "a", Data: []byte("1")}}},
		"data2":    {To: base.To, Subject: "S", Message: "M", Attachments: []email.Attachment{{FileName: "a", Data: []byte("2")}}},
		"url":      {To: base.To, Subject: "S", Message: "M", Attachments: []email.Attachment{{URL: "https://x.example/a"}}},
		"url name": {To: base.To, Subject: "S", Message: "M", Attachments: []email.Attachment{{URL: "https://x.example/a", FileName: "b"}}},
	} {
		f := fp(r)
		if prev, dup := seen[f]; dup {
			t.Errorf("%s and %s have one fingerprint", name, prev)
		}
		seen[f] = name
	}
}

// nopProvider is never called: the tests here only prepare.
type nopProvider struct{}

func (nopProvider) Name() string { return "nop" }
func (nopProvider) Send(context.Context, *notify.Envelope) (*notify.Result, error) {
	return nil, errors.New("nopProvider: not for sending")
}

// FuzzAttachmentChecks: whatever an attachment's name, type and URL and
// a cc address hold, Prepare refuses them (InvalidArgument) or lets
// through values that cannot break a header: no CR, LF or NUL, a content
// type that parses, a URL only of the public https form.
func FuzzAttachmentChecks(f *testing.F) {
	f.Add("a.pdf", "application/pdf", "https://files.example.com/a.pdf", "b@example.com")
	f.Add("a.pdf\r\nBcc: x@y.z", "text/plain\r\nX: y", "https://127.0.0.1/x", "b@example.com\r\nBcc: x@y.z")
	f.Add("", "", "https://files.example.com/%0d%0aX:y", "")
	f.Add("r\u00e9sum\u00e9.pdf", "text/plain; charset=utf-8; name=\"x\"", "https://[::1]/x", "d\u202e@example.com")
	f.Add("=?utf-8?q?x?=", "multipart/mixed; boundary=x", "https://localhost/", "Asha <a@example.com>")
	ch, err := email.New(email.Config{Provider: nopProvider{}})
	if err != nil {
		f.Fatal(err)
	}
	acct := &notify.Account{ID: "acme"}
	f.Fuzz(func(t *testing.T, name, ctype, rawURL, cc string) {
		req := &email.Request{To: "a@example.com", Subject: "S", Message: "M",
			Attachments: []email.Attachment{{FileName: name, ContentType: ctype, URL: rawURL}, {FileName: name, ContentType: ctype, Data: []byte("x")}}}
		if cc != "" {
			req.Cc = []string{cc}
		}
		env, err := ch.Prepare(context.Background(), acct, req)
		if err != nil {
			if notify.CodeOf(err) != notify.CodeInvalidArgument {
				t.Fatalf("Prepare: %v", err)
			}
			return
		}
		m := email.MessageOf(env)
		for _, a := range m.Attachments {
			if strings.ContainsAny(a.FileName+a.ContentType, "\r\n\x00") || a.FileName == "" {
				t.Errorf("attachment %q %q passed", a.FileName, a.ContentType)
			}
			if _, _, err := mime.ParseMediaType(a.ContentType); err != nil {
				t.Errorf("content type %q passed but does not parse: %v", a.ContentType, err)
			}
			if a.URL != "" && !strings.HasPrefix(a.URL, "https://") {
				t.Errorf("URL %q passed", a.URL)
			}
		}
		for _, c := range m.Cc {
			if strings.ContainsAny(c, "\r\n\x00<>, ") {
				t.Errorf("cc %q passed", c)
			}
		}
		if env.Units != 1+len(m.Cc) {
			t.Errorf("units %d for %d cc", env.Units, len(m.Cc))
		}
	})
}

// TestQueuedRequestKeepsFiles: a queued send's record (EncodeRequest)
// keeps cc, bcc and the attachments, bytes included.
func TestQueuedRequestKeepsFiles(t *testing.T) {
	ch, err := email.New(email.Config{Provider: nopProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	in := &email.Request{Account: "acme", To: "a@example.com", Subject: "S", Message: "M", IdempotencyKey: "k1",
		Cc: []string{"c@example.com"}, Bcc: []string{"b@example.com"},
		Attachments: []email.Attachment{{FileName: "a.bin", Data: []byte{0, 1, 2, 0xff}}, {URL: "https://files.example.com/x.pdf"}}}
	data, err := ch.EncodeRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ch.DecodeRequest(data)
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := sha256.New(), sha256.New()
	in.Fingerprint(h1)
	out.Fingerprint(h2)
	if !bytes.Equal(h1.Sum(nil), h2.Sum(nil)) {
		t.Errorf("the request changed through its record: %+v", out)
	}
}
