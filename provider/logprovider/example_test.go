package logprovider_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/logprovider"
)

func Example() {
	// Drop the time so the output is stable.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	p := logprovider.New(logger, "dev-sms")
	env := &notify.Envelope{
		ID:   "3f1c2a9e-0000-4000-8000-000000000001",
		Kind: sms.Kind,
		To:   "9876543210",
		Content: &sms.Message{
			Route: sms.RouteOTP, OTP: "482915", SenderID: "NTFYKT",
			Text: "482915 is your login code.",
		},
	}
	res, err := p.Send(context.Background(), env)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.ProviderMessageID)
	// Output:
	// level=INFO msg="notify message" provider=dev-sms provider_message_id=log-1 message_id=3f1c2a9e-0000-4000-8000-000000000001 kind=sms to=98xxxxxx10 sms.route=otp sms.sender_id=NTFYKT sms.text_len=26 sms.text="****** is your login code." sms.otp=******
	// log-1
}

func ExampleRedact() {
	fmt.Println(logprovider.Redact("Use 4821 to log in; 4821 expires soon.", "4821", false))
	fmt.Println(logprovider.Redact("Dear user, 7731 is your OTP for order 98765432101.", "", true))
	// Output:
	// Use ****** to log in; ****** expires soon.
	// Dear user, ****** is your OTP for order 98765432101.
}

func ExampleMaskRecipient() {
	fmt.Println(logprovider.MaskRecipient("9876543210"))
	fmt.Println(logprovider.MaskRecipient("riya@example.com"))
	// Output:
	// 98xxxxxx10
	// r***@example.com
}
