package sms_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/twilio/twiliotest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// vendors is an SMS channel over two real providers and their strict
// fakes: the Indian vendor for +91 numbers, then Twilio for every number
// (the Indian vendor's fallback, and the only way abroad), with the US
// priced apart.
type vendors struct {
	n      *notify.Notifier
	india  *smsgatewaytest.Server
	twilio *twiliotest.Server
	ledger *memstore.Ledger
	wallet *memstore.Wallet
	clock  *testclock.Clock
}

// breakerLog keeps the breakers' changes (BreakerPolicy.OnChange).
type breakerLog struct {
	mu  sync.Mutex
	log []string
}

func (b *breakerLog) BreakerChanged(_ context.Context, provider string, open bool, cause error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	state := "closed"
	if open {
		state = "open: " + string(notify.CodeOf(cause))
	}
	b.log = append(b.log, provider+" "+state)
}

func (b *breakerLog) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmtList(b.log)
}

func fmtList(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += "; "
		}
		out += v
	}
	return out
}

const usPrice = 70 // paise a segment to the US

func newVendors(t *testing.T, opts ...notify.Option) *vendors {
	t.Helper()
	v := &vendors{
		india:  smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-77f3"}),
		twilio: twiliotest.NewServer(twiliotest.Config{}),
		clock:  testclock.New(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)),
	}
	t.Cleanup(v.india.Close)
	t.Cleanup(v.twilio.Close)
	india, err := smsgateway.New(smsgateway.Config{APIKey: "vendor-key-77f3", BaseURL: v.india.URL, HTTPClient: v.india.Client()})
	if err != nil {
		t.Fatal(err)
	}
	tw, err := twilio.New(twilio.Config{AccountSID: v.twilio.AccountSID(), AuthToken: v.twilio.AuthToken(),
		From: twiliotest.DefaultFrom, BaseURL: v.twilio.URL, HTTPClient: v.twilio.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := sms.New(sms.Config{
		Numbers: usPlan{},
		Providers: []sms.ProviderRule{
			{Provider: india, Countries: []string{"IN"}},
			{Provider: tw},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	prices := wallet.DefaultINR()
	prices.SMSByCountry = map[string]wallet.SMSPrices{"US": {Plain: usPrice, OTP: usPrice}}
	v.wallet = memstore.NewWallet()
	if err := v.wallet.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	v.ledger = memstore.NewLedger(v.wallet)
	acct := testAccount()
	acct.Countries = []string{"IN", "US"}
	v.n, err = notify.New(testAccounts{acct}, v.ledger, append([]notify.Option{
		notify.WithChannel(ch),
		notify.WithPrices(prices),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
		notify.WithClock(v.clock.Now),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *vendors) balance(t *testing.T) int64 {
	t.Helper()
	b, err := v.wallet.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

func (v *vendors) record(t *testing.T, id string) *record.Message {
	t.Helper()
	m, err := v.ledger.Message(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRoutingByCountry: a US number goes to Twilio, charged the US
// price; an Indian one to the Indian vendor, byte for byte as before
// (its 10 digits), at the Indian price. One provider each: no list of
// calls on the record.
func TestRoutingByCountry(t *testing.T) {
	v := newVendors(t)
	ctx := context.Background()
	us, err := v.n.Send(ctx, &sms.Request{Account: "acme", To: "+1 415 555 0100", Message: "Your parcel ships today"})
	if err != nil {
		t.Fatal(err)
	}
	if us.Provider != "twilio" || us.Cost.Minor != usPrice || us.Country != "US" || us.To != "+14155550100" {
		t.Fatalf("US receipt %+v", us)
	}
	if m := v.twilio.Messages(); len(m) != 1 || m[0].To != "+14155550100" || m[0].Body != "Your parcel ships today" {
		t.Fatalf("Twilio got %+v", m)
	}
	in, err := v.n.Send(ctx, &sms.Request{Account: "acme", To: "98765 43210", Message: "Your parcel ships today"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Provider != "smsgateway" || in.Cost.Minor != 25 || in.Country != "IN" {
		t.Fatalf("Indian receipt %+v", in)
	}
	if s := v.india.Sent(); len(s) != 1 || len(s[0].Numbers) != 1 || s[0].Numbers[0] != "9876543210" {
		t.Fatalf("the Indian vendor got %+v", s)
	}
	if got := v.balance(t); got != opening-usPrice-25 {
		t.Fatalf("balance %d, want %d", got, opening-usPrice-25)
	}
	if m := v.record(t, us.MessageID); m.Tried != nil || m.Provider != "twilio" {
		t.Fatalf("US record: provider %s, tried %+v", m.Provider, m.Tried)
	}
}

// TestFailoverOnACertainRefusal: the Indian vendor is down (its own
// error body on a 503: it certainly took nothing), so the message goes
// through Twilio, charged once, with both calls on its record.
func TestFailoverOnACertainRefusal(t *testing.T) {
	v := newVendors(t)
	v.india.RefuseNext(1, http.StatusServiceUnavailable, 503, "busy")
	rc, err := v.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "Your parcel ships today"})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Status != record.StateSent || rc.Provider != "twilio" || rc.Attempts != 2 || rc.Cost.Minor != 25 {
		t.Fatalf("receipt %+v", rc)
	}
	if got := v.balance(t); got != opening-25 {
		t.Fatalf("balance %d: charged more than once", got)
	}
	if v.india.Accepted() != 0 || v.twilio.Accepted() != 1 || v.twilio.Messages()[0].To != "+919876543210" {
		t.Fatalf("india accepted %d, twilio %d", v.india.Accepted(), v.twilio.Accepted())
	}
	m := v.record(t, rc.MessageID)
	if m.Provider != "twilio" || m.ProviderMessageID != rc.ProviderMessageID || len(m.Tried) != 2 ||
		m.Tried[0].Provider != "smsgateway" || m.Tried[0].Outcome != record.StateFailed || m.Tried[0].ErrorCode != string(notify.CodeUnavailable) ||
		m.Tried[1].Provider != "twilio" || m.Tried[1].Outcome != record.StateSent || m.Tried[1].ErrorCode != "" {
		t.Fatalf("record: provider %s, tried %+v", m.Provider, m.Tried)
	}
	if len(rc.Tried) != 2 {
		t.Fatalf("receipt tried %+v", rc.Tried)
	}
}

// TestNoFailoverOnAnUnknownOutcome: the Indian vendor takes the request
// and its answer is lost: it may have the message, so Twilio is never
// called (that could deliver it twice) and the charge stands.
func TestNoFailoverOnAnUnknownOutcome(t *testing.T) {
	v := newVendors(t)
	v.india.BreakNext()
	rc, err := v.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "Your parcel ships today"})
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || rc == nil || rc.Status != record.StateUnknown {
		t.Fatalf("Send = %+v, %v", rc, err)
	}
	if v.twilio.Accepted() != 0 || len(v.twilio.Requests()) != 0 {
		t.Fatalf("Twilio was called after an unknown outcome")
	}
	if rc.Provider != "smsgateway" || v.balance(t) != opening-25 {
		t.Fatalf("provider %s, balance %d", rc.Provider, v.balance(t))
	}
	m := v.record(t, rc.MessageID)
	if m.State != record.StateUnknown || len(m.Tried) != 1 || m.Tried[0].Outcome != record.StateUnknown {
		t.Fatalf("record %s, tried %+v", m.State, m.Tried)
	}
}

// TestNoFailoverOnAPermanentRefusal: a refusal of the number itself goes
// no further, and is refunded.
func TestNoFailoverOnAPermanentRefusal(t *testing.T) {
	v := newVendors(t)
	v.india.FailNext(smsgatewaytest.InvalidNumbers)
	rc, err := v.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "hello"})
	if notify.CodeOf(err) != notify.CodeRejected || rc.Status != record.StateFailed || rc.Provider != "smsgateway" {
		t.Fatalf("Send = %+v, %v", rc, err)
	}
	if len(v.twilio.Requests()) != 0 || v.balance(t) != opening {
		t.Fatalf("Twilio called %d times, balance %d", len(v.twilio.Requests()), v.balance(t))
	}
}

// TestEveryProviderRefuses: both refuse for now: the message fails,
// refunded once, with both calls on its record.
func TestEveryProviderRefuses(t *testing.T) {
	v := newVendors(t)
	v.india.FailNext(smsgatewaytest.LowBalance)
	v.twilio.FailNext(twiliotest.TooManyRequests)
	rc, err := v.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "hello"})
	if notify.CodeOf(err) != notify.CodeRateLimited || rc.Status != record.StateFailed || rc.Provider != "twilio" {
		t.Fatalf("Send = %+v, %v", rc, err)
	}
	m := v.record(t, rc.MessageID)
	if v.balance(t) != opening || m.State != record.StateFailed || len(m.Tried) != 2 || m.Tried[1].ErrorCode != string(notify.CodeRateLimited) {
		t.Fatalf("balance %d, record %s, tried %+v", v.balance(t), m.State, m.Tried)
	}
}

// TestBreakerSkipsAFailingProvider: after two failures in a row the
// Indian vendor's breaker opens and OnChange hears of it; Indian numbers
// then go straight to Twilio without calling it; after the cooldown one
// send tries it again, and its acceptance closes the breaker.
func TestBreakerSkipsAFailingProvider(t *testing.T) {
	changes := &breakerLog{}
	v := newVendors(t, notify.WithBreaker(notify.BreakerPolicy{Failures: 2, Cooldown: time.Minute, OnChange: changes.BreakerChanged}))
	ctx := context.Background()
	send := func() *notify.Receipt {
		t.Helper()
		rc, err := v.n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	v.india.RefuseNext(2, http.StatusServiceUnavailable, 503, "busy")
	send()
	send()
	if got := changes.String(); got != "smsgateway open: unavailable" {
		t.Fatalf("breaker changes: %q", got)
	}
	before := v.india.Requests()
	if rc := send(); rc.Provider != "twilio" || v.india.Requests() != before {
		t.Fatalf("an open breaker let a call through: %s, %d requests", rc.Provider, v.india.Requests()-before)
	}
	if m := v.record(t, send().MessageID); len(m.Tried) != 1 || m.Tried[0].Provider != "twilio" {
		t.Fatalf("tried %+v: the skipped provider is no call", m.Tried)
	}
	v.clock.Advance(time.Minute)
	if rc := send(); rc.Provider != "smsgateway" {
		t.Fatalf("after the cooldown: %s", rc.Provider)
	}
	if got := changes.String(); got != "smsgateway open: unavailable; smsgateway closed" {
		t.Fatalf("breaker changes: %q", got)
	}
}

// TestBreakerWithOneProvider: a channel with one provider whose breaker
// is open refuses at once, certainly, and refunds: no vendor call.
func TestBreakerWithOneProvider(t *testing.T) {
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-77f3"})
	t.Cleanup(vendor.Close)
	p, err := smsgateway.New(smsgateway.Config{APIKey: "vendor-key-77f3", BaseURL: vendor.URL, HTTPClient: vendor.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := sms.New(sms.Config{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	n, w := acmeNotifier(t, ch, opening, notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
		notify.WithBreaker(notify.BreakerPolicy{Failures: 1, Cooldown: time.Hour}))
	vendor.FailNext(smsgatewaytest.LowBalance)
	req := &sms.Request{Account: "acme", To: "9876543210", Message: "hello"}
	if _, err := n.Send(context.Background(), req); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("first send: %v", err)
	}
	calls := vendor.Requests()
	rc, err := n.Send(context.Background(), req)
	if notify.CodeOf(err) != notify.CodeUnavailable || rc.Status != record.StateFailed || vendor.Requests() != calls {
		t.Fatalf("second send = %+v, %v; vendor called %d more times", rc, err, vendor.Requests()-calls)
	}
	if b, _ := w.Balance(context.Background(), "acme"); b.Available.Minor != opening {
		t.Fatalf("balance %d: a refused send kept its charge", b.Available.Minor)
	}
}

// TestRoutingRules: rules pick by country, prefix, route and account, in
// order; a message no rule takes is refused on "to" before any charge.
func TestRoutingRules(t *testing.T) {
	a, b, c := memproviderNamed("a"), memproviderNamed("b"), memproviderNamed("c")
	ch, err := sms.New(sms.Config{Numbers: usPlan{}, Providers: []sms.ProviderRule{
		{Provider: a, Prefixes: []string{"+9198"}},
		{Provider: b, Routes: []sms.Route{sms.RouteOTP}, Countries: []string{"IN"}},
		{Provider: c, Accounts: []string{"acme"}, Countries: []string{"IN", "US"}},
		{Provider: a, Countries: []string{"IN"}}, // listed already: not twice
	}})
	if err != nil {
		t.Fatal(err)
	}
	acct := testAccount()
	acct.Countries = []string{"*"}
	other := testAccount()
	other.ID, other.Countries = "globex", []string{"*"}
	cases := []struct {
		acct      *notify.Account
		to        string
		route     sms.Route
		provider  string
		providers []string
	}{
		{acct, "9876543210", "", "a", []string{"a", "c"}},
		{acct, "9776543210", "", "c", []string{"c", "a"}},
		{acct, "9876543210", sms.RouteOTP, "a", []string{"a", "b", "c"}},
		{other, "9776543210", "", "a", nil},
		{acct, "+1 415 555 0100", "", "c", nil},
	}
	for _, tt := range cases {
		req := &sms.Request{To: tt.to, Message: "hello", Route: tt.route}
		if tt.route == sms.RouteOTP {
			req.Message = "482913"
		}
		env, err := ch.Prepare(context.Background(), tt.acct, req)
		if err != nil {
			t.Errorf("%s %s %s: %v", tt.acct.ID, tt.to, tt.route, err)
			continue
		}
		if env.Provider != tt.provider || fmtList(env.Providers) != fmtList(tt.providers) {
			t.Errorf("%s %s %s: provider %s %v, want %s %v", tt.acct.ID, tt.to, tt.route, env.Provider, env.Providers, tt.provider, tt.providers)
		}
	}
	_, err = ch.Prepare(context.Background(), other, &sms.Request{To: "+1 415 555 0100", Message: "hello"})
	if !hasFieldRule(err, "to", "is a number of US, which no provider of this SMS channel takes on the sms route") {
		t.Errorf("no rule: %v", err)
	}
}

func TestRouterConfig(t *testing.T) {
	for name, cfg := range map[string]sms.Config{
		"no provider":             {},
		"a nil rule":              {Providers: []sms.ProviderRule{{}}},
		"a shared name":           {Providers: []sms.ProviderRule{{Provider: memproviderNamed("x")}, {Provider: memproviderNamed("x")}}},
		"a prefix without +":      {Providers: []sms.ProviderRule{{Provider: memproviderNamed("x"), Prefixes: []string{"9198"}}}},
		"a prefix with a space":   {Providers: []sms.ProviderRule{{Provider: memproviderNamed("x"), Prefixes: []string{"+91 98"}}}},
		"a country in lower case": {Providers: []sms.ProviderRule{{Provider: memproviderNamed("x"), Countries: []string{"in"}}}},
	} {
		if _, err := sms.New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	same := memproviderNamed("x")
	if _, err := sms.New(sms.Config{Providers: []sms.ProviderRule{{Provider: same, Countries: []string{"IN"}}}, Provider: same}); err != nil {
		t.Errorf("one provider in two rules: %v", err)
	}
}

// usPlan is a phone.Plan of the one US number these tests send to, for
// the routing tests, which are not about reading numbers (phone/world's
// tests read every country's with its plan).
type usPlan struct{}

func (usPlan) Parse(raw, _ string) (phone.Number, error) {
	if raw == "+1 415 555 0100" {
		return phone.Number{E164: "+14155550100", CallingCode: 1, Region: "US", Type: phone.FixedLineOrMobile}, nil
	}
	return phone.Number{}, errors.New("is not a number of this test's plan")
}

func memproviderNamed(name string) *memprovider.Provider { return memprovider.New(name) }

// TestBulkFailsOverPerRecipient: a bulk SMS over providers that do not
// all batch goes one recipient at a time, each failing over as a single
// send does: the Indian vendor refuses the first for now (its balance),
// which goes on to Twilio, charged once, with both calls on its record;
// the others go to the Indian vendor. A permanent refusal goes no
// further, refunded.
func TestBulkFailsOverPerRecipient(t *testing.T) {
	v := newVendors(t)
	v.india.FailNext(smsgatewaytest.LowBalance)
	numbers := []string{"9876543210", "9876543211", "9876543212"}
	r, err := v.n.Send(context.Background(), &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Sale"}, To: numbers})
	if err != nil {
		t.Fatalf("Send = %+v, %v", r, err)
	}
	for i, leg := range r.Legs {
		want, tried := "smsgateway", 0
		if i == 0 {
			want, tried = "twilio", 2
		}
		m := v.record(t, leg.MessageID)
		if leg.Status != record.StateSent || leg.Provider != want || m.Provider != want || len(m.Tried) != tried {
			t.Fatalf("leg %d: %+v; record provider %s, tried %+v", i, leg, m.Provider, m.Tried)
		}
	}
	if got := len(v.twilio.Messages()); got != 1 || v.balance(t) != opening-int64(len(numbers))*25 {
		t.Fatalf("Twilio took %d messages, balance %d: want 1, each recipient charged once", got, v.balance(t))
	}

	v = newVendors(t)
	v.india.FailNext(smsgatewaytest.InvalidNumbers)
	r, err = v.n.Send(context.Background(), &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Sale"}, To: numbers[:1]})
	if notify.CodeOf(err) != notify.CodeRejected || len(v.twilio.Requests()) != 0 || v.balance(t) != opening {
		t.Fatalf("a permanent refusal: %+v, %v; Twilio called %d times, balance %d", r, err, len(v.twilio.Requests()), v.balance(t))
	}
}

// TestBulkFailsOverWhenBothRefuse: Twilio refuses for now too: each
// recipient fails, refunded once, both calls on its record.
func TestBulkFailsOverWhenBothRefuse(t *testing.T) {
	v := newVendors(t)
	v.india.FailNext(smsgatewaytest.LowBalance)
	v.twilio.FailNext(twiliotest.TooManyRequests)
	r, err := v.n.Send(context.Background(), &sms.BulkRequest{Message: sms.Request{Account: "acme", Message: "Sale"}, To: []string{"9876543210"}})
	if notify.CodeOf(err) != notify.CodeRateLimited || r.Legs[0].Status != record.StateFailed || v.balance(t) != opening {
		t.Fatalf("Send = %+v, %v; balance %d", r, err, v.balance(t))
	}
	m := v.record(t, r.Legs[0].MessageID)
	if m.State != record.StateFailed || len(m.Tried) != 2 || m.Tried[1].Provider != "twilio" || m.Tried[1].ErrorCode != string(notify.CodeRateLimited) {
		t.Fatalf("record: %+v", m)
	}
}
