package notifytest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
)

// A host application's test: the code under test sends an OTP; the test
// checks what went out and what it cost.
func Example() {
	t := &testing.T{} // in a real test, the *testing.T of the test function
	kit := notifytest.New(t)

	rc, err := kit.Notifier.Send(context.Background(), &otp.Request{
		Account: notifytest.AccountID, To: "98765 43210", OTP: "482913", BrandName: "Acme",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	env := kit.LastSMS(t)
	fmt.Println(env.To, sms.MessageOf(env).Route, sms.MessageOf(env).OTP)
	fmt.Println(len(rc.Legs), "legs,", rc.Status)
	fmt.Println("charged", rc.Cost.Minor == notifytest.DefaultBalance-kit.Balance(t))
	// Output:
	// +919876543210 otp 482913
	// 2 legs, sent
	// charged true
}

// Start builds a kit outside a test, as a first program does: here an
// account in dollars, in the US, that may send anywhere.
func ExampleStart() {
	kit, err := notifytest.Start(notifytest.WithRegion("US", "*"), notifytest.WithCurrency("USD", "sms=0.01, email=0.01"),
		notifytest.WithBalance(500))
	if err != nil {
		panic(err)
	}
	fmt.Println(notifytest.Summary(kit.Notifier.Send(context.Background(), &email.Request{Account: notifytest.AccountID,
		To: "ann@example.com", Subject: "Shipped", Message: "Your order has shipped."})))
	fmt.Println(notifytest.Summary(kit.Notifier.Send(context.Background(), &email.Request{Account: notifytest.AccountID,
		To: "not an address", Subject: "Shipped", Message: "Your order has shipped."})))
	// Output:
	// email to ann@example.com: sent via email, cost 0.01 USD, balance 4.99 USD
	// notify.Send: invalid_argument: to: must be an e-mail address such as name@example.com
}
