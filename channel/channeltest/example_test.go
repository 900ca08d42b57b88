package channeltest_test

import (
	"context"
	"fmt"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
)

// A harness for the SMS channel over one capture provider. In a test,
// usually conformance_test.go, pass it to channeltest.Run(t, h); here it
// only prepares its first request.
func ExampleHarness() {
	p := memprovider.New("mem")
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		panic(err)
	}
	h := channeltest.Harness{
		Channel: ch,
		Account: &notify.Account{ID: "acme", Currency: record.INR()},
		Valid: []notify.Request{
			&sms.Request{Account: "acme", To: "+91 98765 43210", Message: "Your order has shipped."},
			&sms.Request{Account: "acme", To: "9876543210", Message: "482913", Route: sms.RouteOTP, IdempotencyKey: "otp-1"},
		},
		Invalid: []channeltest.Invalid{
			{Name: "no number", Request: &sms.Request{Account: "acme", Message: "hi"}, Fields: []string{"to"}},
			{Name: "bad code", Request: &sms.Request{Account: "acme", To: "9876543210", Message: "48", Route: sms.RouteOTP},
				Fields: []string{"message"}},
		},
		Providers: []channeltest.Fake{p},
		Secrets:   []string{"482913"},
		Codec:     ch, // the abilities the channel has, declared
		Reports:   ch,
		Batch:     ch,
		BatchRequests: []notify.Request{
			&sms.Request{Account: "acme", To: "9876543210", Message: "Sale today"},
			&sms.Request{Account: "acme", To: "9876543211", Message: "Sale today"},
		},
	}
	env, err := h.Channel.Prepare(context.Background(), h.Account, h.Valid[0])
	if err != nil {
		panic(err)
	}
	fmt.Println(env.Kind, env.To, env.Provider, env.Units)
	// Output: sms +919876543210 mem 1
}
