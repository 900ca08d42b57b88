package chat_test

import (
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/record"
)

// TestConformance runs the channel kit on the chat channel with both
// gateways: the auto gateway's failover to the other after a certain,
// temporary refusal, codes through the authentication template, media,
// cloud templates, a request codec and reports (a cloud message's Resend
// read back for the QR gateway).
func TestConformance(t *testing.T) {
	r := newRig(t, nil)
	acct := account("")
	req := func(c chat.Request) *chat.Request { c.Account = acct.ID; return &c }
	channeltest.Run(t, channeltest.Harness{
		Channel: r.ch,
		Account: acct,
		Valid: []notify.Request{
			req(chat.Request{To: "+91 98765 43210", Message: "Your order has shipped.", Domain: "shop.example.in"}),
			req(chat.Request{To: "9876543210", OTP: "482913", Brand: "Acme", Action: "login", IdempotencyKey: "otp-1"}),
			req(chat.Request{To: "9876543210", Gateway: chat.GatewayQR, Message: "Your invoice",
				MediaURL: "https://cdn.example.com/a.pdf", FileName: "invoice.pdf"}),
			req(chat.Request{To: "9876543210", Gateway: chat.GatewayCloud, TemplateName: "order_confirmed",
				Language: "en_US", Variables: record.Vars{"1": "Asha"}}),
			req(chat.Request{To: "9876543210", Type: chat.TypePromotional, Message: "Sale today!"}),
			req(chat.Request{To: "9876543210", TemplateSlug: "standard-otp", OTP: "4829"}),
		},
		Invalid: []channeltest.Invalid{
			{Name: "nothing to send", Request: req(chat.Request{To: "9876543210"}), Fields: []string{"message"}},
			{Name: "bad code", Request: req(chat.Request{To: "9876543210", OTP: "12ab"}), Fields: []string{"otp"}},
			{Name: "media on a private address", Request: req(chat.Request{To: "9876543210", Message: "x",
				MediaURL: "https://ten.example.com/a.pdf"}), Fields: []string{"media_url"}},
			{Name: "every field at once", Request: req(chat.Request{To: "1", Gateway: "x", Type: "y", Action: "z",
				MediaURL: "http://cdn.example.com/a.pdf"}), Fields: []string{"to", "gateway", "type", "action", "media_url"}},
		},
		Providers: []channeltest.Fake{r.cloud, r.qr},
		Secrets:   []string{"482913", "4829", "12ab"},
		Codec:     r.ch,
		Stored: []channeltest.Stored{{Name: "reqcodec",
			Data:    []byte(`{"account":"acme","request":{"to":"9876543210","message":"Hi","gateway":"qr"}}`),
			Request: req(chat.Request{To: "9876543210", Message: "Hi", Gateway: chat.GatewayQR})}},
		Reports: r.ch,
	})
}
