package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/store"
)

// The number the preference tests' recipient has, as a send takes it and
// in the canonical form choices are kept by.
const (
	prefNumber    = "9876543210"
	prefCanonical = "+919876543210"
)

// withPreferences serves the preference routes over the env's ledger,
// the one its Notifier reads.
func withPreferences(e *httpapienv.Env) []httpapi.Option {
	return []httpapi.Option{httpapi.WithPreferences(e.Ledger)}
}

// newPreferenceEnv is the test gateway with the preference routes and
// TestAccount's categories: marketing (opt-out), news (opt-in), otp
// (critical) and order (opt-out).
func newPreferenceEnv(t *testing.T) *httpapienv.Env {
	t.Helper()
	e := httpapienv.NewHooked(t, httpapienv.OpeningBal, func(*httpapienv.Env) []notify.Option { return nil }, withPreferences)
	putCategories(t, e.Ledger)
	return e
}

// putCategories defines TestAccount's categories in p.
func putCategories(t *testing.T, p store.Preferences) {
	t.Helper()
	for _, c := range []store.Category{
		{Name: "marketing", Description: "Offers and sales"},
		{Name: "news", Description: "Our newsletter", OptIn: true},
		{Name: "otp", Description: "Sign-in codes", Critical: true},
		{Name: "order", Description: "Order and delivery updates"},
	} {
		c.Account = httpapienv.TestAccount
		if _, err := p.PutCategory(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
}

// prefsOf returns the categories of a preferences answer by name.
func prefsOf(t *testing.T, r *httpapienv.Reply) map[string]map[string]any {
	t.Helper()
	if r.Status != http.StatusOK || r.Body["success"] != true {
		t.Fatalf("preferences answer: %d %s", r.Status, r.Raw)
	}
	out := map[string]map[string]any{}
	list, _ := r.Body["categories"].([]any)
	for _, c := range list {
		m := c.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

// wantPref checks one category of a preferences answer.
func wantPref(t *testing.T, prefs map[string]map[string]any, name string, allowed, chosen bool) {
	t.Helper()
	p := prefs[name]
	if p == nil || p["allowed"] != allowed || p["chosen"] != chosen {
		t.Errorf("%s: %v, want allowed %v chosen %v", name, p, allowed, chosen)
	}
}

// A recipient who declined marketing on SMS is refused a marketing SMS,
// 422 declined, with nothing sent or charged; a critical category's
// one-time code still reaches them on both channels, and a marketing
// chat message (a channel they did not decline it on) goes.
func TestSendOfADeclinedCategory(t *testing.T) {
	e := newPreferenceEnv(t)
	r := e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":false,"otp":false}}`, nil)
	prefs := prefsOf(t, r)
	wantPref(t, prefs, "marketing", false, true)
	wantPref(t, prefs, "otp", true, true) // kept, not read: otp is critical

	before, sent := e.Minor(t, httpapienv.TestAccount), e.Sent()
	r = e.Post(t, "/api/v1/sms", `{"to":"`+prefNumber+`","message":"Half price today","category":"marketing"}`, nil)
	httpapienv.WantError(t, r, http.StatusUnprocessableEntity, "declined")
	if msg := r.Body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "marketing") || !strings.Contains(msg, "sms") {
		t.Errorf("the refusal names neither the category nor the channel: %s", r.Raw)
	}
	httpapienv.WantNoLeaks(t, "declined SMS", r, prefNumber, prefCanonical)
	if got := e.Minor(t, httpapienv.TestAccount); got != before || e.Sent() != sent {
		t.Fatalf("a declined send moved the balance %d -> %d or sent %d", before, got, e.Sent()-sent)
	}
	// /sms/send is the same endpoint.
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms/send", `{"numbers":`+prefNumber+`,"message":"x","category":"marketing"}`, nil),
		http.StatusUnprocessableEntity, "declined")

	// The critical otp category goes, both legs, charged.
	r = e.Post(t, "/api/v1/send-otp", `{"to":"`+prefNumber+`","otp":"482915","category":"otp"}`, nil)
	if r.Status != http.StatusOK || r.Body["status"] != "sent" {
		t.Fatalf("critical OTP: %d %s", r.Status, r.Raw)
	}
	if legs, _ := r.Body["legs"].([]any); len(legs) != 2 || legs[0].(map[string]any)["success"] != true {
		t.Fatalf("critical OTP legs: %s", r.Raw)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != before-55 {
		t.Fatalf("critical OTP charged %d, want 55", before-got)
	}
	r = e.Post(t, "/api/v1/sms", `{"to":"`+prefNumber+`","route":"otp","message":"482916","category":"otp"}`, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("critical OTP SMS: %d %s", r.Status, r.Raw)
	}

	// A dual OTP of a category declined on SMS only goes by chat, its SMS
	// leg skipped and not charged; declined on both, it is refused.
	before = e.Minor(t, httpapienv.TestAccount)
	r = e.Post(t, "/api/v1/send-otp", `{"to":"`+prefNumber+`","otp":"482917","category":"marketing"}`, nil)
	if legs, _ := r.Body["legs"].([]any); r.Status != http.StatusOK || len(legs) != 2 ||
		legs[0].(map[string]any)["success"] != false || legs[1].(map[string]any)["success"] != true {
		t.Fatalf("OTP declined on SMS: %d %s", r.Status, r.Raw)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != before-35 {
		t.Fatalf("OTP declined on SMS charged %d, want the chat leg's 35", before-got)
	}
	prefsOf(t, e.Post(t, "/api/v1/preferences", `{"channel":"chat","to":"`+prefNumber+`","choices":{"marketing":false}}`, nil))
	before = e.Minor(t, httpapienv.TestAccount)
	httpapienv.WantError(t, e.Post(t, "/api/v1/send-otp", `{"to":"`+prefNumber+`","otp":"482918","category":"marketing"}`, nil),
		http.StatusUnprocessableEntity, "declined")
	if got := e.Minor(t, httpapienv.TestAccount); got != before {
		t.Fatalf("OTP declined on both channels charged %d", before-got)
	}
	prefsOf(t, e.Post(t, "/api/v1/preferences", `{"channel":"chat","to":"`+prefNumber+`","choices":{"marketing":true}}`, nil))

	// Other channels, categories and recipients are not touched.
	for path, body := range map[string]string{
		"/api/v1/messenger/send": `{"to":"` + prefNumber + `","message":"Half price today","category":"marketing"}`,
		"/api/v1/sms":            `{"to":"` + prefNumber + `","message":"Shipped","category":"order"}`,
		"/api/v1/email/send":     `{"to":"asha@example.com","subject":"Sale","message":"Half price","category":"marketing"}`,
	} {
		if r := e.Post(t, path, body, nil); r.Status != http.StatusOK {
			t.Errorf("%s %s: %d %s", path, body, r.Status, r.Raw)
		}
	}
	if r := e.Post(t, "/api/v1/sms", `{"to":"9123456789","message":"Half price today","category":"marketing"}`, nil); r.Status != http.StatusOK {
		t.Errorf("marketing to another number: %d %s", r.Status, r.Raw)
	}

	// A bulk SMS naming the recipient is refused whole, naming them by
	// index, with nothing sent or charged.
	before, sent = e.Minor(t, httpapienv.TestAccount), e.Sent()
	r = e.Post(t, "/api/v1/sms/bulk", `{"to":["9123456789","`+prefNumber+`"],"message":"Half price today","category":"marketing"}`, nil)
	httpapienv.WantError(t, r, http.StatusUnprocessableEntity, "declined")
	if f := r.ErrFields(); f["to.1"] == nil || f["to.0"] != nil {
		t.Errorf("bulk refusal fields %v, want to.1 alone", f)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != before || e.Sent() != sent {
		t.Fatalf("a declined bulk send moved the balance %d -> %d or sent %d", before, got, e.Sent()-sent)
	}
}

// A category the account does not define is 400 naming category, as is
// a name no category can have; nothing is charged.
func TestSendOfAnUndefinedCategory(t *testing.T) {
	e := newPreferenceEnv(t)
	before := e.Minor(t, httpapienv.TestAccount)
	for path, body := range map[string]string{
		"/api/v1/sms":            `{"to":"` + prefNumber + `","message":"x","category":"promo"}`,
		"/api/v1/email/send":     `{"to":"asha@example.com","subject":"s","message":"x","category":"promo"}`,
		"/api/v1/messenger/send": `{"to":"` + prefNumber + `","message":"x","category":"Promo!"}`,
		"/api/v1/sms/bulk":       `{"to":["` + prefNumber + `"],"message":"x","category":"promo"}`,
		"/api/v1/send-otp":       `{"to":"` + prefNumber + `","otp":"482915","category":"promo"}`,
	} {
		r := e.Post(t, path, body, nil)
		httpapienv.WantError(t, r, http.StatusBadRequest, "invalid_argument")
		if !strings.Contains(r.Raw, "category") {
			t.Errorf("%s: the 400 does not name category: %s", path, r.Raw)
		}
	}
	r := e.Post(t, "/api/v1/sms", `{"to":"`+prefNumber+`","message":"x","category":7}`, nil)
	httpapienv.WantError(t, r, http.StatusBadRequest, "invalid_argument")
	if r.ErrFields()["category"] == nil {
		t.Errorf("a number as category: %s", r.Raw)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != before {
		t.Fatalf("refused sends charged %d", before-got)
	}
}

// The public preferences API's round trip: a lookup shows what the
// recipient gets, a choice changes it, and the next send obeys it.
func TestPreferencesRoundTrip(t *testing.T) {
	e := newPreferenceEnv(t)
	r := e.Do(t, http.MethodGet, "/api/v1/categories", nil, nil)
	if r.Status != http.StatusOK || r.Body["success"] != true {
		t.Fatalf("categories: %d %s", r.Status, r.Raw)
	}
	cats, _ := r.Body["categories"].([]any)
	if len(cats) != 4 {
		t.Fatalf("categories: %s", r.Raw)
	}
	if c := cats[1].(map[string]any); c["name"] != "news" || c["description"] != "Our newsletter" || c["opt_in"] != true || c["critical"] != false {
		t.Errorf("news: %v", c)
	}
	// Another account has none, and cannot reach these.
	if r := e.Do(t, http.MethodGet, "/api/v1/categories", map[string]string{"Authorization": httpapienv.OtherKey}, nil); len(r.Body["categories"].([]any)) != 0 {
		t.Errorf("another account's categories: %s", r.Raw)
	}

	lookup := `{"channel":"sms","to":"+91 98765 43210"}`
	r = e.Post(t, "/api/v1/preferences/lookup", lookup, nil)
	prefs := prefsOf(t, r)
	if r.Body["channel"] != "sms" || r.Body["to"] != prefCanonical || len(prefs) != 4 {
		t.Fatalf("lookup: %s", r.Raw)
	}
	wantPref(t, prefs, "marketing", true, false)
	wantPref(t, prefs, "news", false, false) // opt-in, not allowed yet
	wantPref(t, prefs, "otp", true, false)
	if prefs["marketing"]["description"] != "Offers and sales" || prefs["otp"]["critical"] != true {
		t.Errorf("lookup's categories: %s", r.Raw)
	}
	news := `{"to":"` + prefNumber + `","message":"This week","category":"news"}`
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", news, nil), http.StatusUnprocessableEntity, "declined")

	// Allow news, decline marketing: the answer is the lookup's.
	r = e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":`+prefNumber+`,"choices":{"news":true,"marketing":false}}`, nil)
	prefs = prefsOf(t, r)
	if r.Body["to"] != prefCanonical {
		t.Errorf("set answered to %v", r.Body["to"])
	}
	wantPref(t, prefs, "news", true, true)
	wantPref(t, prefs, "marketing", false, true)
	wantPref(t, prefs, "order", true, false)
	prefs = prefsOf(t, e.Post(t, "/api/v1/preferences/lookup", lookup, nil))
	wantPref(t, prefs, "news", true, true)
	wantPref(t, prefs, "marketing", false, true)
	// The store keeps them in the canonical form the Notifier reads.
	if got, err := e.Ledger.Choices(context.Background(), httpapienv.TestAccount, "sms", prefCanonical); err != nil || len(got) != 2 || !got["news"] || got["marketing"] {
		t.Fatalf("store: %v, %v", got, err)
	}

	if r := e.Post(t, "/api/v1/sms", news, nil); r.Status != http.StatusOK {
		t.Fatalf("news after allowing it: %d %s", r.Status, r.Raw)
	}
	before := e.Minor(t, httpapienv.TestAccount)
	marketing := `{"to":"` + prefNumber + `","message":"Half price","category":"marketing"}`
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", marketing, nil), http.StatusUnprocessableEntity, "declined")
	if got := e.Minor(t, httpapienv.TestAccount); got != before {
		t.Fatalf("declined send charged %d", before-got)
	}

	// Changed back, the next send goes; the other choice stays.
	prefs = prefsOf(t, e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":true}}`, nil))
	wantPref(t, prefs, "marketing", true, true)
	wantPref(t, prefs, "news", true, true)
	if r := e.Post(t, "/api/v1/sms", marketing, nil); r.Status != http.StatusOK {
		t.Fatalf("marketing after allowing it again: %d %s", r.Status, r.Raw)
	}

	// An e-mail recipient is read in its canonical form too.
	r = e.Post(t, "/api/v1/preferences", `{"channel":"email","to":" Asha@Example.COM","choices":{"marketing":false}}`, nil)
	if prefsOf(t, r); r.Body["to"] != "asha@example.com" {
		t.Fatalf("e-mail set: %s", r.Raw)
	}
	httpapienv.WantError(t, e.Post(t, "/api/v1/email/send", `{"to":"asha@example.com","subject":"Sale","message":"x","category":"marketing"}`, nil),
		http.StatusUnprocessableEntity, "declined")

	// Nothing of a recipient reaches the access log: they travel in bodies.
	if logs := e.Logs.String(); strings.Contains(logs, "9876543210") || strings.Contains(strings.ToLower(logs), "asha@") {
		t.Errorf("the access log holds a recipient:\n%s", logs)
	}
}

// Bad preference bodies are 400 naming every bad field, and record
// nothing.
func TestPreferencesInputs(t *testing.T) {
	e := newPreferenceEnv(t)
	for _, c := range []struct {
		path, body string
		fields     []string
	}{
		{"/api/v1/preferences/lookup", `{"channel":"fax","to":"` + prefNumber + `"}`, []string{"channel"}},
		{"/api/v1/preferences/lookup", `{"channel":"otp","to":"` + prefNumber + `"}`, []string{"channel"}},
		{"/api/v1/preferences/lookup", `{"to":"` + prefNumber + `"}`, []string{"channel"}},
		{"/api/v1/preferences/lookup", `{"channel":"sms"}`, []string{"to"}},
		{"/api/v1/preferences/lookup", `{"channel":"sms","to":"12345"}`, []string{"to"}},
		{"/api/v1/preferences/lookup", `{"channel":"email","to":"not-an-address"}`, []string{"to"}},
		{"/api/v1/preferences/lookup", `{"channel":["sms"],"to":true}`, []string{"channel", "to"}},
		{"/api/v1/preferences/lookup", `{"channel":"sms","to":"` + prefNumber + `","choices":{}}`, []string{"choices"}},
		{"/api/v1/preferences/lookup", `{"channel":"sms","to":"` + prefNumber + `","Channel":"sms"}`, []string{"Channel"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `"}`, []string{"choices"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","choices":{}}`, []string{"choices"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","choices":["marketing"]}`, []string{"choices"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","choices":{"marketing":false,"promo":true}}`, []string{"choices.promo"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","choices":{"marketing":"no","Promo!":true}}`, []string{"choices.marketing", "choices.Promo!"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","choices":{"marketing":false,"marketing":true}}`, []string{"choices.marketing"}},
		{"/api/v1/preferences", `{"channel":"fax","to":"12","choices":{"promo":false}}`, []string{"channel", "choices.promo"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","choices":{"marketing":false},"category":"x"}`, []string{"category"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","locale":"Hindi"}`, []string{"locale"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","locale":7,"choices":{"promo":true}}`, []string{"locale", "choices.promo"}},
		{"/api/v1/preferences", `{"channel":"sms","to":"` + prefNumber + `","locale":"hi","choices":{}}`, []string{"choices"}},
	} {
		r := e.Post(t, c.path, c.body, nil)
		httpapienv.WantError(t, r, http.StatusBadRequest, "invalid_argument")
		for _, f := range c.fields {
			if r.ErrFields()[f] == nil {
				t.Errorf("%s %s: %s names no %s", c.path, c.body, r.Raw, f)
			}
		}
	}
	// Another account's categories are not this one's.
	r := e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":false}}`,
		map[string]string{"Authorization": httpapienv.OtherKey})
	httpapienv.WantError(t, r, http.StatusBadRequest, "invalid_argument")
	if r.ErrFields()["choices.marketing"] == nil {
		t.Errorf("another account's choice: %s", r.Raw)
	}
	for _, acct := range []string{httpapienv.TestAccount, "acct-2"} {
		if got, err := e.Ledger.Choices(context.Background(), acct, "sms", prefCanonical); err != nil || len(got) != 0 {
			t.Fatalf("a refused body recorded %v (%v) for %s", got, err, acct)
		}
		if got, err := e.Ledger.Locales(context.Background(), acct, []string{prefCanonical}); err != nil || len(got) != 0 {
			t.Fatalf("a refused body recorded the locales %v (%v) for %s", got, err, acct)
		}
	}

	// Without a key, 401; another method, 405.
	r = e.Do(t, http.MethodGet, "/api/v1/categories", map[string]string{"Authorization": "<none>"}, nil)
	httpapienv.WantError(t, r, http.StatusUnauthorized, "unauthenticated")
	r = e.Post(t, "/api/v1/preferences", `{}`, map[string]string{"Authorization": "nk_nobody"})
	httpapienv.WantError(t, r, http.StatusUnauthorized, "unauthenticated")
	r = e.Do(t, http.MethodPut, "/api/v1/categories", nil, strings.NewReader(`{}`))
	httpapienv.WantError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	r = e.Do(t, http.MethodGet, "/api/v1/preferences/lookup", nil, nil)
	httpapienv.WantError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	r = e.Post(t, "/api/v1/preferences", `{}`, map[string]string{"Content-Type": "text/plain"})
	httpapienv.WantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
}

// Without WithPreferences the routes are not served; a nil store is an
// error.
func TestPreferencesNeedTheOption(t *testing.T) {
	e := httpapienv.New(t)
	httpapienv.WantError(t, e.Do(t, http.MethodGet, "/api/v1/categories", nil, nil), http.StatusNotFound, "not_found")
	httpapienv.WantError(t, e.Post(t, "/api/v1/preferences/lookup", `{"channel":"sms","to":"`+prefNumber+`"}`, nil), http.StatusNotFound, "not_found")
	httpapienv.WantError(t, e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"a":true}}`, nil), http.StatusNotFound, "not_found")

	for _, p := range []store.Preferences{nil, (*memstore.Ledger)(nil), (*memstore.Preferences)(nil)} {
		if _, err := httpapi.New(e.Notifier, e.Accounts, httpapi.WithPreferences(p)); err == nil {
			t.Errorf("WithPreferences(%T) was taken", p)
		}
	}
	for _, p := range []string{"/categories", "/preferences", "/preferences/lookup"} {
		if _, err := httpapi.New(e.Notifier, e.Accounts, httpapi.WithRoute(p, decodeNothing)); err == nil {
			t.Errorf("WithRoute(%q) was taken", p)
		}
	}
}

// failingPreferences is a store whose every call fails in a database's
// words.
type failingPreferences struct{ store.Preferences }

func (failingPreferences) Categories(context.Context, string) ([]store.Category, error) {
	return nil, &pgLikeError{}
}

type pgLikeError struct{}

func (*pgLikeError) Error() string {
	return "pgstore: categories: dial tcp 10.9.8.7:5432: connect: connection refused (user notify_app)"
}

// A store that fails is answered with a plain sentence naming the store
// and the request ID, never its words, which the log keeps.
func TestPreferencesStoreFailure(t *testing.T) {
	e := httpapienv.NewHooked(t, httpapienv.OpeningBal, func(*httpapienv.Env) []notify.Option { return nil },
		func(*httpapienv.Env) []httpapi.Option {
			return []httpapi.Option{httpapi.WithPreferences(failingPreferences{memstore.NewPreferences()})}
		})
	for _, r := range []*httpapienv.Reply{
		e.Do(t, http.MethodGet, "/api/v1/categories", nil, nil),
		e.Post(t, "/api/v1/preferences/lookup", `{"channel":"sms","to":"`+prefNumber+`"}`, nil),
		e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":false}}`, nil),
	} {
		httpapienv.WantError(t, r, http.StatusInternalServerError, "internal")
		httpapienv.WantNoInternals(t, "preferences store failure", r, "10.9.8.7", "pgstore", "notify_app")
		if !strings.Contains(r.Raw, "preferences store") {
			t.Errorf("the answer does not name the store: %s", r.Raw)
		}
		httpapienv.WantLogged(t, "preferences store failure", e.Logs.String(), r.Header.Get("X-Request-ID"), "10.9.8.7")
	}
}

// newQueuedPreferenceEnv is newPreferenceEnv with a queue (a memqueue
// over the env's ledger, on its clock) and "Prefer: respond-async".
func newQueuedPreferenceEnv(t *testing.T) (*httpapienv.Env, *memqueue.Queue) {
	t.Helper()
	var q *memqueue.Queue
	e := httpapienv.NewHooked(t, httpapienv.OpeningBal, func(e *httpapienv.Env) []notify.Option {
		var err error
		if q, err = memqueue.New(memqueue.Config{Ledger: e.Ledger, Now: e.Clock.Now}); err != nil {
			t.Fatal(err)
		}
		return []notify.Option{notify.WithQueue(q)}
	}, withPreferences, httpapi.WithRespondAsync())
	putCategories(t, e.Ledger)
	return e, q
}

// A chat message's fallback step carries the chat's category unless it
// names its own: a step on a channel the recipient declined it on is
// skipped, and one that names another category goes.
func TestFallbackStepCarriesTheCategory(t *testing.T) {
	e, q := newQueuedPreferenceEnv(t)
	prefsOf(t, e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":false}}`, nil))
	step := `"fallback":[{"channel":"sms","after_seconds":120,"message":"Half price today"}]`
	r := e.Post(t, "/api/v1/messenger/send", `{"to":"`+prefNumber+`","message":"Half price today","gateway":"cloud","category":"marketing",`+step+`}`, nil)
	if note, _ := r.Body["note"].(string); r.Status != http.StatusOK || !strings.Contains(note, "skipped the chain's sms message") {
		t.Fatalf("chat with a declined step: %d %s; want it sent, its SMS step skipped", r.Status, r.Raw)
	}
	e.Clock.Advance(time.Hour)
	if runDue(e, q) != 0 || e.SMS.Len() != 0 {
		t.Fatalf("the declined SMS step went (%d SMS)", e.SMS.Len())
	}

	// A step naming another category keeps it, and goes.
	step = `"fallback":[{"channel":"sms","after_seconds":120,"message":"Shipped","category":"order"}]`
	r = e.Post(t, "/api/v1/messenger/send", `{"to":"`+prefNumber+`","message":"Shipped","gateway":"cloud","category":"marketing",`+step+`}`, nil)
	if r.Status != http.StatusOK || r.Body["note"] != nil {
		t.Fatalf("chat with an order step: %d %s", r.Status, r.Raw)
	}
	e.Clock.Advance(time.Hour)
	if runDue(e, q) != 1 || e.SMS.Len() != 1 {
		t.Fatalf("the order step: %d SMS, want 1", e.SMS.Len())
	}
}

// Scheduled and queued sends of a declined category are refused before
// anything is charged, as a send at once is; a worker reads the choice
// again, so that one declined after the send was queued stops it too.
func TestQueuedSendOfADeclinedCategory(t *testing.T) {
	e, q := newQueuedPreferenceEnv(t)
	prefsOf(t, e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":false}}`, nil))
	before := e.Minor(t, httpapienv.TestAccount)
	scheduled := `{"to":"` + prefNumber + `","message":"Half price","category":"marketing","send_at":"` + inAnHour + `"}`
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", scheduled, nil), http.StatusUnprocessableEntity, "declined")
	async := map[string]string{"Prefer": "respond-async"}
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", `{"to":"`+prefNumber+`","message":"Half price","category":"marketing"}`, async),
		http.StatusUnprocessableEntity, "declined")
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms/bulk", `{"to":["`+prefNumber+`"],"message":"Half price","category":"marketing","send_at":"`+inAnHour+`"}`, nil),
		http.StatusUnprocessableEntity, "declined")
	if got := e.Minor(t, httpapienv.TestAccount); got != before {
		t.Fatalf("refused queued sends charged %d", before-got)
	}

	// Allowed when scheduled, declined before it is due: the worker fails
	// and refunds it.
	prefsOf(t, e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":true}}`, nil))
	r := e.Post(t, "/api/v1/sms", scheduled, nil)
	if r.Status != http.StatusAccepted || r.Body["status"] != "scheduled" {
		t.Fatalf("scheduled while allowed: %d %s", r.Status, r.Raw)
	}
	prefsOf(t, e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","choices":{"marketing":false}}`, nil))
	e.Clock.Advance(2 * time.Hour)
	runDue(e, q)
	if e.SMS.Len() != 0 || e.Minor(t, httpapienv.TestAccount) != before {
		t.Fatalf("a send declined while it waited went (%d SMS) or stayed charged (%d)", e.SMS.Len(), before-e.Minor(t, httpapienv.TestAccount))
	}
	if d := recordOf(t, e, r.Body["message_id"].(string)); d["status"] != "failed" {
		t.Errorf("the declined scheduled message: %v", d)
	}
}

// A recipient's locale set over the API (alone, or beside choices) is
// answered canonical by both routes, on every channel of its number, and
// chooses the variant of the next templated send that names no locale;
// "" forgets it.
func TestRecipientLocaleOverTheAPI(t *testing.T) {
	e := newPreferenceEnv(t)
	order := `{"to":"` + prefNumber + `","template_slug":"order-confirmed","variables":{"NAME":"Asha","ORDER_ID":"4711",` +
		`"AMOUNT":"₹499.00","DELIVERY_DATE":"12/08/2026","LINK":"https://shop.example/o/4711"}}`
	r := e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","locale":"hi_in"}`, nil)
	if prefsOf(t, r); r.Body["locale"] != "hi-IN" {
		t.Fatalf("set a locale alone: %s", r.Raw)
	}
	r = e.Post(t, "/api/v1/preferences/lookup", `{"channel":"chat","to":"`+prefCanonical+`"}`, nil)
	if prefsOf(t, r); r.Body["locale"] != "hi-IN" {
		t.Fatalf("the number's locale on chat: %s", r.Raw)
	}
	if r := e.Post(t, "/api/v1/sms", order, nil); r.Status != http.StatusOK {
		t.Fatalf("order SMS: %d %s", r.Status, r.Raw)
	}
	if text := lastSMSText(e); !strings.Contains(text, "जी") {
		t.Errorf("order SMS to a hi-IN recipient: %q; want the Hindi variant", text)
	}

	r = e.Post(t, "/api/v1/preferences", `{"channel":"sms","to":"`+prefNumber+`","locale":"","choices":{"marketing":false}}`, nil)
	if prefs := prefsOf(t, r); r.Body["locale"] != "" || prefs["marketing"]["allowed"] != false {
		t.Fatalf("forget the locale beside a choice: %s", r.Raw)
	}
	if r := e.Post(t, "/api/v1/sms", order, nil); r.Status != http.StatusOK {
		t.Fatalf("order SMS: %d %s", r.Status, r.Raw)
	}
	if text := lastSMSText(e); !strings.Contains(text, "is confirmed") {
		t.Errorf("order SMS after the locale was forgotten: %q; want English", text)
	}
	if logs := e.Logs.String(); strings.Contains(logs, "9876543210") {
		t.Errorf("the access log holds the recipient:\n%s", logs)
	}
}

// lastSMSText is the text of the last SMS e sent.
func lastSMSText(e *httpapienv.Env) string {
	sent := e.SMS.Sent()
	if len(sent) == 0 {
		return ""
	}
	return sms.MessageOf(sent[len(sent)-1]).Text
}
