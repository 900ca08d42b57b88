package email_test

import (
	"testing"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/template"
)

// TestConformance runs the channel kit on the e-mail channel: every
// purpose, a declared code, templates, cc and bcc, attachments, and a
// request codec (attachment bytes included).
func TestConformance(t *testing.T) {
	p := memprovider.New("capture")
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := email.New(email.Config{Provider: p, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	acct := &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	req := func(r email.Request) *email.Request { r.Account = acct.ID; return &r }
	channeltest.Run(t, channeltest.Harness{
		Channel: ch,
		Account: acct,
		Valid: []notify.Request{
			req(email.Request{To: " Ann@Example.com ", Subject: "Your order", Message: "It has shipped.", Domain: "shop.example.in"}),
			req(email.Request{To: "ann@example.com", Subject: "Your code", Message: "<p>Your code is <b>482913</b>.</p>",
				OTP: "482913", Purpose: email.PurposeOTP, IdempotencyKey: "otp-1"}),
			req(email.Request{To: "ann@example.com", TemplateSlug: "standard-otp", Variables: record.Vars{"OTP": "573920"},
				Purpose: email.PurposeOTP}),
			req(email.Request{To: "ann@example.com", Subject: "Invoice", Message: "Attached.", Purpose: email.PurposeInvoice,
				FromName: "Acme Billing", ReplyTo: "billing@example.com", Cc: []string{"bob@example.com"}, Bcc: []string{"audit@example.com"},
				Attachments: []email.Attachment{{FileName: "invoice.pdf", Data: []byte("%PDF-1.4 ...")},
					{URL: "https://cdn.example.com/terms.pdf"}}}),
			req(email.Request{To: "ann@example.com", Subject: "Sale", Message: "20% off today.", Purpose: email.PurposeCampaign}),
		},
		Invalid: []channeltest.Invalid{
			{Name: "no recipient", Request: req(email.Request{Subject: "s", Message: "m"}), Fields: []string{"to"}},
			{Name: "no subject or body", Request: req(email.Request{To: "ann@example.com"}), Fields: []string{"subject", "message"}},
			{Name: "code not in the text", Request: req(email.Request{To: "ann@example.com", Subject: "s", Message: "m", OTP: "9876"}),
				Fields: []string{"otp"}},
			{Name: "unknown purpose", Request: req(email.Request{To: "ann@example.com", Subject: "s", Message: "m", Purpose: "spam"}),
				Fields: []string{"purpose"}},
		},
		Providers: []channeltest.Fake{p},
		Secrets:   []string{"482913", "573920", "9876"},
		Codec:     ch,
		Stored: []channeltest.Stored{{Name: "reqcodec",
			Data:    []byte(`{"account":"acme","idempotency_key":"k","request":{"to":"ann@example.com","subject":"Hi","message":"Hello"}}`),
			Request: req(email.Request{To: "ann@example.com", Subject: "Hi", Message: "Hello", IdempotencyKey: "k"})}},
	})
}
