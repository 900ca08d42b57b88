package sms_test

import (
	"context"
	"fmt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

func ExampleSegments() {
	for _, text := range []string{
		"Your OTP is 482913",
		"Price {promo}: €5",
		"आपका OTP 482913 है",
		"Sale today 🎉",
	} {
		enc, segments, units := sms.Segments(text)
		fmt.Println(enc, segments, units)
	}
	// Output:
	// gsm7 1 18
	// gsm7 1 20
	// ucs2 1 18
	// ucs2 1 13
}

func ExampleNew() {
	ch, err := sms.New(sms.Config{Provider: memprovider.New("mem")})
	if err != nil {
		panic(err)
	}
	acct := &notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMECO",
		DLTTemplates: []sms.DLTTemplate{{ID: "1107161234567890123", EntityID: "1101456789012345678",
			Content: "Your OTP for {#var#} is {#var#}. - ACMECO"}}}.Map()}

	env, err := ch.Prepare(context.Background(), acct, &sms.Request{
		To: "+91 98765 43210", Route: sms.RouteDLT, DLTTemplateID: "1107161234567890123",
		Message: "Your OTP for login is 482913. - ACMECO",
	})
	fmt.Println(env.To, sms.MessageOf(env).SenderID, sms.MessageOf(env).DLTEntityID, sms.MessageOf(env).DLTValues, env.Units, err)

	_, err = ch.Prepare(context.Background(), acct, &sms.Request{To: "98765", Route: sms.RouteOTP, Message: "12"})
	fmt.Println(err)
	// Output:
	// +919876543210 ACMECO 1101456789012345678 [login 482913] 1 <nil>
	// invalid_argument: to: must be 10 digits, found 5; message: the OTP must be 4-8 digits, found 2
}

// An account's SMS settings are JSON in its Settings, which any store
// keeps; the channel reads them on every send.
func ExampleSetSettings() {
	acct := &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
	if err := sms.SetSettings(acct, sms.Settings{SenderID: "ACMEIN", SenderIDs: []string{"ACMEIN", "ACMEOT"}}); err != nil {
		panic(err)
	}
	fmt.Println(string(acct.Settings[sms.Kind]))

	ch, err := sms.New(sms.Config{Provider: memprovider.New("mem")})
	if err != nil {
		panic(err)
	}
	env, err := ch.Prepare(context.Background(), acct, &sms.Request{To: "9876543210", Message: "hello"})
	fmt.Println(sms.MessageOf(env).SenderID, err)
	_, err = ch.Prepare(context.Background(), acct, &sms.Request{To: "9876543210", Message: "hello", SenderID: "HDFCBK"})
	fmt.Println(notify.CodeOf(err))
	// Output:
	// {"sender_id":"ACMEIN","sender_ids":["ACMEIN","ACMEOT"]}
	// ACMEIN <nil>
	// invalid_argument
}
