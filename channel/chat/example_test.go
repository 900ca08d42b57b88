package chat_test

import (
	"context"
	"fmt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/template"
)

// Wiring the chat channel to the real gateways; register it with
// notify.WithChannel.
func ExampleNew() {
	cloud, err := cloudchat.New(cloudchat.Config{PhoneNumberID: "106540352242922", Token: "access-token"})
	if err != nil {
		panic(err)
	}
	qr, err := qrchat.New(qrchat.Config{BaseURL: "http://waha.internal:3000", APIKey: "api-key"})
	if err != nil {
		panic(err)
	}
	renderer, err := template.New(nil) // stock templates, with their cloud mapping
	if err != nil {
		panic(err)
	}
	ch, err := chat.New(chat.Config{Cloud: cloud, QR: qr, Renderer: renderer,
		// One-time codes go to the cloud gateway only in this approved
		// authentication template.
		CloudOTPTemplate: "otp_code", CloudOTPLanguage: "en_US"})
	if err != nil {
		panic(err)
	}
	// Then: notify.New(accounts, ledger, notify.WithChannel(ch), ...).
	fmt.Println(ch.Kind())
	// Output: chat
}

// An OTP under the auto gateway: the cloud gateway is down, so the QR
// gateway delivers, and the result says why.
func ExampleChannel_Deliver() {
	cloud, qr := memprovider.New("cloud"), memprovider.New("qr")
	cloud.FailNext(1, notify.CodeUnavailable)
	ch, _ := chat.New(chat.Config{Cloud: cloud, QR: qr, CloudOTPTemplate: "otp_code"})
	acct := &notify.Account{ID: "acme", Name: "Acme", Settings: chat.Settings{PrimaryGateway: chat.GatewayCloud}.Map()}

	env, err := ch.Prepare(context.Background(), acct, &chat.Request{To: "+91 98765 43210", OTP: "482915", Action: "login"})
	if err != nil {
		panic(err)
	}
	env.Account = acct // the Notifier fills it
	fmt.Println(env.To, chat.MessageOf(env).Gateway, chat.MessageOf(env).Text)

	res, err := ch.Deliver(context.Background(), env)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Route, res.Provider)
	// Output:
	// +919876543210 cloud *482915* is your Acme login code. For your security, do not share this code with anyone.
	// qr qr
}

// Bad input names every bad field.
func ExampleChannel_Prepare_badInput() {
	ch, _ := chat.New(chat.Config{QR: memprovider.New("qr")})
	_, err := ch.Prepare(context.Background(), &notify.Account{ID: "acme"}, &chat.Request{
		To: "98765", Gateway: "sms", MediaURL: "http://cdn.example.com/invoice.pdf",
	})
	for _, f := range err.(*notify.Error).Fields {
		fmt.Printf("%s: %s\n", f.Field, f.Message)
	}
	// Output:
	// to: must be 10 digits, found 5
	// gateway: must be cloud, qr or auto, not "sms"
	// media_url: must be a public https URL: must use https
}

// The primary gateway, which the auto gateway tries first, is an
// account's chat setting.
func ExampleSetSettings() {
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	fmt.Println(chat.PrimaryGateway(acct)) // none set: cloud
	if err := chat.SetSettings(acct, chat.Settings{PrimaryGateway: chat.GatewayQR}); err != nil {
		panic(err)
	}
	fmt.Println(chat.PrimaryGateway(acct), string(acct.Settings[chat.Kind]))
	// Output:
	// cloud
	// qr {"primary_gateway":"qr"}
}
