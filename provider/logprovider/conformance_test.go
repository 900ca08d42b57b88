package logprovider_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/provider/providertest"
)

func TestConformance(t *testing.T) {
	buf := &lockedBuffer{}
	p := logprovider.New(slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{ReplaceAttr: dropTime})), "log")
	providertest.Run(t, providertest.Harness{
		Provider: p,
		Envelope: func(int) *notify.Envelope {
			return &notify.Envelope{
				Kind: sms.Kind, To: "9876543210", Account: acct, Units: 1,
				Content: &sms.Message{Route: sms.RouteOTP, OTP: code, Text: code + " is your code."},
			}
		},
		Secrets: []string{code},
		// The log is the vendor: one record per accepted message.
		Received: buf.Lines,
	})
	if buf.Lines() == 0 {
		t.Fatal("nothing was logged")
	}
	if n := strings.Count(buf.String(), code); n > 0 {
		t.Errorf("the log holds the OTP %d times", n)
	}
}
