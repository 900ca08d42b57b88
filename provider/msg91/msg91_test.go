package msg91_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/record"
)

func TestSendWireFormat(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	bare := dltEnvelope(0)
	bare.To = "98765 00000"
	tests := []struct {
		name string
		env  *notify.Envelope
		want msg91test.Sent
	}{
		{"dlt route: the MSG91 template and the DLT values as VAR1, VAR2", dltEnvelope(0), msg91test.Sent{
			TemplateID: tplID, DLTTemplateID: dltID, Sender: "ACMECO",
			Recipients: []msg91test.Recipient{{Mobile: "919876500000", Vars: map[string]string{"VAR1": "login", "VAR2": testOTP},
				Text: "Your OTP for login is 482913. - ACMECO"}}}},
		{"otp route: the OTP template with the code", otpEnvelope(1), msg91test.Sent{
			TemplateID: otpTplID, DLTTemplateID: "1107169876543210987", Sender: "ACMECO",
			Recipients: []msg91test.Recipient{{Mobile: "919876500001", Vars: map[string]string{"OTP": testOTP},
				Text: "482913 is your Acme verification code. - ACMECO"}}}},
		{"a bare Indian number takes 91", bare, msg91test.Sent{
			TemplateID: tplID, DLTTemplateID: dltID, Sender: "ACMECO",
			Recipients: []msg91test.Recipient{{Mobile: "919876500000", Vars: map[string]string{"VAR1": "login", "VAR2": testOTP},
				Text: "Your OTP for login is 482913. - ACMECO"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(v.Sent())
			res, err := p.Send(t.Context(), tt.env)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			sent := v.Sent()
			if len(sent) != before+1 {
				t.Fatalf("MSG91 has %d requests, want %d", len(sent), before+1)
			}
			got := sent[before]
			if res.ProviderMessageID != got.RequestID || res.Provider != msg91.DefaultName || len(got.RequestID) != 24 {
				t.Errorf("Result = %+v, MSG91's request ID %q", res, got.RequestID)
			}
			got.RequestID = ""
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("MSG91 got %+v\nwant          %+v", got, tt.want)
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	for _, to := range []string{"+919876543210", "919876543210", "9876543210", "09876543210", "+91 98765-43210", "(+91) 98765.43210"} {
		env := dltEnvelope(0)
		env.To = to
		if _, err := p.Send(t.Context(), env); err != nil {
			t.Errorf("%q: %v", to, err)
			continue
		}
		sent := v.Sent()
		if got := sent[len(sent)-1].Recipients[0].Mobile; got != "919876543210" {
			t.Errorf("%q went as %q", to, got)
		}
	}
	before := v.Requests()
	for _, to := range []string{"", "12345", "+91 12345 67890", "+9198765", "98765432101", "+0123456789", "+123456", "abc", "+91987654321x"} {
		env := dltEnvelope(0)
		env.To = to
		_, err := p.Send(t.Context(), env)
		if !hasField(err, "to") {
			t.Errorf("%q: %v, want invalid_argument naming to", to, err)
		}
	}
	if v.Requests() != before {
		t.Error("a bad number reached MSG91")
	}
}

// hasField reports whether err is InvalidArgument naming field.
func hasField(err error, field string) bool {
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
		return false
	}
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// TestRefusals: what MSG91 could not take is refused before any I/O,
// naming the field and what to do.
func TestRefusals(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	noOTP, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: v.URL, HTTPClient: v.Client()})
	if err != nil {
		t.Fatal(err)
	}
	named, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: v.URL, HTTPClient: v.Client(),
		TemplateVars: map[string][]string{tplID: {"name", "date", "amount"}}})
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(m *sms.Message)) *notify.Envelope {
		env := dltEnvelope(0)
		f(sms.MessageOf(env))
		return env
	}
	tests := []struct {
		name  string
		p     *msg91.Provider
		env   *notify.Envelope
		field string
		says  []string
	}{
		{"sms route", p, &notify.Envelope{Kind: sms.Kind, To: "+919876543210", Content: &sms.Message{Route: sms.RouteSMS, Text: "hi"}},
			"route", []string{"free text", "dlt route", "message_id"}},
		{"no route is the sms route", p, &notify.Envelope{Kind: sms.Kind, To: "+919876543210", Content: &sms.Message{Text: "hi"}},
			"route", []string{"free text"}},
		{"otp route without an OTP template", noOTP, otpEnvelope(0), "route", []string{"Config.OTPTemplateID"}},
		{"otp route without a code", p, with(func(m *sms.Message) { *m = sms.Message{Route: sms.RouteOTP, OTP: "12a4"} }),
			"message", []string{"4-8 digits"}},
		{"dlt route without the MSG91 template ID", p, with(func(m *sms.Message) { m.DLTMessageID = "" }),
			"dlt_message_id", []string{"message_id", "MSG91 template ID"}},
		{"dlt values the template's variables do not take", named, dltEnvelope(0), "message",
			[]string{"takes 3 variables", "Config.TemplateVars", "has 2"}},
		{"another route", p, with(func(m *sms.Message) { m.Route = "voice" }), "route", []string{`"voice"`}},
		{"no SMS content", p, &notify.Envelope{Kind: sms.Kind, To: "+919876543210"}, "message", []string{"SMS envelopes only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := v.Requests()
			_, err := tt.p.Send(t.Context(), tt.env)
			if !hasField(err, tt.field) {
				t.Fatalf("Send: %v, want invalid_argument naming %s", err, tt.field)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), testOTP) || strings.Contains(err.Error(), testKey) {
				t.Errorf("%q holds a secret", err)
			}
			if v.Requests() != before {
				t.Error("the refused envelope reached MSG91")
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		cfg  msg91.Config
		says string
	}{
		{"no key", msg91.Config{}, "AuthKey is required"},
		{"a key with a line break", msg91.Config{AuthKey: testKey + "\n"}, "control characters"},
		{"not http", msg91.Config{AuthKey: testKey, BaseURL: "ftp://control.msg91.com"}, "BaseURL"},
		{"no host", msg91.Config{AuthKey: testKey, BaseURL: "https://"}, "BaseURL"},
		{"credentials", msg91.Config{AuthKey: testKey, BaseURL: "https://u:p@control.msg91.com"}, "BaseURL"},
		{"a query", msg91.Config{AuthKey: testKey, BaseURL: "https://control.msg91.com/api/v5/flow?authkey=x"}, "BaseURL"},
		{"negative batch", msg91.Config{AuthKey: testKey, MaxBatch: -1}, "MaxBatch"},
		{"OTP variable is the number", msg91.Config{AuthKey: testKey, OTPVar: "Mobiles"}, "Config.OTPVar"},
		{"prefix with a space", msg91.Config{AuthKey: testKey, VarPrefix: "V AR"}, "Config.VarPrefix"},
		{"OTP template with a space", msg91.Config{AuthKey: testKey, OTPTemplateID: "66bd 07f7"}, "Config.OTPTemplateID"},
		{"template variable empty", msg91.Config{AuthKey: testKey, TemplateVars: map[string][]string{tplID: {"name", ""}}}, "TemplateVars"},
		{"template variable twice", msg91.Config{AuthKey: testKey, TemplateVars: map[string][]string{tplID: {"name", "name"}}}, "twice"},
		{"template variable is the number", msg91.Config{AuthKey: testKey, TemplateVars: map[string][]string{tplID: {"mobiles"}}}, "recipient"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := msg91.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("New: %v, want an error saying %q", err, tt.says)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("%q holds the key", err)
			}
		})
	}
	p, err := msg91.New(msg91.Config{AuthKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "msg91" || p.MaxBatch() != msg91.DefaultMaxBatch {
		t.Errorf("defaults: name %q, batch %d", p.Name(), p.MaxBatch())
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
}

// TestBaseURL: the base URL and the endpoint itself, in any case and with
// a trailing slash, reach the same endpoint.
func TestBaseURL(t *testing.T) {
	v := newVendor(t)
	for _, base := range []string{v.URL, v.URL + "/", v.URL + "/api/v5/flow", v.URL + "/API/V5/Flow/"} {
		p, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: base, HTTPClient: v.Client()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(t.Context(), dltEnvelope(0)); err != nil {
			t.Errorf("BaseURL %q: %v", base, err)
		}
	}
}

// TestVariables: templates whose variables have names of their own, a
// prefix of another case, and short URLs.
func TestVariables(t *testing.T) {
	v := msg91test.NewServer(msg91test.Config{AuthKey: testKey, Templates: []msg91test.Template{
		{ID: "named", Content: "Hi ##name##, your bill of ##amount## is due. - ACMECO"},
		{ID: "lower", Content: "Order ##var1## ships ##var2##. - ACMECO"},
		{ID: "otp-lower", Content: "Your code is ##otp##. - ACMECO"},
	}})
	defer v.Close()
	p, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: v.URL, HTTPClient: v.Client(), VarPrefix: "var",
		OTPTemplateID: "otp-lower", OTPVar: "otp", ShortURL: true,
		TemplateVars: map[string][]string{"named": {"name", "amount"}}})
	if err != nil {
		t.Fatal(err)
	}
	send := func(id string, values ...string) string {
		t.Helper()
		env := dltEnvelope(0)
		m := sms.MessageOf(env)
		m.DLTMessageID, m.DLTValues = id, values
		if _, err := p.Send(t.Context(), env); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		sent := v.Sent()
		last := sent[len(sent)-1]
		if !last.ShortURL {
			t.Errorf("%s: short_url is not 1", id)
		}
		return last.Recipients[0].Text
	}
	if got := send("named", "Asha", "Rs 450"); got != "Hi Asha, your bill of Rs 450 is due. - ACMECO" {
		t.Errorf("named: %q", got)
	}
	if got := send("lower", "A-17", "today"); got != "Order A-17 ships today. - ACMECO" {
		t.Errorf("lower: %q", got)
	}
	if _, err := p.Send(t.Context(), otpEnvelope(0)); err != nil {
		t.Fatal(err)
	}
	sent := v.Sent()
	if got := sent[len(sent)-1].Recipients[0].Text; got != "Your code is 482913. - ACMECO" {
		t.Errorf("otp: %q", got)
	}
}

func TestSendBatch(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	envs := []*notify.Envelope{dltEnvelope(0), dltEnvelope(1), dltEnvelope(2)}
	res, err := p.SendBatch(t.Context(), envs)
	if err != nil {
		t.Fatal(err)
	}
	sent := v.Sent()
	if v.Requests() != 1 || len(sent) != 1 || len(sent[0].Recipients) != 3 || v.Accepted() != 3 {
		t.Fatalf("MSG91 got %d requests: %+v", v.Requests(), sent)
	}
	for i, r := range sent[0].Recipients {
		if want := fmt.Sprintf("9198765%05d", i); r.Mobile != want || r.Vars["VAR2"] != testOTP {
			t.Errorf("recipient %d: %+v", i, r)
		}
	}
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res {
		if r.ProviderMessageID != sent[0].RequestID || r.Provider != "msg91" {
			t.Errorf("result %d: %+v", i, r)
		}
	}

	other := dltEnvelope(5)
	sms.MessageOf(other).DLTValues = []string{"signup", testOTP}
	tooMany, _ := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: v.URL, HTTPClient: v.Client(), MaxBatch: 2})
	bad := map[string]struct {
		p    *msg91.Provider
		envs []*notify.Envelope
	}{
		"empty":             {p, nil},
		"over MaxBatch":     {tooMany, envs},
		"different values":  {p, []*notify.Envelope{dltEnvelope(0), other}},
		"a number twice":    {p, []*notify.Envelope{dltEnvelope(0), dltEnvelope(1), dltEnvelope(0)}},
		"different routes":  {p, []*notify.Envelope{dltEnvelope(0), otpEnvelope(1)}},
		"a bad envelope":    {p, []*notify.Envelope{dltEnvelope(0), {Kind: sms.Kind, To: "+919876543210"}}},
		"the plain sms one": {p, []*notify.Envelope{{Kind: sms.Kind, To: "+919876543210", Content: &sms.Message{Text: "hi"}}}},
	}
	for name, b := range bad {
		if _, err := b.p.SendBatch(t.Context(), b.envs); notify.CodeOf(err) != notify.CodeInvalidArgument {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}
	if v.Requests() != 1 {
		t.Errorf("a refused batch reached MSG91")
	}
	v.FailNext(msg91test.InvalidMobile)
	if _, err := p.SendBatch(t.Context(), envs); notify.CodeOf(err) != notify.CodeRejected {
		t.Errorf("a refused batch: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.SendBatch(ctx, envs); !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("a canceled batch: %v", err)
	}
}

// TestAnswers classifies every kind of answer: MSG91's own error body is
// a certain refusal whatever the HTTP status, with its code and message
// in an *msg91.Error; anything else not MSG91's is unknown on a 2xx or
// 5xx.
func TestAnswers(t *testing.T) {
	type answer struct {
		status int
		header string // Retry-After
		body   string
	}
	tests := []struct {
		name    string
		answer  answer
		code    notify.Code // "" for success
		vendor  string      // *msg91.Error's Code, "-" for none
		says    string
		retryIn time.Duration
	}{
		{"success", answer{200, "", `{"message":"5762846b4f8d285d378b4567","type":"success"}`}, "", "-", "", 0},
		{"success in another case", answer{200, "", `{"type":"SUCCESS","message":" 5762846b4f8d285d378b4567 "}`}, "", "-", "", 0},
		{"MSG91's success on a 5xx is still its success", answer{500, "", `{"type":"success","message":"abc123"}`}, "", "-", "", 0},

		{"wrong auth key", answer{401, "", `{"type":"error","code":"401","message":"AuthenticationFailure"}`},
			notify.CodeRejected, "401", "check msg91 Config.AuthKey", 0},
		{"missing auth key, on 200", answer{200, "", `{"type":"error","message":"Missing Authentication Key","code":"106"}`},
			notify.CodeRejected, "106", "Config.AuthKey", 0},
		{"invalid auth key 207", answer{400, "", `{"type":"error","message":"Invalid authentication key","code":207}`},
			notify.CodeRejected, "207", "Config.AuthKey", 0},
		{"an auth key by its words", answer{403, "", `{"type":"error","message":"Invalid authkey"}`},
			notify.CodeRejected, "", "Config.AuthKey", 0},
		{"IP not whitelisted, a number code on 200", answer{200, "", `{"type":"error","code":418,"message":"AuthenticationFailure"}`},
			notify.CodeRejected, "418", "whitelist it", 0},
		{"IP by its words", answer{401, "", `{"type":"error","message":"Your IP is not whitelisted"}`},
			notify.CodeRejected, "", "whitelist it", 0},
		{"insufficient balance", answer{200, "", `{"type":"error","message":"Insufficient balance","code":"301"}`},
			notify.CodeUnavailable, "301", "top it up", 0},
		{"balance by its words", answer{400, "", `{"type":"error","message":"Low balance in your account"}`},
			notify.CodeUnavailable, "", "top it up", 0},
		{"the same request within 10 seconds", answer{200, "", `{"type":"error","message":"Request discarded","code":"311"}`},
			notify.CodeRateLimited, "311", "10 seconds", 10 * time.Second},
		{"too many requests", answer{429, "30", `{"type":"error","message":"Too many requests"}`},
			notify.CodeRateLimited, "", "Too many requests", 30 * time.Second},
		{"a rate limit on 200", answer{200, "", `{"type":"error","message":"Rate limit exceeded"}`},
			notify.CodeRateLimited, "", "Rate limit", 0},
		{"invalid mobile", answer{400, "", `{"type":"error","message":"Invalid mobile number","code":"202"}`},
			notify.CodeRejected, "202", "refused the number", 0},
		{"mobile by its words", answer{400, "", `{"type":"error","message":"Mobile no. not valid"}`},
			notify.CodeRejected, "", "refused the number", 0},
		{"template not found", answer{400, "", `{"type":"error","message":"Template ID is invalid"}`},
			notify.CodeRejected, "", "template is approved", 0},
		{"template not approved", answer{200, "", `{"type":"error","message":"Template is not approved"}`},
			notify.CodeRejected, "", "template is approved", 0},
		{"flow id", answer{400, "", `{"type":"error","message":"flow id missing"}`},
			notify.CodeRejected, "", "template is approved", 0},
		{"a DLT mismatch", answer{400, "", `{"type":"error","message":"DLT template ID mismatch"}`},
			notify.CodeRejected, "", "DLT registration", 0},
		{"NDNC", answer{400, "", `{"type":"error","message":"Number is in NDNC"}`},
			notify.CodeRejected, "", "refused the number", 0},
		{"blocked", answer{200, "", `{"type":"error","message":"Blocked number"}`},
			notify.CodeRejected, "", "refused the number", 0},
		{"route closed at this hour", answer{200, "", `{"type":"error","message":"Route unavailable","code":"306"}`},
			notify.CodeUnavailable, "306", "closed", 0},
		{"MSG91's internal error on a 500", answer{500, "", `{"type":"error","code":"601","message":"Internal error. Please contact support"}`},
			notify.CodeUnavailable, "601", "retried", 0},
		{"an unknown error on a 503: MSG91 sheds load", answer{503, "", `{"type":"error","message":"busy"}`},
			notify.CodeUnavailable, "", "busy (HTTP 503)", 0},
		{"an unknown error on a 429", answer{429, "5", `{"type":"error","message":"slow down"}`},
			notify.CodeRateLimited, "", "slow down", 5 * time.Second},
		{"an unknown error on a 400", answer{400, "", `{"type":"error","message":"Something is wrong","code":"999"}`},
			notify.CodeRejected, "999", "Something is wrong (code 999, HTTP 400)", 0},
		{"type in another case, no message", answer{200, "", `{"type":"ERROR"}`},
			notify.CodeRejected, "", "MSG91 refused the message (HTTP 200)", 0},
		{"a message that is not a string", answer{400, "", `{"type":"error","message":{"mobiles":["invalid"]}}`},
			notify.CodeRejected, "", `{"mobiles":["invalid"]}`, 0},

		{"a proxy's 502", answer{502, "", `<html><body>Bad Gateway</body></html>`}, notify.CodeOutcomeUnknown, "-", "HTTP 502", 0},
		{"an empty 503", answer{503, "", ``}, notify.CodeOutcomeUnknown, "-", "HTTP 503", 0},
		{"a 500 of another JSON", answer{500, "", `{"status":"error"}`}, notify.CodeOutcomeUnknown, "-", `no "type"`, 0},
		{"success without an ID", answer{200, "", `{"type":"success"}`}, notify.CodeOutcomeUnknown, "-", "without a request ID", 0},
		{"success with an empty ID", answer{200, "", `{"type":"success","message":"  "}`}, notify.CodeOutcomeUnknown, "-", "without a request ID", 0},
		{"success with an ID that is not one", answer{200, "", `{"type":"success","message":"abc\ndef"}`}, notify.CodeOutcomeUnknown, "-", "not one", 0},
		{"a 200 that is not JSON", answer{200, "", `OK`}, notify.CodeOutcomeUnknown, "-", "not MSG91's JSON", 0},
		{"a 200 of null", answer{200, "", `null`}, notify.CodeOutcomeUnknown, "-", `no "type"`, 0},
		{"a cut answer", answer{200, "", `{"type":"succ`}, notify.CodeOutcomeUnknown, "-", "HTTP 200", 0},
		{"a bare 429", answer{429, "7", ``}, notify.CodeRateLimited, "-", "HTTP 429", 7 * time.Second},
		{"a proxy's 404", answer{404, "", `<html>not found</html>`}, notify.CodeRejected, "-", "HTTP 404", 0},
	}
	var current answer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if current.header != "" {
			w.Header().Set("Retry-After", current.header)
		}
		w.WriteHeader(current.status)
		_, _ = io.WriteString(w, current.body)
	}))
	defer srv.Close()
	p, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current = tt.answer
			res, err := p.Send(t.Context(), dltEnvelope(0))
			if tt.code == "" {
				if err != nil || res.ProviderMessageID == "" || strings.TrimSpace(res.ProviderMessageID) != res.ProviderMessageID {
					t.Fatalf("Send = %+v, %v; want a success", res, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Send succeeded: %+v", res)
			}
			if notify.CodeOf(err) != tt.code {
				t.Errorf("code %q, want %q: %v", notify.CodeOf(err), tt.code, err)
			}
			if want := record.StateFailed; tt.code != notify.CodeOutcomeUnknown && notify.OutcomeOf(err) != want {
				t.Errorf("outcome %v, want a certain refusal: %v", notify.OutcomeOf(err), err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("%q does not say %q", err, tt.says)
			}
			var me *msg91.Error
			switch {
			case tt.vendor == "-" && errors.As(err, &me):
				t.Errorf("an answer not MSG91's has an *msg91.Error: %+v", me)
			case tt.vendor != "-" && !errors.As(err, &me):
				t.Errorf("MSG91's error answer has no *msg91.Error: %v", err)
			case tt.vendor != "-" && (me.Code != tt.vendor || me.HTTPStatus != tt.answer.status):
				t.Errorf("*msg91.Error %+v, want code %q, HTTP %d", me, tt.vendor, tt.answer.status)
			}
			var ne *notify.Error
			if errors.As(err, &ne) && ne.RetryAfter != tt.retryIn {
				t.Errorf("RetryAfter %v, want %v", ne.RetryAfter, tt.retryIn)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("%q is more than one line", err)
			}
		})
	}
}

// TestNoSecretsInErrors: MSG91's text is stripped of the auth key and the
// message's code, should it quote them.
func TestNoSecretsInErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","message":"authkey %s and value %s refused"}`, testKey, testOTP)
	}))
	defer srv.Close()
	p, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: srv.URL, HTTPClient: srv.Client(), OTPTemplateID: otpTplID})
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []*notify.Envelope{otpEnvelope(0), dltEnvelope(0)} {
		_, err := p.Send(t.Context(), env)
		if err == nil || strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), testOTP) || !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("%s route: %v", sms.MessageOf(env).Route, err)
		}
	}
}

// TestTransport: the fake's injected failures, and a vendor that is not
// there, each with its outcome.
func TestTransport(t *testing.T) {
	v := newVendor(t)
	p := newProvider(t, v, testKey)
	tests := []struct {
		name     string
		inject   func()
		code     notify.Code
		accepted int
	}{
		{"a proxy's 503 page before MSG91", func() { v.FailNextHTTP(http.StatusServiceUnavailable) }, notify.CodeOutcomeUnknown, 0},
		{"a proxy's 504 page after MSG91 took it", func() { v.FailNextHTTPAfterAccept(http.StatusGatewayTimeout) }, notify.CodeOutcomeUnknown, 1},
		{"the connection drops after MSG91 took it", v.BreakNext, notify.CodeOutcomeUnknown, 1},
		{"MSG91's balance", func() { v.FailNext(msg91test.InsufficientBalance) }, notify.CodeUnavailable, 0},
		{"a pending template", func() { v.FailNext(msg91test.TemplateNotApproved) }, notify.CodeRejected, 0},
		{"MSG91's IP security", func() { v.FailNext(msg91test.IPNotWhitelisted) }, notify.CodeRejected, 0},
		{"a duplicate", func() { v.FailNext(msg91test.Duplicate) }, notify.CodeRateLimited, 0},
		{"bad variables", func() { v.FailNext(msg91test.InvalidVariables) }, notify.CodeRejected, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := v.Accepted()
			tt.inject()
			_, err := p.Send(t.Context(), dltEnvelope(0))
			if notify.CodeOf(err) != tt.code {
				t.Errorf("%v, want %s", err, tt.code)
			}
			if got := v.Accepted() - before; got != tt.accepted {
				t.Errorf("MSG91 accepted %d, want %d", got, tt.accepted)
			}
			if _, err := p.Send(t.Context(), dltEnvelope(0)); err != nil {
				t.Errorf("the next send: %v", err)
			}
		})
	}
	t.Run("a wrong key", func(t *testing.T) {
		_, err := newProvider(t, v, "not-the-key-0123456789").Send(t.Context(), dltEnvelope(0))
		var me *msg91.Error
		if notify.CodeOf(err) != notify.CodeRejected || !errors.As(err, &me) || me.Code != "401" || !strings.Contains(err.Error(), "Config.AuthKey") {
			t.Errorf("%v", err)
		}
	})
	t.Run("nobody there", func(t *testing.T) {
		gone := httptest.NewServer(http.NotFoundHandler())
		url := gone.URL
		gone.Close()
		p, err := msg91.New(msg91.Config{AuthKey: testKey, BaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.Send(t.Context(), dltEnvelope(0)); notify.CodeOf(err) != notify.CodeUnavailable || strings.Contains(err.Error(), url) {
			t.Errorf("%v, want unavailable without the URL", err)
		}
	})
}
