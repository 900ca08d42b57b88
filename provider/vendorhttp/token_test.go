package vendorhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/notifykit/notify"
)

func TestCheckReceivers(t *testing.T) {
	rep := reporterFunc(func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error) { return nil, nil })
	const secret = "s3cret-s3cret-s3cret"
	for _, c := range []struct {
		name string
		err  error
		want string // "" for none
	}{
		{"token", CheckTokenReceiver("v", rep, secret), ""},
		{"token without a reporter", CheckTokenReceiver("v", nil, secret), "v: WebhookConfig.Reporter is required"},
		{"short token", CheckTokenReceiver("v", rep, "short"), "v: WebhookConfig.Token must be at least 16 bytes"},
		{"token with a slash", CheckTokenReceiver("v", rep, secret+"/x"), "must not contain '/', spaces or control characters"},
		{"signed", CheckSignedReceiver("v", rep, "Secret", secret, "why"), ""},
		{"signed without a reporter", CheckSignedReceiver("v", nil, "Secret", secret, "why"), "v: WebhookConfig.Reporter is required"},
		{"no secret", CheckSignedReceiver("v", rep, "Secret", "", "it signs"), "v: WebhookConfig.Secret is required: it signs"},
		{"a pasted line break", CheckSignedReceiver("v", rep, "Secret", secret+"\n", "why"), "must not contain control characters"},
	} {
		if c.want == "" {
			if c.err != nil {
				t.Errorf("%s: %v, want nil", c.name, c.err)
			}
			continue
		}
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) || strings.Contains(c.err.Error(), secret) {
			t.Errorf("%s: %v, want an error with %q that never repeats the secret", c.name, c.err, c.want)
		}
	}
}

func TestAdmitToken(t *testing.T) {
	const token = "0123456789abcdef0123"
	for _, c := range []struct {
		method, path string
		want         int // 0: admitted
	}{
		{http.MethodPost, "/hooks/" + token, 0},
		{http.MethodPost, "/hooks/" + token + "/", 0},
		{http.MethodPut, "/hooks/" + token, http.StatusMethodNotAllowed},
		{http.MethodPost, "/hooks/" + token[:19], http.StatusUnauthorized},
		{http.MethodPost, "/hooks/", http.StatusUnauthorized},
	} {
		var c2 Receiver
		w := httptest.NewRecorder()
		ok := c2.AdmitToken(w, httptest.NewRequest(c.method, c.path, nil), token, http.MethodPost)
		if ok != (c.want == 0) || (!ok && w.Code != c.want) {
			t.Errorf("%s %s: admitted %v, answered %d; want %d (0: admitted)", c.method, c.path, ok, w.Code, c.want)
		}
		if c.want == http.StatusUnauthorized && c2.Stats().Refused != 1 {
			t.Errorf("%s %s: refused %d, want counted once", c.method, c.path, c2.Stats().Refused)
		}
	}
}

// TestNewTokenWebhookRequires: a receiver without methods, an entry
// reader or a report maker would refuse or fail every call of the
// vendor's; NewTokenWebhook refuses it, naming the field.
func TestNewTokenWebhookRequires(t *testing.T) {
	rep := reporterFunc(func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error) { return nil, nil })
	good := TokenWebhookConfig{Name: "acme", Reporter: rep, Token: "t0ken-t0ken-t0ken-t0ken", Methods: []string{http.MethodPost},
		Entries: func(*http.Request, []byte) ([]Entry, error) { return nil, nil },
		Report:  func(Entry) *notify.DeliveryReport { return nil }}
	if _, err := NewTokenWebhook(good); err != nil {
		t.Fatalf("a whole config: %v", err)
	}
	for field, change := range map[string]func(*TokenWebhookConfig){
		"Methods": func(c *TokenWebhookConfig) { c.Methods = nil },
		"Entries": func(c *TokenWebhookConfig) { c.Entries = nil },
		"Report":  func(c *TokenWebhookConfig) { c.Report = nil },
	} {
		cfg := good
		change(&cfg)
		_, err := NewTokenWebhook(cfg)
		if want := "acme: TokenWebhookConfig." + field + " is required"; err == nil || err.Error() != want {
			t.Errorf("without %s: %v, want %q", field, err, want)
		}
	}
}
