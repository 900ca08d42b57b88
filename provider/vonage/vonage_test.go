package vonage_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/provider/vonage"
	"github.com/notifykit/notify/provider/vonage/vonagetest"
	"github.com/notifykit/notify/record"
)

// answering returns a provider whose vendor answers every send with
// status and body, and a count of the requests it got.
func answering(t *testing.T, status int, body string) (*vonage.Provider, *int) {
	t.Helper()
	n := new(int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		*n++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	p, err := vonage.New(vonage.Config{APIKey: testKey, APISecret: testSecret, From: testFrom, BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return p, n
}

// checkSecrets fails t when err's text holds the secret or the OTP.
func checkSecrets(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); strings.Contains(msg, testSecret) || strings.Contains(msg, testOTP) {
		t.Fatalf("error %q holds a secret", msg)
	}
}

// TestStatusClassification: every status of Vonage's error table is a
// certain refusal of the code, retryability and field the package
// documents, with Vonage's status and text reachable through *Error.
func TestStatusClassification(t *testing.T) {
	v := newVendor(t, vonagetest.Config{})
	p := newProvider(t, v, nil)
	tests := []struct {
		status    int
		code      notify.Code
		retryable bool
		field     string
	}{
		{vonage.StatusThrottled, notify.CodeRateLimited, true, ""},
		{vonage.StatusMissingParams, notify.CodeRejected, false, ""},
		{vonage.StatusInvalidParams, notify.CodeRejected, false, ""},
		{vonage.StatusInvalidCredentials, notify.CodeRejected, false, ""},
		{vonage.StatusInternalError, notify.CodeUnavailable, true, ""},
		{vonage.StatusInvalidMessage, notify.CodeInvalidArgument, false, "to"},
		{vonage.StatusNumberBarred, notify.CodeRejected, false, ""},
		{vonage.StatusPartnerAccountBarred, notify.CodeRejected, false, ""},
		{vonage.StatusPartnerQuotaViolation, notify.CodeUnavailable, true, ""},
		{vonage.StatusTooManyExistingBinds, notify.CodeRateLimited, true, ""},
		{vonage.StatusAccountNotEnabledForHTTP, notify.CodeRejected, false, ""},
		{vonage.StatusMessageTooLong, notify.CodeInvalidArgument, false, "message"},
		{vonage.StatusInvalidSignature, notify.CodeRejected, false, ""},
		{vonage.StatusInvalidSenderAddress, notify.CodeInvalidArgument, false, "sender_id"},
		{vonage.StatusInvalidNetworkCode, notify.CodeRejected, false, ""},
		{vonage.StatusInvalidCallbackURL, notify.CodeRejected, false, ""},
		{vonage.StatusNonWhitelistedDest, notify.CodeRejected, false, ""},
		{vonage.StatusSignatureAndSecret, notify.CodeRejected, false, ""},
		{vonage.StatusNumberDeactivated, notify.CodeRejected, false, ""},
		{42, notify.CodeRejected, false, ""}, // not known here: by the HTTP status, 200
	}
	for _, tt := range tests {
		v.FailNext(tt.status)
		_, err := p.Send(t.Context(), envelope(1))
		var ne *notify.Error
		var ve *vonage.Error
		switch {
		case !errors.As(err, &ne) || ne.Code != tt.code:
			t.Errorf("status %d: %v, want %s", tt.status, err, tt.code)
		case notify.OutcomeOf(err) != record.StateFailed || notify.IsRetryable(err) != tt.retryable:
			t.Errorf("status %d: outcome %s, retryable %v", tt.status, notify.OutcomeOf(err), notify.IsRetryable(err))
		case !errors.As(err, &ve) || ve.Status != tt.status || ve.HTTPStatus != http.StatusOK:
			t.Errorf("status %d: cause %+v", tt.status, ve)
		case tt.field == "" && len(ne.Fields) != 0, tt.field != "" && (len(ne.Fields) != 1 || ne.Fields[0].Field != tt.field):
			t.Errorf("status %d: fields %v, want %q", tt.status, ne.Fields, tt.field)
		case tt.code == notify.CodeRateLimited && ne.RetryAfter < time.Second:
			t.Errorf("status %d: RetryAfter %v", tt.status, ne.RetryAfter)
		}
		if err != nil {
			checkSecrets(t, err)
		}
	}
	if v.Accepted() != 0 {
		t.Fatalf("the fake took %d messages", v.Accepted())
	}
	if _, err := p.Send(t.Context(), envelope(1)); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
}

// TestInvalidParamsNameTheField: status 3 names the field its error-text
// speaks of, as CodeInvalidArgument; another text stays CodeRejected.
func TestInvalidParamsNameTheField(t *testing.T) {
	v := newVendor(t, vonagetest.Config{})
	p := newProvider(t, v, nil)
	for text, field := range map[string]string{
		"Invalid to param":                               "to",
		"Invalid from address":                           "sender_id",
		"Invalid Message type":                           "message",
		"Invalid entity-id":                              "dlt_entity_id",
		"Invalid content-id parameter":                   "dlt_template_id",
		"Invalid ttl param":                              "",
		"Missing to param":                               "to",
		"Unable to parse entity-id":                      "", // prose: "to" names nothing here
		"validity less than the message validity period": "",
	} {
		v.FailNextWith(http.StatusOK, vonage.StatusInvalidParams, text)
		_, err := p.Send(t.Context(), envelope(0))
		var ne *notify.Error
		switch {
		case !errors.As(err, &ne):
			t.Errorf("%q: %v", text, err)
		case field == "" && (ne.Code != notify.CodeRejected || len(ne.Fields) != 0):
			t.Errorf("%q: %v, want rejected without a field", text, err)
		case field != "" && (ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 1 || ne.Fields[0].Field != field):
			t.Errorf("%q: %v %v, want invalid_argument on %s", text, err, ne.Fields, field)
		}
	}
}

// TestFakeRefusals: what the strict fake refuses comes back classified,
// and nothing is taken.
func TestFakeRefusals(t *testing.T) {
	v := newVendor(t, vonagetest.Config{Senders: []string{testFrom}, MaxTextLen: 20})
	p := newProvider(t, v, nil)
	dlt := envelope(2) // its header is not among this fake's senders
	long := envelope(0)
	sms.MessageOf(long).Text = strings.Repeat("x", 21)
	for name, c := range map[string]struct {
		env   *notify.Envelope
		code  notify.Code
		field string
	}{
		"sender":   {dlt, notify.CodeInvalidArgument, "sender_id"},
		"too long": {long, notify.CodeInvalidArgument, "message"},
	} {
		_, err := p.Send(t.Context(), c.env)
		var ne *notify.Error
		if !errors.As(err, &ne) || ne.Code != c.code || len(ne.Fields) != 1 || ne.Fields[0].Field != c.field {
			t.Errorf("%s: %v, want %s on %s", name, err, c.code, c.field)
		}
	}
	v.SetBalance(100)
	_, err := p.Send(t.Context(), envelope(0))
	if !notify.IsRetryable(err) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Errorf("no credit: %v", err)
	}
	if v.Accepted() != 0 {
		t.Fatalf("the fake took %d messages", v.Accepted())
	}
}

// TestSendRefusesWhatVonageCannotTake: an envelope Vonage could not take
// is CodeInvalidArgument naming the field, and nothing is sent.
func TestSendRefusesWhatVonageCannotTake(t *testing.T) {
	p, n := answering(t, http.StatusOK, `{}`)
	text := func(to, s string) *notify.Envelope {
		return &notify.Envelope{To: to, Content: &sms.Message{Text: s}}
	}
	dlt := func(entity, template string) *notify.Envelope {
		env := envelope(2)
		m := sms.MessageOf(env)
		m.DLTEntityID, m.DLTTemplateID = entity, template
		return env
	}
	sender := dlt("1101456789012345678", "1107161234567890123")
	sms.MessageOf(sender).Route = sms.RouteDLT
	sms.MessageOf(sender).SenderID = "Acme Inc Ltd" // 12 characters
	tests := []struct {
		name  string
		env   *notify.Envelope
		field string
	}{
		{"nil envelope", nil, "message"},
		{"no content", &notify.Envelope{To: "+447700900000"}, "message"},
		{"other content", &notify.Envelope{To: "+447700900000", Content: "hi"}, "message"},
		{"no +", text("447700900000", "hi"), "to"},
		{"national", text("07700900000", "hi"), "to"},
		{"+ and 0", text("+07700900000", "hi"), "to"},
		{"empty text", text("+447700900000", "  "), "message"},
		{"sender ID", sender, "sender_id"},
		{"dlt without entity", dlt("", dltTemplate), "dlt_entity_id"},
		{"dlt without template", dlt(dltEntity, ""), "dlt_template_id"},
		{"dlt entity not digits", dlt("ACME-1", dltTemplate), "dlt_entity_id"},
	}
	for _, tt := range tests {
		_, err := p.Send(t.Context(), tt.env)
		var e *notify.Error
		if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) != 1 || e.Fields[0].Field != tt.field {
			t.Errorf("%s: %v, want invalid_argument on %s", tt.name, err, tt.field)
		}
	}
	if *n != 0 {
		t.Fatalf("%d requests reached the vendor", *n)
	}
}

// TestNewChecksConfig: every bad Config is refused, naming its field and
// never repeating a secret.
func TestNewChecksConfig(t *testing.T) {
	const secret = "s3cret\nline"
	tests := []struct {
		name   string
		change func(*vonage.Config)
		field  string
	}{
		{"no key", func(c *vonage.Config) { c.APIKey = "" }, "APIKey"},
		{"no secret", func(c *vonage.Config) { c.APISecret = "" }, "APISecret"},
		{"secret with a line break", func(c *vonage.Config) { c.APISecret = secret }, "APISecret"},
		{"no From", func(c *vonage.Config) { c.From = "" }, "From"},
		{"From too long", func(c *vonage.Config) { c.From = "AcmeIncorporated" }, "From"},
		{"From with a dash", func(c *vonage.Config) { c.From = "Acme-Inc" }, "From"},
		{"From all spaces", func(c *vonage.Config) { c.From = "   " }, "From"},
		{"callback not a URL", func(c *vonage.Config) { c.Callback = "hooks.example.com/dlr" }, "Callback"},
		{"callback too long", func(c *vonage.Config) { c.Callback = "https://h.example/" + strings.Repeat("x", 90) }, "Callback"},
		{"base URL with a query", func(c *vonage.Config) { c.BaseURL = "https://rest.nexmo.com?x=1" }, "BaseURL"},
		{"base URL with user info", func(c *vonage.Config) { c.BaseURL = "https://u:p@rest.nexmo.com" }, "BaseURL"},
	}
	for _, tt := range tests {
		cfg := vonage.Config{APIKey: testKey, APISecret: testSecret, From: testFrom}
		tt.change(&cfg)
		_, err := vonage.New(cfg)
		if err == nil || !strings.Contains(err.Error(), "Config."+tt.field) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	for _, from := range []string{"AcmeInc", "Acme Inc", "12345", "+447700900001", "447700900001", "A"} {
		if _, err := vonage.New(vonage.Config{APIKey: testKey, APISecret: testSecret, From: from}); err != nil {
			t.Errorf("From %q: %v", from, err)
		}
	}
}

// TestBaseURLForms: the base URL may be the host, the send endpoint or
// its /sms, with or without a trailing slash.
func TestBaseURLForms(t *testing.T) {
	srv, paths := vendorhttptest.Paths(t, 4, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"message-count":"1","messages":[{"message-id":"0A00000012345678","status":"0"}]}`)
	})
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/sms/json", srv.URL + "/sms/"} {
		p, err := vonage.New(vonage.Config{APIKey: testKey, APISecret: testSecret, From: testFrom, BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(t.Context(), envelope(0)); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if got := <-paths; got != vonage.SendPath {
			t.Errorf("%s: sent to %s", base, got)
		}
		p.Close()
	}
}

// TestMultipart: a text Vonage splits is one message, named by its first
// part, with the Note counting the parts.
func TestMultipart(t *testing.T) {
	v := newVendor(t, vonagetest.Config{})
	p := newProvider(t, v, nil)
	env := envelope(0)
	sms.MessageOf(env).Text = strings.Repeat("Your order has shipped. ", 15) // 360 characters: 3 parts
	res, err := p.Send(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	m := v.Messages()[0]
	if len(m.IDs) != 3 || res.ProviderMessageID != m.IDs[0] {
		t.Fatalf("result %+v, parts %v", res, m.IDs)
	}
	want := "vonage: sent as 3 SMS part(s), each charged and reported on by Vonage; the parts after the first are " + m.IDs[1] + ", " + m.IDs[2]
	if res.Note != want {
		t.Fatalf("note %q\nwant %q", res.Note, want)
	}
	if one, err := p.Send(t.Context(), envelope(3)); err != nil || one.Note != "" {
		t.Fatalf("one part: %+v, %v", one, err)
	}
}

// TestAnswers: how each answer, Vonage's or another, is classified.
func TestAnswers(t *testing.T) {
	const ok = `{"message-id":"0A00000012345678","status":"0","remaining-balance":"3.14","message-price":"0.0333","network":"23410"}`
	tests := []struct {
		name    string
		status  int
		body    string
		code    notify.Code // "" for a success
		id      string
		note    string // in the Note of a success
		unknown bool
	}{
		{"success", 200, `{"message-count":"1","messages":[` + ok + `]}`, "", "0A00000012345678", "", false},
		{"count as a number", 200, `{"message-count":1,"messages":[` + ok + `]}`, "", "0A00000012345678", "", false},
		{"a part refused after one taken", 200, `{"message-count":"2","messages":[` + ok + `,{"status":"1","error-text":"Throttled 482913"}]}`,
			"", "0A00000012345678", "Vonage refused 1 of 2 parts: Throttled [redacted] (status 1)", false},
		{"refusal on a 500", 500, `{"message-count":"1","messages":[{"status":"77","error-text":"busy"}]}`, notify.CodeUnavailable, "", "", false},
		{"refusal on a 429", 429, `{"message-count":"1","messages":[{"status":"77","error-text":"slow down"}]}`, notify.CodeRateLimited, "", "", false},
		{"status 0 without an ID", 200, `{"message-count":"1","messages":[{"status":"0"}]}`, notify.CodeOutcomeUnknown, "", "", true},
		{"status 0 without an ID beside a refusal", 200, `{"message-count":"2","messages":[{"status":"0"},{"status":"1","error-text":"Throttled"}]}`,
			notify.CodeOutcomeUnknown, "", "", true},
		{"a part without a status beside a refusal", 200, `{"message-count":"2","messages":[{"to":"447700900000"},{"status":"6","error-text":"Invalid message"}]}`,
			notify.CodeOutcomeUnknown, "", "", true},
		{"no messages", 200, `{"message-count":"0","messages":[]}`, notify.CodeOutcomeUnknown, "", "", true},
		{"refusal without a text", 200, `{"message-count":"1","messages":[{"status":"4"}]}`, notify.CodeOutcomeUnknown, "", "", true},
		{"HTML on a 502", 502, `<html>bad gateway</html>`, notify.CodeOutcomeUnknown, "", "", true},
		{"empty 200", 200, ``, notify.CodeOutcomeUnknown, "", "", true},
		{"a bare 429", 429, `Too Many Requests`, notify.CodeRateLimited, "", "", false},
		{"a bare 401", 401, `{"type":"https://developer.nexmo.com/api-errors#unauthorized"}`, notify.CodeRejected, "", "", false},
	}
	for _, tt := range tests {
		p, _ := answering(t, tt.status, tt.body)
		res, err := p.Send(t.Context(), envelope(1))
		switch {
		case tt.code == "" && (err != nil || res.ProviderMessageID != tt.id || !strings.Contains(res.Note, tt.note)):
			t.Errorf("%s: %+v, %v", tt.name, res, err)
		case tt.code != "" && notify.CodeOf(err) != tt.code:
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		case tt.code != "" && (notify.OutcomeOf(err) == record.StateUnknown) != tt.unknown:
			t.Errorf("%s: outcome %s", tt.name, notify.OutcomeOf(err))
		}
		if err != nil {
			checkSecrets(t, err)
		}
	}
}

// TestNetwork: a request that never leaves is a certain, temporary
// refusal; a connection dropped after Vonage took the message is of
// unknown outcome; an ended context stays visible.
func TestNetwork(t *testing.T) {
	p, err := vonage.New(vonage.Config{APIKey: testKey, APISecret: testSecret, From: testFrom,
		BaseURL: "http://" + vendorhttptest.ClosedAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Send(t.Context(), envelope(0)); !notify.IsRetryable(err) {
		t.Fatalf("refused dial: %v", err)
	}
	if err := p.CheckHealth(t.Context()); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("CheckHealth of a closed port: %v", err)
	}
	v := newVendor(t, vonagetest.Config{})
	q := newProvider(t, v, nil)
	v.BreakNext()
	_, err = q.Send(t.Context(), envelope(0))
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || v.Accepted() != 1 {
		t.Fatalf("broken answer: %v, %d taken", err, v.Accepted())
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := q.Send(ctx, envelope(0)); !errors.Is(err, context.Canceled) || v.Accepted() != 1 {
		t.Fatalf("canceled: %v", err)
	}
}

// TestBalance: the balance in euros, cut to the cent; CheckHealth on the
// same query; refused credentials, a proxy's page and a value that is no
// amount.
func TestBalance(t *testing.T) {
	v := newVendor(t, vonagetest.Config{})
	p := newProvider(t, v, nil)
	m, err := p.Balance(t.Context())
	if err != nil || m.String() != "10.28 EUR" {
		t.Fatalf("Balance = %v, %v", m, err)
	}
	if _, err := p.Send(t.Context(), envelope(0)); err != nil {
		t.Fatal(err)
	}
	if m, _ := p.Balance(t.Context()); m.Minor != 1024 { // 10.2467, cut
		t.Fatalf("Balance after a send = %v", m)
	}
	if err := p.CheckHealth(t.Context()); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	r := v.Requests()[0]
	if r.Method != http.MethodGet || r.Path != vonage.BalancePath || r.Query != "" {
		t.Fatalf("balance request %s %s?%s (the secret goes in a header, never the URL)", r.Method, r.Path, r.Query)
	}
	v.FailNextHTTP(http.StatusBadGateway)
	if _, err := p.Balance(t.Context()); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("behind a failing proxy: %v", err)
	}
	wrong := newProvider(t, v, func(c *vonage.Config) { c.APISecret = "wrong-secret-000" })
	if err := wrong.CheckHealth(t.Context()); notify.CodeOf(err) != notify.CodeRejected || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("wrong secret: %v", err)
	}
	for body, want := range map[string]struct {
		code  notify.Code
		minor int64
	}{
		`{"value": 1.999, "autoReload": false}`: {"", 199}, // cut, never rounded up
		`{"value": "7.5"}`:                      {"", 750},
		`{"value": -0.5}`:                       {"", -50},
		`{"value": 1e3}`:                        {notify.CodeInternal, 0},
		`{"autoReload": true}`:                  {notify.CodeUnavailable, 0},
		`not json`:                              {notify.CodeUnavailable, 0},
	} {
		p, _ := answering(t, http.StatusOK, body)
		m, err := p.Balance(t.Context())
		if notify.CodeOf(err) != want.code || m.Minor != want.minor || err == nil && m.Currency.Code != "EUR" {
			t.Errorf("%s: %v, %v; want %d cents", body, m, err, want.minor)
		}
	}
}

// TestBalanceContext: the balance query and the health check send
// nothing, so an ended context is a certain CodeUnavailable, visible to
// errors.Is.
func TestBalanceContext(t *testing.T) {
	v := newVendor(t, vonagetest.Config{})
	p := newProvider(t, v, nil)
	balance := func(ctx context.Context) error {
		_, err := p.Balance(ctx)
		return err
	}
	vendorhttptest.CheckReadOnlyContext(t, balance, v.SetLatency, testSecret)
	vendorhttptest.CheckReadOnlyContext(t, p.CheckHealth, v.SetLatency, testSecret)
}

// The sender is Config.From off India's dlt route, whatever header the
// account gives the message: one for the Indian vendors (NOTIFY) would be
// refused where alphanumeric senders are. On the dlt route it is the
// registered header.
func TestSenderIsFromOffTheDLTRoute(t *testing.T) {
	v := newVendor(t, vonagetest.Config{})
	p := newProvider(t, v, nil)
	ctx := context.Background()
	plain := &notify.Envelope{ID: "0f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f", To: "+14155550100",
		Content: &sms.Message{Route: sms.RouteSMS, Text: "Your order has shipped.", SenderID: "NOTIFY"}}
	if _, err := p.Send(ctx, plain); err != nil {
		t.Fatal(err)
	}
	dltEnv := &notify.Envelope{ID: "1f8c2a4e-7d1b-4c3a-9e5f-6a7b8c9d0e1f", To: "+919876500002",
		Content: &sms.Message{Route: sms.RouteDLT, Text: "Your OTP for login is 482913. - ACMEIN", SenderID: dltHeader,
			DLTEntityID: "1101456789012345678", DLTTemplateID: "1107161234567890123"}}
	if _, err := p.Send(ctx, dltEnv); err != nil {
		t.Fatal(err)
	}
	msgs := v.Messages()
	if len(msgs) != 2 || msgs[0].From != testFrom || msgs[1].From != dltHeader {
		t.Fatalf("senders %+v", msgs)
	}
}
