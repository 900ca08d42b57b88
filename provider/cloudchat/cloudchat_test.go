package cloudchat_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

func chatEnv(to string, m *chat.Message) *notify.Envelope {
	m.Gateway = chat.GatewayCloud
	return &notify.Envelope{ID: "6f1c2a7e-1d2b-4c3d-9e8f-0a1b2c3d4e5f", Kind: chat.Kind, To: to,
		Account:  &notify.Account{ID: "acme"},
		Provider: "cloudchat", Route: string(chat.GatewayCloud), Units: 1, Content: m}
}

// TestWireFormat sends each content shape and checks the body the vendor
// received.
func TestWireFormat(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	tests := []struct {
		name string
		msg  *chat.Message
		want string // JSON the vendor must have received (subset of fields)
	}{
		{"text", &chat.Message{Text: "Your order shipped"},
			`{"type":"text","text":{"preview_url":false,"body":"Your order shipped"}}`},
		{"document", &chat.Message{Text: "Your invoice", Media: &chat.Media{
			URL: "https://cdn.example.com/inv.pdf", Kind: chat.MediaDocument, FileName: "INV-7.pdf", MIMEType: "application/pdf"}},
			`{"type":"document","document":{"link":"https://cdn.example.com/inv.pdf","caption":"Your invoice","filename":"INV-7.pdf"}}`},
		{"image", &chat.Message{Text: "Look", Media: &chat.Media{
			URL: "https://cdn.example.com/a.jpg", Kind: chat.MediaImage, FileName: "a.jpg", MIMEType: "image/jpeg"}},
			`{"type":"image","image":{"link":"https://cdn.example.com/a.jpg","caption":"Look"}}`},
		{"video", &chat.Message{Media: &chat.Media{
			URL: "https://cdn.example.com/a.mp4", Kind: chat.MediaVideo, FileName: "a.mp4", MIMEType: "video/mp4"}},
			`{"type":"video","video":{"link":"https://cdn.example.com/a.mp4"}}`},
		{"template", &chat.Message{Template: &chat.Template{
			Name: "order_confirmed", Language: "en_US", Params: []string{"Asha", "A-1042"}}},
			`{"type":"template","template":{"name":"order_confirmed","language":{"code":"en_US"},"components":[
				{"type":"body","parameters":[{"type":"text","text":"Asha"},{"type":"text","text":"A-1042"}]}]}}`},
		{"template with document header", &chat.Message{Template: &chat.Template{
			Name: "invoice_ready", Language: "en", Params: []string{"INV-7"},
			HeaderURL: "https://cdn.example.com/inv.pdf", HeaderKind: chat.MediaDocument}},
			`{"type":"template","template":{"name":"invoice_ready","language":{"code":"en"},"components":[
				{"type":"header","parameters":[{"type":"document","document":{"link":"https://cdn.example.com/inv.pdf"}}]},
				{"type":"body","parameters":[{"type":"text","text":"INV-7"}]}]}}`},
		{"template default language, image header", &chat.Message{Template: &chat.Template{
			Name: "standard_otp", Params: []string{"482915"}, HeaderURL: "https://cdn.example.com/logo.png", HeaderKind: chat.MediaImage}},
			`{"type":"template","template":{"name":"standard_otp","language":{"code":"en_US"},"components":[
				{"type":"header","parameters":[{"type":"image","image":{"link":"https://cdn.example.com/logo.png"}}]},
				{"type":"body","parameters":[{"type":"text","text":"482915"}]}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.Send(context.Background(), chatEnv("9876543210", tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.ProviderMessageID, "wamid.") || res.Route != string(chat.GatewayCloud) || res.Provider != "cloudchat" {
				t.Fatalf("result %+v", res)
			}
			got := vendor.Last()
			if got["messaging_product"] != "whatsapp" || got["recipient_type"] != "individual" || got["to"] != "919876543210" {
				t.Fatalf("envelope fields: %v", got)
			}
			if got["biz_opaque_callback_data"] != notify.MessageRef("acme", "6f1c2a7e-1d2b-4c3d-9e8f-0a1b2c3d4e5f") {
				t.Errorf("callback data = %v, want the message's reference", got["biz_opaque_callback_data"])
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			for k, v := range want {
				gj, _ := json.Marshal(got[k])
				wj, _ := json.Marshal(v)
				if string(gj) != string(wj) {
					t.Errorf("%s:\n got %s\nwant %s", k, gj, wj)
				}
			}
		})
	}
}

// TestVendorErrors checks the classification of the vendor's error codes
// and of the answers of a path that may have lost the message: a proxy
// in front of the vendor answers 502 or 504 with its own page (the vendor
// may have the message behind it; here, for the 504, it does), or the
// vendor takes the message and the connection drops before its answer.
// Those are of unknown outcome: a retry would send the message twice.
func TestVendorErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        graphErr
		fault      fault
		accepted   int    // messages the vendor took
		to         string // default in the 24h window
		msg        *chat.Message
		code       notify.Code
		contains   string
		retryAfter time.Duration
	}{
		{name: "throughput", err: gerr(400, 130429, "(#130429) Rate limit hit", ""), code: notify.CodeRateLimited, contains: "130429"},
		{name: "pair rate", err: gerr(400, 131056, "(#131056) (Business Account, Consumer Account) pair rate limit hit", ""),
			code: notify.CodeRateLimited, retryAfter: 6 * time.Second},
		{name: "spam rate", err: gerr(400, 131048, "(#131048) Spam rate limit hit", ""), code: notify.CodeRateLimited},
		{name: "bad token", err: gerr(401, 190, "Error validating access token: Session has expired", ""),
			code: notify.CodeRejected, contains: "Config.Token"},
		{name: "undeliverable", err: gerr(400, 131026, "(#131026) Message Undeliverable", ""), code: notify.CodeRejected, contains: "undeliverable"},
		{name: "something went wrong", err: somethingWentWrong, code: notify.CodeUnavailable, contains: "the message was not sent; retried"},
		{name: "API unknown", err: gerr(400, 1, "An unknown error occurred", ""), code: notify.CodeRejected, contains: "code 1,"},
		{name: "API unknown on a 5xx", err: gerr(500, 1, "An unknown error occurred", ""), code: notify.CodeUnavailable, contains: "code 1,"},
		// "Service unavailable" is documented as the vendor being down for
		// a while: the message was not taken.
		{name: "service unavailable", err: serviceUnavailable, code: notify.CodeUnavailable},
		{name: "API service down", err: gerr(503, 2, "Service temporarily unavailable", ""), code: notify.CodeUnavailable},
		{name: "server temporarily unavailable", err: gerr(503, 133004, "(#133004) Server temporarily unavailable", ""), code: notify.CodeUnavailable},
		{name: "unknown code on 5xx", err: gerr(503, 999999, "busy", ""), code: notify.CodeUnavailable, contains: "code 999999"},
		{name: "unknown code on 4xx", err: gerr(400, 999999, "something odd", ""), code: notify.CodeRejected},
		{name: "permission", err: gerr(403, 10, "(#10) Application does not have permission for this action", ""),
			code: notify.CodeRejected, contains: "PhoneNumberID"},
		// The vendor reports 131047 in a status webhook, but documents it as
		// an answer too.
		{name: "outside 24h window", err: gerr(400, 131047, "(#131047) Re-engagement message", ""),
			code: notify.CodeRejected, contains: "only a template message can be sent"},
		// Real answers of the fake's own validation:
		{name: "template does not exist", msg: &chat.Message{Template: &chat.Template{Name: "nope", Params: []string{"x"}}},
			code: notify.CodeRejected, contains: "132001"},
		{name: "template parameter mismatch", msg: &chat.Message{Template: &chat.Template{Name: "order_confirmed", Params: []string{"x"}}},
			code: notify.CodeRejected, contains: "132000"},
		{name: "proxy 502", fault: fault{Proxy: http.StatusBadGateway}, code: notify.CodeOutcomeUnknown},
		{name: "proxy 504 after acceptance", fault: fault{Proxy: http.StatusGatewayTimeout, Accept: true}, accepted: 1,
			code: notify.CodeOutcomeUnknown},
		{name: "answer lost after acceptance", fault: fault{Lose: true}, accepted: 1, code: notify.CodeOutcomeUnknown,
			contains: "may have accepted the message"},
	}
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Code != 0 {
				vendor.FailNextWith(tt.err)
			}
			if tt.fault != (fault{}) {
				vendor.FailNextWithFault(tt.fault)
			}
			to, msg := tt.to, tt.msg
			if to == "" {
				to = "9876543210"
			}
			if msg == nil {
				msg = &chat.Message{Text: "482915 is your code", OTP: "482915"}
			}
			requests, before := vendor.Requests(), vendor.Count()
			_, err := p.Send(context.Background(), chatEnv(to, msg))
			if got := notify.CodeOf(err); got != tt.code {
				t.Fatalf("code %q (%v), want %q", got, err, tt.code)
			}
			if want := tt.code == notify.CodeOutcomeUnknown; (notify.OutcomeOf(err) == record.StateUnknown) != want {
				t.Errorf("outcome %v for code %q", notify.OutcomeOf(err), tt.code)
			}
			if want := tt.code == notify.CodeUnavailable || tt.code == notify.CodeRateLimited; notify.IsRetryable(err) != want {
				t.Errorf("IsRetryable = %v for code %q", !want, tt.code)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
			if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "482915") {
				t.Errorf("error leaks a secret: %v", err)
			}
			var e *notify.Error
			if errors.As(err, &e) && e.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.retryAfter)
			}
			if got, took := vendor.Requests()-requests, vendor.Count()-before; got != 1 || took != tt.accepted {
				t.Errorf("the vendor took %d messages of %d requests, want exactly %d of 1", took, got, tt.accepted)
			}
		})
	}
	// The vendor works again.
	if _, err := p.Send(context.Background(), chatEnv("9876543210", &chat.Message{Text: "hi"})); err != nil {
		t.Fatal(err)
	}
}

func TestWrongToken(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, "EAAG-wrong-token-000")
	_, err := p.Send(context.Background(), chatEnv("9876543210", &chat.Message{Text: "hi"}))
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "190") {
		t.Fatalf("got %v, want Rejected with code 190", err)
	}
	if strings.Contains(err.Error(), "EAAG-wrong-token-000") {
		t.Fatal("the error holds the token")
	}
	if err := p.CheckHealth(context.Background()); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("CheckHealth with a wrong token: %v", err)
	}
	if err := newProvider(t, vendor, testToken).CheckHealth(context.Background()); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
}

// TestNonJSONErrors: a proxy in front of the vendor may answer with HTML,
// or with nothing.
func TestNonJSONErrors(t *testing.T) {
	for _, tt := range []struct {
		status int
		header string
		body   string
		code   notify.Code
		after  time.Duration
		health notify.Code // of CheckHealth, which sends nothing
	}{
		{502, "", "<html>Bad Gateway</html>", notify.CodeOutcomeUnknown, 0, notify.CodeUnavailable},
		{504, "", "<html>Gateway Timeout</html>", notify.CodeOutcomeUnknown, 0, notify.CodeUnavailable},
		{500, "", "", notify.CodeOutcomeUnknown, 0, notify.CodeUnavailable},
		{429, "7", "<html>Too Many Requests</html>", notify.CodeRateLimited, 7 * time.Second, notify.CodeRateLimited},
		{404, "", "<html>Not Found</html>", notify.CodeRejected, 0, notify.CodeRejected},
	} {
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			if tt.header != "" {
				w.Header().Set("Retry-After", tt.header)
			}
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(tt.status)
			w.Write([]byte(tt.body))
		}))
		p, _ := cloudchat.New(cloudchat.Config{BaseURL: srv.URL, PhoneNumberID: testPhoneID, Token: testToken})
		_, err := p.Send(context.Background(), chatEnv("9876543210", &chat.Message{Text: "hi"}))
		sent := hits.Load()
		health := p.CheckHealth(context.Background())
		srv.Close()
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != tt.code || e.RetryAfter != tt.after {
			t.Errorf("HTTP %d: got %v, want %s (RetryAfter %v)", tt.status, err, tt.code, tt.after)
		}
		if tt.code == notify.CodeOutcomeUnknown && (notify.IsRetryable(err) || !strings.Contains(err.Error(), "may have accepted the message")) {
			t.Errorf("HTTP %d: %v is retryable or does not say why not", tt.status, err)
		}
		if sent != 1 {
			t.Errorf("HTTP %d: the server got %d requests, want 1", tt.status, sent)
		}
		if notify.CodeOf(health) != tt.health {
			t.Errorf("HTTP %d: CheckHealth = %v, want %s", tt.status, health, tt.health)
		}
	}
}

// TestCloud131000IsARefusal: "Something went wrong" is the vendor's
// catch-all, in its own error object, documented as "Message failed to
// send due to an unknown error": a certain refusal, temporary, with the
// vendor's error reachable; the HTTP 500 it comes with changes nothing.
func TestCloud131000IsARefusal(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	vendor.FailNextWith(somethingWentWrong)
	_, err := p.Send(context.Background(), chatEnv("9876543210", &chat.Message{Text: "482915 is your code", OTP: "482915"}))
	if notify.OutcomeOf(err) != record.StateFailed || !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("131000: %v, want a retryable unavailable", err)
	}
	var ce *cloudchat.Error
	if !errors.As(err, &ce) || ce.Code != 131000 || ce.HTTPStatus != 500 {
		t.Errorf("131000: the vendor's error is not reachable with errors.As: %+v", ce)
	}
	if !strings.Contains(err.Error(), "131000") || !strings.Contains(err.Error(), "AbCdEfGh123") || strings.Contains(err.Error(), "482915") {
		t.Errorf("131000: message %q lacks the code or trace ID, or holds the OTP", err)
	}
	if vendor.Requests() != 1 || vendor.Count() != 0 {
		t.Fatalf("the fake got %d requests and accepted %d, want exactly 1 and 0", vendor.Requests(), vendor.Count())
	}
}

// TestTransportErrors: a request that never left is Unavailable (retried);
// one whose answer was lost, or that succeeded without an ID, is of unknown
// outcome (never retried).
func TestTransportErrors(t *testing.T) {
	// Nothing listens: the dial fails before anything is sent.
	addr := vendorhttptest.ClosedAddr(t)
	p, _ := cloudchat.New(cloudchat.Config{BaseURL: "http://" + addr, PhoneNumberID: testPhoneID, Token: testToken})
	_, err := p.Send(context.Background(), chatEnv("9876543210", &chat.Message{Text: "hi"}))
	if notify.CodeOf(err) != notify.CodeUnavailable || !notify.IsRetryable(err) {
		t.Fatalf("refused connection: %v, want Unavailable", err)
	}

	// A context that ended before Send: nothing was sent.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Send(ctx, chatEnv("9876543210", &chat.Message{Text: "hi"}))
	if !notify.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v, want Unavailable wrapping context.Canceled", err)
	}

	// 200 without an ID: the message may be on its way.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"messaging_product":"whatsapp","messages":[]}`))
	}))
	defer srv.Close()
	p, _ = cloudchat.New(cloudchat.Config{BaseURL: srv.URL, PhoneNumberID: testPhoneID, Token: testToken})
	_, err = p.Send(context.Background(), chatEnv("9876543210", &chat.Message{Text: "hi"}))
	if notify.OutcomeOf(err) != record.StateUnknown || !strings.Contains(err.Error(), "without a message ID") {
		t.Fatalf("200 without an ID: %v, want an unknown outcome", err)
	}
}

func TestBadEnvelopes(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	for name, env := range map[string]*notify.Envelope{
		"nil chat":          {Kind: chat.Kind, To: "9876543210"},
		"empty chat":        chatEnv("9876543210", &chat.Message{}),
		"bad number":        chatEnv("98765-43210", &chat.Message{Text: "hi"}),
		"nameless":          chatEnv("9876543210", &chat.Message{Template: &chat.Template{}}),
		"media without url": chatEnv("9876543210", &chat.Message{Media: &chat.Media{Kind: chat.MediaImage}}),
	} {
		_, err := p.Send(context.Background(), env)
		if notify.CodeOf(err) != notify.CodeInvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	if _, err := p.Send(context.Background(), nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("nil envelope: %v", err)
	}
	if vendor.Count() != 0 {
		t.Error("a bad envelope reached the vendor")
	}
}

func TestNewValidates(t *testing.T) {
	for name, cfg := range map[string]cloudchat.Config{
		"no phone id":   {Token: "t"},
		"phone id path": {PhoneNumberID: "123/../x", Token: "t"},
		"no token":      {PhoneNumberID: "123"},
		"token newline": {PhoneNumberID: "123", Token: "EAAG-pasted\n"},
		"bad version":   {PhoneNumberID: "123", Token: "t", Version: "21"},
		"bad base":      {PhoneNumberID: "123", Token: "t", BaseURL: "graph.example.com"},
		"userinfo base": {PhoneNumberID: "123", Token: "t", BaseURL: "https://u:p@graph.example.com"},
		"bad country":   {PhoneNumberID: "123", Token: "t", CountryCode: "+91"},
	} {
		if _, err := cloudchat.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		} else if cfg.Token != "" && strings.Contains(err.Error(), cfg.Token+"\"") {
			t.Errorf("%s: error holds the token", name)
		}
	}
	p, err := cloudchat.New(cloudchat.Config{PhoneNumberID: "123", Token: "t", Version: "v20"})
	if err != nil || p.Name() != "cloudchat" {
		t.Fatalf("defaults: %v", err)
	}
}

// TestBaseURLForms: Config.BaseURL may be the API's root, the root with
// the version, or the messages endpoint the vendor documents; the vendor
// sees /{version}/{phone number ID}/messages for a send and
// /{version}/{phone number ID} for CheckHealth, never a path twice.
func TestBaseURLForms(t *testing.T) {
	srv, paths := vendorhttptest.Paths(t, 1, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, `{"id":"`+testPhoneID+`"}`)
			return
		}
		_, _ = io.WriteString(w, `{"messaging_product":"whatsapp","contacts":[{"input":"919876543210","wa_id":"919876543210"}],"messages":[{"id":"wamid.1"}]}`)
	})
	for _, tt := range []struct{ base, version, want string }{
		{srv.URL, "", "/v25.0/" + testPhoneID},
		{srv.URL + "/", "v20.0", "/v20.0/" + testPhoneID},
		{srv.URL + "/v19.0", "", "/v19.0/" + testPhoneID},
		{srv.URL + "/v19.0/", "v19.0", "/v19.0/" + testPhoneID},
		{srv.URL + "/v25.0/" + testPhoneID, "", "/v25.0/" + testPhoneID},
		{srv.URL + "/v25.0/" + testPhoneID + "/messages", "", "/v25.0/" + testPhoneID},
		{srv.URL + "/v18.0/" + testPhoneID + "/messages/", "", "/v18.0/" + testPhoneID},
		{srv.URL + "/graph-proxy", "", "/graph-proxy/v25.0/" + testPhoneID},
		{srv.URL + "/graph-proxy/v25.0/" + testPhoneID + "/messages", "", "/graph-proxy/v25.0/" + testPhoneID},
	} {
		p, err := cloudchat.New(cloudchat.Config{BaseURL: tt.base, Version: tt.version, PhoneNumberID: testPhoneID,
			Token: testToken, HTTPClient: srv.Client()})
		if err != nil {
			t.Fatalf("%s: %v", tt.base, err)
		}
		if _, err := p.Send(t.Context(), chatEnv("9876543210", &chat.Message{Text: "hi"})); err != nil {
			t.Fatalf("%s: Send: %v", tt.base, err)
		}
		if got := <-paths; got != tt.want+"/messages" {
			t.Errorf("BaseURL %s: the send went to %s, want %s/messages", tt.base, got, tt.want)
		}
		if err := p.CheckHealth(t.Context()); err != nil {
			t.Fatalf("%s: CheckHealth: %v", tt.base, err)
		}
		if got := <-paths; got != tt.want {
			t.Errorf("BaseURL %s: CheckHealth went to %s, want %s", tt.base, got, tt.want)
		}
	}
	// A URL that names another version or phone number ID than the
	// configuration is a mistake to report, not to guess at.
	for _, cfg := range []cloudchat.Config{
		{BaseURL: srv.URL + "/v19.0/" + testPhoneID + "/messages", Version: "v25.0", PhoneNumberID: testPhoneID, Token: testToken},
		{BaseURL: srv.URL + "/v25.0/999/messages", PhoneNumberID: testPhoneID, Token: testToken},
	} {
		if _, err := cloudchat.New(cfg); err == nil || strings.Contains(err.Error(), testToken) {
			t.Errorf("New(%s, Version %q): %v, want an error", cfg.BaseURL, cfg.Version, err)
		}
	}
}
