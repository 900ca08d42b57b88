package logprovider_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/logprovider"
)

// TestProductionModeWithholdsContent: in Production the text, subject and
// template values of a message are withheld, its lengths kept; in Dev
// they are logged with the code masked.
func TestProductionModeWithholdsContent(t *testing.T) {
	envs := []*notify.Envelope{
		{ID: "m1", Kind: sms.Kind, To: "9876543210", CarriesOTP: true,
			Content: &sms.Message{Route: sms.RouteOTP, Text: "Your code 482913 for Acme", OTP: "482913"}},
		{ID: "m2", Kind: chat.Kind, To: "9876543210",
			Content: &chat.Message{Gateway: chat.GatewayCloud, Text: "Order Acme-77 shipped",
				Template: &chat.Template{Name: "order", Params: []string{"Acme-77"}, NamedParams: map[string]string{"who": "Riya"},
					HeaderText: "Acme order", Buttons: []chat.Button{{Index: 0, Kind: "url", Value: "track/Acme-77"}}}}},
		{ID: "m3", Kind: email.Kind, To: "riya@example.com",
			Content: &email.Message{Subject: "Acme receipt", Text: "body Acme"}},
	}
	for _, mode := range []logprovider.Mode{logprovider.Dev, logprovider.Production} {
		var buf bytes.Buffer
		p := logprovider.New(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})), "log", logprovider.WithMode(mode))
		for _, env := range envs {
			if _, err := p.Send(context.Background(), env); err != nil {
				t.Fatal(err)
			}
		}
		out := buf.String()
		if strings.Contains(out, "482913") || strings.Contains(out, "9876543210") || strings.Contains(out, "riya@") {
			t.Errorf("%s: a code or a whole recipient is logged:\n%s", mode, out)
		}
		if !strings.Contains(out, `"text_len":25`) {
			t.Errorf("%s: the text's length is not logged:\n%s", mode, out)
		}
		shown := strings.Count(out, "Acme")
		switch mode {
		case logprovider.Dev:
			if shown == 0 || !strings.Contains(out, `"text":"Your code ******`) {
				t.Errorf("dev: the text is not logged as sent:\n%s", out)
			}
		case logprovider.Production:
			if shown != 0 || !strings.Contains(out, logprovider.Withheld) {
				t.Errorf("production: content is logged (%d times):\n%s", shown, out)
			}
		}
	}
}

// TestReplaceAttrMasksAnyHandlersRecords: the rule applied to records
// the provider did not write.
func TestReplaceAttrMasksAnyHandlersRecords(t *testing.T) {
	for _, mode := range []logprovider.Mode{logprovider.Dev, logprovider.Production} {
		var buf bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: mode.ReplaceAttr}))
		logger.Info("smtp message received", "subject", "Acme receipt", "token", "tok-secret-1", "otp", "",
			slog.Group("sms", "text", "hello Acme", "api_key", "key-secret-2", "button_0", "url: Acme"), "code", "unavailable")
		out := buf.String()
		if strings.Contains(out, "secret") || !strings.Contains(out, `"token":"******"`) || !strings.Contains(out, `"otp":""`) ||
			!strings.Contains(out, `"code":"unavailable"`) {
			t.Errorf("%s: secrets not masked, or too much masked:\n%s", mode, out)
		}
		if shown := strings.Count(out, "Acme"); (mode == logprovider.Dev) != (shown == 3) || (mode == logprovider.Production) != (shown == 0) {
			t.Errorf("%s: content shown %d times:\n%s", mode, shown, out)
		}
	}
	if logprovider.Dev.String() != "dev" || logprovider.Production.String() != "production" {
		t.Error("Mode.String")
	}
}

// TestDigitsMaskedAlikeInEveryField: an order number is hidden in every
// field of a message that may hold an undeclared code (a chat template:
// its text, values, header and buttons) and in none of a message that
// cannot (chat text), never in some fields and not in others.
func TestDigitsMaskedAlikeInEveryField(t *testing.T) {
	template := &notify.Envelope{ID: "m1", Kind: chat.Kind, To: "9876543210",
		Content: &chat.Message{Gateway: chat.GatewayCloud, Text: "Order 4711 has shipped",
			Template: &chat.Template{Name: "order_update", Params: []string{"4711"}, HeaderText: "Order 4711",
				NamedParams: map[string]string{"order": "4711"},
				Buttons:     []chat.Button{{Index: 0, Kind: chat.ButtonURL, Value: "o/4711"}}}}}
	text := &notify.Envelope{ID: "m2", Kind: chat.Kind, To: "9876543210",
		Content: &chat.Message{Gateway: chat.GatewayQR, Text: "Order 4711 has shipped"}}
	for env, want := range map[*notify.Envelope]int{template: 0, text: 1} {
		var buf bytes.Buffer
		p := logprovider.New(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})), "log")
		if _, err := p.Send(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(buf.String(), "4711"); got != want {
			t.Errorf("%s: the order number is shown %d times, want %d:\n%s", env.ID, got, want, buf.String())
		}
	}
}
