package email_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

var testAcct = &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}

func newChannel(t testing.TB) *email.Channel {
	t.Helper()
	r, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := email.New(email.Config{Provider: memprovider.New("capture"), Renderer: r})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func prepare(t *testing.T, c *email.Channel, req *email.Request) *notify.Envelope {
	t.Helper()
	env, err := c.Prepare(context.Background(), testAcct, req)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return env
}

// fields returns the field names of an InvalidArgument error, or fails t.
func fields(t *testing.T, err error) []string {
	t.Helper()
	var ne *notify.Error
	if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument {
		t.Fatalf("got %v, want an InvalidArgument *notify.Error", err)
	}
	var out []string
	for _, f := range ne.Fields {
		out = append(out, f.Field)
	}
	return out
}

func TestNew(t *testing.T) {
	if _, err := email.New(email.Config{}); err == nil {
		t.Error("New without a provider succeeded")
	}
	c := newChannel(t)
	if c.Kind() != email.Kind {
		t.Errorf("Kind = %q", c.Kind())
	}
}

func TestPrepareHTML(t *testing.T) {
	c := newChannel(t)
	env := prepare(t, c, &email.Request{
		Account:  "acme",
		To:       "  asha@example.com ",
		Subject:  "Your invoice",
		Message:  `<p>Hello Asha,</p><p>Your invoice is <a href="https://acme.example/i/42">ready</a>.</p>`,
		FromName: "Acme Billing",
		ReplyTo:  "billing@acme.example",
		Purpose:  email.PurposeInvoice,
		Domain:   "shop.acme.example",
	})
	if env.Kind != email.Kind || env.To != "asha@example.com" || env.Provider != "capture" ||
		env.Units != 1 || env.Class != record.Transactional || env.Domain != "shop.acme.example" {
		t.Errorf("envelope %+v", env)
	}
	m := email.MessageOf(env)
	if m.Purpose != email.PurposeInvoice || m.FromName != "Acme Billing" || m.ReplyTo != "billing@acme.example" || m.Subject != "Your invoice" {
		t.Errorf("email %+v", m)
	}
	if !strings.HasPrefix(m.HTML, "<p>Hello Asha") {
		t.Errorf("HTML = %q", m.HTML)
	}
	if want := "Hello Asha,\n\nYour invoice is ready (https://acme.example/i/42)."; m.Text != want {
		t.Errorf("Text = %q, want %q", m.Text, want)
	}
}

func TestPreparePlainText(t *testing.T) {
	c := newChannel(t)
	env := prepare(t, c, &email.Request{To: "a@example.com", Subject: "Hi", Message: "Plain text, a < b."})
	if email.MessageOf(env).HTML != "" || email.MessageOf(env).Text != "Plain text, a < b." {
		t.Errorf("plain text became %+v", email.MessageOf(env))
	}
	if email.MessageOf(env).Purpose != "" || env.Class != record.Transactional {
		t.Errorf("default purpose: %q, class %q", email.MessageOf(env).Purpose, env.Class)
	}
}

func TestPrepareClassByPurpose(t *testing.T) {
	c := newChannel(t)
	for purpose, want := range map[email.Purpose]record.PriceClass{
		"": record.Transactional, email.PurposeOTP: record.Transactional, email.PurposeInvoice: record.Transactional,
		email.PurposeNotification: record.Transactional, email.PurposeCampaign: record.Promotional,
	} {
		env := prepare(t, c, &email.Request{To: "a@example.com", Subject: "S", Message: "m", Purpose: purpose})
		if env.Class != want {
			t.Errorf("purpose %q: class %q, want %q", purpose, env.Class, want)
		}
	}
}

func TestPrepareTemplate(t *testing.T) {
	c := newChannel(t)
	env := prepare(t, c, &email.Request{
		To: "a@example.com", TemplateSlug: "standard-otp", Variables: record.Vars{"OTP": "482913"}, Purpose: email.PurposeOTP,
	})
	m := email.MessageOf(env)
	if m.Subject != "Your Acme verification code" {
		t.Errorf("Subject = %q", m.Subject)
	}
	if !strings.Contains(m.HTML, "482913") || !strings.Contains(m.Text, "482913") {
		t.Errorf("the code is missing from the bodies: %q / %q", m.HTML, m.Text)
	}

	// A subject in the request overrides the template's.
	env = prepare(t, c, &email.Request{
		To: "a@example.com", Subject: "Sign in to Acme", TemplateSlug: "standard-otp", Variables: record.Vars{"OTP": "482913"},
	})
	if email.MessageOf(env).Subject != "Sign in to Acme" {
		t.Errorf("Subject = %q, want the request's", email.MessageOf(env).Subject)
	}
	// The template wins over message.
	env = prepare(t, c, &email.Request{
		To: "a@example.com", Message: "ignored", TemplateSlug: "standard-otp", Variables: record.Vars{"OTP": "482913"},
	})
	if strings.Contains(email.MessageOf(env).Text, "ignored") {
		t.Error("message was used though template_slug was given")
	}
}

// fakeRenderer renders one fixed result, for shapes the stock catalogue
// does not have.
type fakeRenderer struct{ r *notify.Rendered }

func (f fakeRenderer) Render(context.Context, notify.Kind, *notify.Account, string, string, record.Vars) (*notify.Rendered, error) {
	return f.r, nil
}

func TestPrepareTemplateShapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      *notify.Rendered
		want   []string // bad fields, or none
		wantTx string
	}{
		{"html only gets text", &notify.Rendered{Subject: "S", HTML: "<p>Hi <b>there</b></p>"}, nil, "Hi there"},
		{"no e-mail form", &notify.Rendered{Subject: "S"}, []string{"template_slug"}, ""},
		{"no subject", &notify.Rendered{HTML: "<p>x</p>", Text: "x"}, []string{"subject"}, ""},
		{"subject broken by variables", &notify.Rendered{Subject: "Hi\r\nBcc: x@evil.example", Text: "x"}, []string{"variables"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := email.New(email.Config{Provider: memprovider.New("capture"), Renderer: fakeRenderer{tc.r}})
			if err != nil {
				t.Fatal(err)
			}
			env, err := c.Prepare(context.Background(), testAcct, &email.Request{To: "a@example.com", TemplateSlug: "x"})
			if tc.want != nil {
				if got := fields(t, err); !slices.Equal(got, tc.want) {
					t.Errorf("bad fields %v, want %v", got, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if email.MessageOf(env).Text != tc.wantTx {
				t.Errorf("Text = %q, want %q", email.MessageOf(env).Text, tc.wantTx)
			}
		})
	}
}

// TestBadInput covers each bad input of issue 6: InvalidArgument naming
// the field (nothing is charged: see the Notifier tests).
func TestBadInput(t *testing.T) {
	ok := email.Request{To: "a@example.com", Subject: "Hello", Message: "<p>Hi</p>"}
	for _, tc := range []struct {
		name string
		edit func(r *email.Request)
		want []string
	}{
		{"missing to", func(r *email.Request) { r.To = "" }, []string{"to"}},
		{"malformed to", func(r *email.Request) { r.To = "asha.example.com" }, []string{"to"}},
		{"to with display name", func(r *email.Request) { r.To = "Asha <a@example.com>" }, []string{"to"}},
		{"to in angle brackets", func(r *email.Request) { r.To = "<a@example.com>" }, []string{"to"}},
		{"two recipients", func(r *email.Request) { r.To = "a@example.com, b@example.com" }, []string{"to"}},
		{"to without a dot", func(r *email.Request) { r.To = "root@localhost" }, []string{"to"}},
		{"to with an address literal", func(r *email.Request) { r.To = "a@[192.0.2.1]" }, []string{"to"}},
		{"to too long", func(r *email.Request) { r.To = strings.Repeat("a", 250) + "@example.com" }, []string{"to"}},
		{"subject missing", func(r *email.Request) { r.Subject = "" }, []string{"subject"}},
		{"subject blank", func(r *email.Request) { r.Subject = "   " }, []string{"subject"}},
		{"subject too long", func(r *email.Request) { r.Subject = strings.Repeat("s", 999) }, []string{"subject"}},
		{"subject with a control character", func(r *email.Request) { r.Subject = "Hi\x1b[31m" }, []string{"subject"}},
		{"from_name too long", func(r *email.Request) { r.FromName = strings.Repeat("n", 101) }, []string{"from_name"}},
		{"unknown purpose", func(r *email.Request) { r.Purpose = "newsletter" }, []string{"purpose"}},
		{"neither message nor template_slug", func(r *email.Request) { r.Message = "" }, []string{"message"}},
		{"blank message", func(r *email.Request) { r.Message = " \n " }, []string{"message"}},
		{"message with NUL", func(r *email.Request) { r.Message = "a\x00b" }, []string{"message"}},
		{"message not UTF-8", func(r *email.Request) { r.Message = "a\xffb" }, []string{"message"}},
		{"message too long", func(r *email.Request) { r.Message = strings.Repeat("m", email.MaxMessageLen+1) }, []string{"message"}},
		{"reply_to not an address", func(r *email.Request) { r.ReplyTo = "reply here" }, []string{"reply_to"}},
		{"reply_to with display name", func(r *email.Request) { r.ReplyTo = "Desk <d@example.com>" }, []string{"reply_to"}},
		{"unknown template", func(r *email.Request) { r.TemplateSlug = "no-such-template" }, []string{"template_slug"}},
		{"variables of the wrong shape", func(r *email.Request) {
			r.TemplateSlug, r.Variables = "standard-otp", record.Vars{"OTP": "not-digits"}
		}, []string{"variables.OTP"}},
		{"missing variable", func(r *email.Request) { r.TemplateSlug, r.Variables = "standard-otp", nil }, []string{"variables.OTP"}},
		{"bad domain", func(r *email.Request) { r.Domain = "shop\x00.example" }, []string{"domain"}},
		{"everything at once", func(r *email.Request) {
			*r = email.Request{To: "nope", Subject: "a\nb", FromName: "x\ry", ReplyTo: "bad", Purpose: "spam"}
		}, []string{"to", "subject", "message", "from_name", "reply_to", "purpose"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := ok
			tc.edit(&req)
			env, err := newChannel(t).Prepare(context.Background(), testAcct, &req)
			if err == nil {
				t.Fatalf("Prepare succeeded: %+v", env)
			}
			if got := fields(t, err); !slices.Equal(got, tc.want) {
				t.Errorf("bad fields %v, want %v (%v)", got, tc.want, err)
			}
		})
	}
}

// TestHeaderInjection: CR, LF or NUL in any header value is refused,
// whatever else the value holds.
func TestHeaderInjection(t *testing.T) {
	payloads := []string{"\r\nBcc: x@evil.example", "\nBcc: x@evil.example", "\rBcc: x@evil.example", "\x00", "\r\n\r\n<p>body</p>", "%0d%0a\n"}
	set := map[string]func(r *email.Request, v string){
		"to":        func(r *email.Request, v string) { r.To = "a@example.com" + v },
		"subject":   func(r *email.Request, v string) { r.Subject = "Hello" + v },
		"from_name": func(r *email.Request, v string) { r.FromName = "Acme" + v },
		"reply_to":  func(r *email.Request, v string) { r.ReplyTo = "r@example.com" + v },
	}
	c := newChannel(t)
	for field, edit := range set {
		for i, p := range payloads {
			t.Run(fmt.Sprintf("%s/%d", field, i), func(t *testing.T) {
				req := email.Request{To: "a@example.com", Subject: "Hello", Message: "Hi"}
				edit(&req, p)
				env, err := c.Prepare(context.Background(), testAcct, &req)
				if err == nil {
					t.Fatalf("Prepare accepted %q in %s: %+v", p, field, email.MessageOf(env))
				}
				if got := fields(t, err); !slices.Equal(got, []string{field}) {
					t.Errorf("bad fields %v, want [%s]", got, field)
				}
			})
		}
	}
}

func TestPrepareWrongRequest(t *testing.T) {
	c := newChannel(t)
	if _, err := c.Prepare(context.Background(), testAcct, &sms.Request{To: "9876543210", Message: "x"}); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("SMS request: %v", err)
	}
	if _, err := c.Prepare(context.Background(), nil, &email.Request{}); notify.CodeOf(err) != notify.CodeInternal {
		t.Errorf("nil account: %v", err)
	}
	if _, err := c.Deliver(context.Background(), &notify.Envelope{}); notify.CodeOf(err) != notify.CodeInternal {
		t.Errorf("Deliver without content: %v", err)
	}
	noTemplates, _ := email.New(email.Config{Provider: memprovider.New("capture")})
	_, err := noTemplates.Prepare(context.Background(), testAcct, &email.Request{To: "a@example.com", TemplateSlug: "standard-otp"})
	if got := fields(t, err); !slices.Equal(got, []string{"template_slug"}) {
		t.Errorf("template without a renderer: %v", err)
	}
}

func TestDeliver(t *testing.T) {
	mp := memprovider.New("capture")
	c, err := email.New(email.Config{Provider: mp})
	if err != nil {
		t.Fatal(err)
	}
	env := prepare(t, c, &email.Request{To: "a@example.com", Subject: "S", Message: "m"})
	env.ID = "msg-1"
	res, err := c.Deliver(context.Background(), env)
	if err != nil || res.Provider != "capture" || res.ProviderMessageID == "" {
		t.Fatalf("Deliver: %+v, %v", res, err)
	}
	if sent := mp.Sent(); len(sent) != 1 || sent[0].To != "a@example.com" {
		t.Errorf("provider got %v", sent)
	}
}

// FuzzHeaderChecks: whatever the header fields hold, Prepare either
// refuses them or returns values without CR, LF or NUL, and a bare
// recipient address.
func FuzzHeaderChecks(f *testing.F) {
	f.Add("a@example.com", "Hello", "Acme", "r@example.com")
	f.Add("a@example.com\r\nBcc: x@y.z", "Hi\nBcc: x", "A\rB", "r@example.com\x00")
	f.Add("\"a b\"@example.com", "₹ off", "Café", "")
	f.Add("Asha <a@example.com>", " ", "\t", "x@[1.2.3.4]")
	f.Add("victim@exa\u00a0mple.com", "Hi", "=?utf-8?q?x=0D=0ABcc:evil@example.com?=", "d\u202e@example.com")
	c := newChannel(f)
	f.Fuzz(func(t *testing.T, to, subject, fromName, replyTo string) {
		req := &email.Request{To: to, Subject: subject, FromName: fromName, ReplyTo: replyTo, Message: "<p>x</p>"}
		env, err := c.Prepare(context.Background(), testAcct, req)
		if err != nil {
			if notify.CodeOf(err) != notify.CodeInvalidArgument {
				t.Fatalf("Prepare: %v", err)
			}
			return
		}
		for name, v := range map[string]string{"to": env.To, "subject": email.MessageOf(env).Subject, "from_name": email.MessageOf(env).FromName, "reply_to": email.MessageOf(env).ReplyTo} {
			if strings.ContainsAny(v, "\r\n\x00") {
				t.Errorf("%s %q holds CR, LF or NUL", name, v)
			}
		}
		if strings.ContainsAny(env.To, "<>, ") || strings.Count(env.To, "@") < 1 {
			t.Errorf("to %q is not a bare address", env.To)
		}
		// The one character rule of addresses and display names holds
		// for whatever Prepare lets through.
		for name, why := range map[string]string{
			"to": rules.AddressChars(env.To), "reply_to": rules.AddressChars(email.MessageOf(env).ReplyTo),
			"from_name": rules.DisplayName(email.MessageOf(env).FromName),
		} {
			if why != "" {
				t.Errorf("%s passed Prepare but %s", name, why)
			}
		}
	})
}

// TestRecipientIsOneFormPerMailbox: every spelling of one mailbox (case,
// surrounding space, the domain in Unicode, in ASCII, full-width dots)
// has one canonical form, the domain's A-labels in lower case; that form
// is its own canonical form; a domain IDNA refuses is InvalidArgument
// naming "to". Fingerprints follow it, so a repeat that spells the
// address otherwise is the same request.
func TestRecipientIsOneFormPerMailbox(t *testing.T) {
	const want = "ann@xn--bcher-kva.example"
	for _, spelt := range []string{"ann@bücher.example", " Ann@Bücher.Example ", "ANN@BÜCHER.EXAMPLE", "ann@xn--bcher-kva.example",
		"ANN@XN--BCHER-KVA.EXAMPLE", "ann@bücher。example"} {
		got, err := email.Recipient(spelt)
		if err != nil || got != want {
			t.Errorf("Recipient(%q) = %q, %v; want %q", spelt, got, err, want)
		}
		a := &email.Request{Account: "acme", To: spelt, Subject: "Hi", Message: "Hello", Cc: []string{strings.ToUpper(spelt)}}
		b := &email.Request{Account: "acme", To: want, Subject: "Hi", Message: "Hello", Cc: []string{want}}
		if fingerprintOf(a) != fingerprintOf(b) {
			t.Errorf("a request to %q fingerprints apart from one to %q", spelt, want)
		}
	}
	if got, err := email.Recipient("Asha@Example.com"); err != nil || got != "asha@example.com" {
		t.Errorf("Recipient of an ASCII address = %q, %v", got, err)
	}
	for _, bad := range []string{"ann@bü_cher.example", "ann@xn--zz.example", "ann@-bücher.example", "ann", "ann@"} {
		var e *notify.Error
		if _, err := email.Recipient(bad); !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) != 1 || e.Fields[0].Field != "to" {
			t.Errorf("Recipient(%q) = %v; want InvalidArgument naming to", bad, err)
		}
	}
}

func fingerprintOf(r *email.Request) string {
	h := sha256.New()
	r.Fingerprint(h)
	return string(h.Sum(nil))
}
