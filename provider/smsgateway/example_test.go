package smsgateway_test

import (
	"context"
	"fmt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
)

func Example() {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "demo-key", Balance: 10000})
	defer vendor.Close()

	p, err := smsgateway.New(smsgateway.Config{APIKey: "demo-key", BaseURL: vendor.URL})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	ctx := context.Background()
	_, err = p.Send(ctx, &notify.Envelope{Kind: notify.KindSMS, To: "9876543210",
		SMS: &notify.SMSMessage{Route: notify.RouteOTP, OTP: "482913", Text: "482913 is your code."}})
	fmt.Println(err)

	sent := vendor.Sent()[0]
	fmt.Println(sent.Route, sent.Numbers, sent.VariablesValues)

	balance, err := p.Balance(ctx)
	fmt.Println(balance, err)
	// Output:
	// <nil>
	// otp [9876543210] 482913
	// 99.75 INR <nil>
}
