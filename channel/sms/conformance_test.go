package sms_test

import (
	"context"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

// batchFake is a capture provider that also sends batches
// (sms.BatchSender), two messages a call, so that the channel is a
// notify.BatchDeliverer of batches larger than one.
type batchFake struct{ *memprovider.Provider }

func (b batchFake) MaxBatch() int { return 2 }

func (b batchFake) SendBatch(ctx context.Context, envs []*notify.Envelope) ([]*notify.Result, error) {
	out := make([]*notify.Result, len(envs))
	for i, env := range envs {
		res, err := b.Send(ctx, env)
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}

// TestConformance runs the channel kit on the SMS channel with two
// providers in order for Indian numbers (india first, then global), every
// route, templates, a request codec, reports and batches.
func TestConformance(t *testing.T) {
	india, global := batchFake{memprovider.New("india")}, batchFake{memprovider.New("global")}
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := sms.New(sms.Config{Provider: global, Renderer: renderer,
		Providers: []sms.ProviderRule{{Provider: india, Countries: []string{"IN"}}}})
	if err != nil {
		t.Fatal(err)
	}
	acct := testAccount()
	req := func(r sms.Request) *sms.Request { r.Account = acct.ID; return &r }
	const dltText = "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO"
	channeltest.Run(t, channeltest.Harness{
		Channel: ch,
		Account: acct,
		Valid: []notify.Request{
			req(sms.Request{To: "+91 98765 43210", Message: "Your order has shipped.", Domain: "shop.example.in"}),
			req(sms.Request{To: "09876543210", Message: "नमस्ते, आपका ऑर्डर भेज दिया गया है", SenderID: "ACME", IdempotencyKey: "order-1042"}),
			req(sms.Request{To: "9876543210", Message: "4829", Route: sms.RouteOTP, Brand: "Acme", WebOTPHost: "shop.example.in"}),
			req(sms.Request{To: "9876543210", Message: "48291375", Route: sms.RouteOTP,
				TemplateSlug: "standard-otp", Variables: record.Vars{"ACTION": "login"}}),
			req(sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: otpTplID, Message: dltText}),
			req(sms.Request{To: "9876543210", TemplateSlug: "promo-discount", Variables: record.Vars{"NAME": "Asha",
				"DISCOUNT": "20%", "CODE": "SAVE20", "EXPIRY_DATE": "31/12/2030", "LINK": "https://shop.example.in"}}),
			req(sms.Request{To: "9876543210", Message: strings.Repeat("Long text. ", 30)}),
		},
		Invalid: []channeltest.Invalid{
			{Name: "no number", Request: req(sms.Request{Message: "hi"}), Fields: []string{"to"}},
			{Name: "no message", Request: req(sms.Request{To: "9876543210"}), Fields: []string{"message"}},
			{Name: "bad code", Request: req(sms.Request{To: "9876543210", Message: "48a913", Route: sms.RouteOTP}),
				Fields: []string{"message"}},
			{Name: "every field at once", Request: req(sms.Request{To: "12345", Route: "fax", SenderID: "not valid!", Domain: "a\nb"}),
				Fields: []string{"to", "route", "sender_id", "domain", "message"}},
			{Name: "dlt without its template", Request: req(sms.Request{To: "9876543210", Route: sms.RouteDLT, Message: dltText}),
				Fields: []string{"dlt_template_id"}},
			{Name: "template without its variables", Request: req(sms.Request{To: "9876543210", TemplateSlug: "promo-discount"}),
				Fields: []string{"variables.NAME", "variables.DISCOUNT", "variables.CODE", "variables.EXPIRY_DATE", "variables.LINK"}},
		},
		Providers: []channeltest.Fake{india, global},
		Secrets:   []string{"4829", "48291375", "48a913"},
		Codec:     ch,
		Stored: []channeltest.Stored{{Name: "reqcodec",
			Data:    []byte(`{"account":"acme","idempotency_key":"order-7","request":{"to":"9876543210","message":"Your order has shipped.","route":"sms"}}`),
			Request: req(sms.Request{To: "9876543210", Message: "Your order has shipped.", Route: sms.RouteSMS, IdempotencyKey: "order-7"})}},
		Reports: ch,
		Batch:   ch,
		BatchRequests: []notify.Request{
			req(sms.Request{To: "9876543210", Message: "Sale today"}),
			req(sms.Request{To: "9876543211", Message: "Sale today"}),
			req(sms.Request{To: "9876543212", Message: "Sale today"}),
		},
	})
}
