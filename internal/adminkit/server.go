package adminkit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/adminapi"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/syncbuf"
)

const adminKey = "admin-key-0123456789-0123456789-abcdef"

type server struct {
	url  string
	logs *syncbuf.Buffer
	b    Backend
}

func newServer(t *testing.T, b Backend) *server {
	logs := &syncbuf.Buffer{}
	h, err := adminapi.New(b.Store, adminKey, adminapi.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &server{url: ts.URL, logs: logs, b: b}
}

type reply struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func (r *reply) data() map[string]any { d, _ := r.body["data"].(map[string]any); return d }

func (r *reply) code() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r *reply) field(name string) string {
	e, _ := r.body["error"].(map[string]any)
	f, _ := e["fields"].(map[string]any)
	s, _ := f[name].(string)
	return s
}

// do sends a request with the admin key (auth "" for none).
func (s *server) do(t *testing.T, method, path, auth, body string) *reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := &reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, path, raw)
	}
	if resp.Header.Get("X-Request-ID") == "" {
		t.Errorf("%s %s: no X-Request-ID", method, path)
	}
	return r
}

const bearer = "Bearer " + adminKey

func (s *server) admin(t *testing.T, method, path, body string) *reply {
	t.Helper()
	return s.do(t, method, path, bearer, body)
}

func want(t *testing.T, r *reply, status int, code string) {
	t.Helper()
	if r.status != status || r.code() != code {
		t.Fatalf("got %d %s, want %d %q", r.status, r.raw, status, code)
	}
}

// create makes account id with an opening balance of 10.00 and returns
// its API key.
func (s *server) create(t *testing.T, id string) string {
	t.Helper()
	r := s.admin(t, "POST", "/admin/v1/accounts", `{"id":"`+id+`","name":"Acme","opening_balance":"10.00"}`)
	want(t, r, 201, "")
	return r.data()["api_key"].(string)
}

func num(v any) int64 { f, _ := v.(float64); return int64(f) }

func (k kit) testAuth(t *testing.T) {
	s := newServer(t, k.nb(t))
	for _, auth := range []string{"", "Bearer wrong", adminKey, "Bearer " + adminKey + "x", "Basic " + adminKey} {
		r := s.do(t, "GET", "/admin/v1/accounts", auth, "")
		want(t, r, 401, "unauthenticated")
		if r.body["success"] != false || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("401 answer %s %v", r.raw, r.header)
		}
	}
	// Unknown paths are 401 without the key too: nothing is revealed.
	want(t, s.do(t, "GET", "/admin/v1/nothing", "", ""), 401, "unauthenticated")
	want(t, s.admin(t, "GET", "/admin/v1/nothing", ""), 404, "not_found")
	r := s.admin(t, "DELETE", "/admin/v1/accounts", "")
	want(t, r, 405, "method_not_allowed")
	if r.header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	if _, err := adminapi.New(k.nb(t).Store, "short"); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("New with a short key: %v", err)
	}
}

func (k kit) testAccounts(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		r := s.admin(t, "POST", "/admin/v1/accounts", `{"id":"acme","name":"Acme Ltd","vendor_id":"ACMEIN","sender_ids":["ACMEIN"],
			"opening_balance_minor":1000,"dlt_templates":[{"id":"1107","entity_id":"1201","content":"Code {#var#}"}]}`)
		want(t, r, 201, "")
		d := r.data()
		key, _ := d["api_key"].(string)
		if !strings.HasPrefix(key, "nk_") || d["balance"] != "10.00" || num(d["balance_minor"]) != 1000 || d["name"] != "Acme Ltd" {
			t.Fatalf("create: %s", r.raw)
		}
		if a, err := b.Keys.AccountByKey(context.Background(), key); err != nil || a.ID != "acme" {
			t.Fatalf("the new key: %v, %v", a, err)
		}
		if !strings.Contains(s.logs.String(), `"action":"account.create"`) || strings.Contains(s.logs.String(), key) {
			t.Errorf("log: %s", s.logs.String())
		}
		// Read.
		r = s.admin(t, "GET", "/admin/v1/accounts/acme", "")
		want(t, r, 200, "")
		if r.data()["api_key"] != nil || r.data()["balance"] != "10.00" || len(r.data()["dlt_templates"].([]any)) != 1 {
			t.Fatalf("read: %s", r.raw)
		}
		want(t, s.admin(t, "GET", "/admin/v1/accounts/nobody", ""), 404, "not_found")
		// Conflict and validation.
		want(t, s.admin(t, "POST", "/admin/v1/accounts", `{"id":"acme"}`), 409, "conflict")
		r = s.admin(t, "POST", "/admin/v1/accounts", `{"id":"bad id!","currency":"US$","opening_balance":"-1"}`)
		want(t, r, 400, "invalid_argument")
		if r.field("id") == "" || r.field("currency") == "" || r.field("opening_balance") == "" {
			t.Errorf("fields: %s", r.raw)
		}
		r = s.admin(t, "POST", "/admin/v1/accounts", `{"id":"x","colour":"red"}`)
		want(t, r, 400, "invalid_argument")
		if r.field("colour") == "" {
			t.Errorf("unknown field: %s", r.raw)
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts", `{"id":`), 400, "invalid_argument")
		req, _ := http.NewRequest("POST", s.url+"/admin/v1/accounts", strings.NewReader(`{"id":"x"}`))
		req.Header.Set("Authorization", bearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 415 {
			t.Errorf("no Content-Type: %d", resp.StatusCode)
		}
		big := `{"id":"x","name":"` + strings.Repeat("a", adminapi.MaxBodyBytes) + `"}`
		want(t, s.admin(t, "POST", "/admin/v1/accounts", big), 413, "request_too_large")
	})
}

// pages reads a list from its first page, path (which sets ?limit=),
// following the next cursors for at most maxPages pages (a list that
// never ends shows in what the caller gets), and returns the items, under
// field, of every page in order.
func (s *server) pages(t *testing.T, path, field string) []map[string]any {
	t.Helper()
	const maxPages = 6
	var items []map[string]any
	next := ""
	for range maxPages {
		page := path
		if next != "" {
			page += "&after=" + next
		}
		r := s.admin(t, "GET", page, "")
		want(t, r, 200, "")
		for _, it := range r.data()[field].([]any) {
			items = append(items, it.(map[string]any))
		}
		if next, _ = r.data()["next"].(string); next == "" {
			break
		}
	}
	return items
}

func (k kit) testListAccounts(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		for _, id := range []string{"c", "a", "e", "b", "d"} {
			s.create(t, id)
		}
		var got []string
		for _, a := range s.pages(t, "/admin/v1/accounts?limit=2", "accounts") {
			got = append(got, a["id"].(string))
		}
		if strings.Join(got, ",") != "a,b,c,d,e" {
			t.Fatalf("pages: %v", got)
		}
		r := s.admin(t, "GET", "/admin/v1/accounts", "")
		if len(r.data()["accounts"].([]any)) != 5 || r.data()["next"] != nil {
			t.Fatalf("default page: %s", r.raw)
		}
		for _, bad := range []string{"limit=0", "limit=501", "limit=x", "after=!!!"} {
			want(t, s.admin(t, "GET", "/admin/v1/accounts?"+bad, ""), 400, "invalid_argument")
		}
		want(t, s.admin(t, "GET", "/admin/v1/accounts?limit=500", ""), 200, "")
	})
}

func (k kit) testDisableEnable(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		key := s.create(t, "acme")
		r := s.admin(t, "POST", "/admin/v1/accounts/acme/disable", "")
		want(t, r, 200, "")
		if r.data()["disabled"] != true {
			t.Fatalf("disable: %s", r.raw)
		}
		if a, _ := b.Keys.AccountByKey(context.Background(), key); a == nil || !a.Disabled {
			t.Fatal("the account is not disabled")
		}
		if !strings.Contains(s.logs.String(), `"action":"account.disable"`) {
			t.Errorf("log: %s", s.logs.String())
		}
		r = s.admin(t, "POST", "/admin/v1/accounts/acme/enable", "")
		want(t, r, 200, "")
		if r.data()["disabled"] != false {
			t.Fatalf("enable: %s", r.raw)
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts/nobody/disable", ""), 404, "not_found")
		want(t, s.admin(t, "POST", "/admin/v1/accounts/nobody/enable", ""), 404, "not_found")
	})
}

func (k kit) testCountries(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		key := s.create(t, "acme")
		places := func(r *reply) string {
			return fmt.Sprintf("%v %v", r.data()["region"], r.data()["countries"])
		}
		// An account made without them sends to India only.
		r := s.admin(t, "GET", "/admin/v1/accounts/acme", "")
		if got := places(r); got != "IN [IN]" {
			t.Fatalf("defaults: %s", got)
		}
		r = s.admin(t, "PUT", "/admin/v1/accounts/acme/countries", `{"countries":["IN","US","GB"]}`)
		want(t, r, 200, "")
		if got := places(r); got != "IN [IN US GB]" {
			t.Fatalf("after PUT: %s", got)
		}
		if a, _ := b.Keys.AccountByKey(context.Background(), key); a == nil || !slices.Equal(a.Countries, []string{"IN", "US", "GB"}) || a.Region != "" {
			t.Fatalf("stored %+v", a)
		}
		if !strings.Contains(s.logs.String(), `"action":"account.countries"`) {
			t.Errorf("log: %s", s.logs.String())
		}
		r = s.admin(t, "PUT", "/admin/v1/accounts/acme/countries", `{"region":"US","countries":[]}`)
		want(t, r, 200, "")
		if got := places(r); got != "US [US]" {
			t.Fatalf("back to the region: %s", got)
		}

		r = s.admin(t, "PUT", "/admin/v1/accounts/acme/countries", `{"region":"india","countries":["US","us","*","US"]}`)
		want(t, r, 400, "invalid_argument")
		for field, rule := range map[string]string{"region": "alpha-2", "countries[1]": "capitals", "countries[3]": "twice"} {
			if !strings.Contains(r.field(field), rule) {
				t.Errorf("%s: %q, want it to mention %q (%s)", field, r.field(field), rule, r.raw)
			}
		}
		if r.field("countries[2]") != "" {
			t.Errorf(`"*" refused: %s`, r.raw)
		}
		want(t, s.admin(t, "PUT", "/admin/v1/accounts/nobody/countries", `{"countries":["US"]}`), 404, "not_found")

		r = s.admin(t, "POST", "/admin/v1/accounts", `{"id":"globex","region":"GB","countries":["GB","*"]}`)
		want(t, r, 201, "")
		if got := places(r); got != "GB [GB *]" {
			t.Fatalf("create: %s", got)
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts", `{"id":"initech","region":"G"}`), 400, "invalid_argument")
	})
}

func (k kit) testRotateKey(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		old := s.create(t, "acme")
		r := s.admin(t, "POST", "/admin/v1/accounts/acme/rotate-key", "")
		want(t, r, 200, "")
		fresh, _ := r.data()["api_key"].(string)
		if fresh == "" || fresh == old {
			t.Fatalf("rotate: %s", r.raw)
		}
		ctx := context.Background()
		if _, err := b.Keys.AccountByKey(ctx, old); notify.CodeOf(err) != notify.CodeUnauthenticated {
			t.Fatalf("old key: %v", err)
		}
		if a, err := b.Keys.AccountByKey(ctx, fresh); err != nil || a.ID != "acme" {
			t.Fatalf("new key: %v", err)
		}
		if logs := s.logs.String(); !strings.Contains(logs, `"action":"account.rotate_key"`) || strings.Contains(logs, fresh) {
			t.Errorf("log: %s", logs)
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts/nobody/rotate-key", ""), 404, "not_found")
	})
}

func (k kit) testTopUp(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme") // 10.00
		for range 2 {
			r := s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount":"5.50","reference":"inv-1"}`)
			want(t, r, 200, "")
			if num(r.data()["balance_minor"]) != 1550 || r.data()["balance"] != "15.50" || r.data()["reference"] != "inv-1" {
				t.Fatalf("top-up: %s", r.raw)
			}
		}
		// The same in minor units is the same top-up.
		r := s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":550,"reference":"inv-1"}`)
		want(t, r, 200, "")
		want(t, s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":600,"reference":"inv-1"}`), 409, "conflict")
		if bal, _ := b.Store.Balance(context.Background(), "acme"); bal.Available.Minor != 1550 {
			t.Fatalf("balance %d, want 1550: credited twice", bal.Available.Minor)
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":100,"reference":"inv-2"}`), 200, "")
		if bal, _ := b.Store.Balance(context.Background(), "acme"); bal.Available.Minor != 1650 {
			t.Fatalf("balance %d, want 1650", bal.Available.Minor)
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts/nobody/topups", `{"amount_minor":100,"reference":"x"}`), 404, "not_found")
		r = s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount":"1.234","reference":"has space"}`)
		want(t, r, 400, "invalid_argument")
		if r.field("amount") == "" || r.field("reference") == "" {
			t.Errorf("fields: %s", r.raw)
		}
		r = s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":0,"reference":"z"}`)
		want(t, r, 400, "invalid_argument")
		r = s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount":"1","amount_minor":100,"reference":"z"}`)
		want(t, r, 400, "invalid_argument")
		if logs := s.logs.String(); strings.Count(logs, `"action":"wallet.topup"`) < 2 || !strings.Contains(logs, `"request_id"`) {
			t.Errorf("log: %s", logs)
		}
	})
}

// Accounts hold any ISO 4217 currency: amounts are read and written in
// its minor unit (cents, yen, fils), and a wrong one names the rule.
func (k kit) testCurrencies(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		for _, c := range []struct {
			id, currency, opening string
			minor                 int64
			object                string
		}{
			{"us", "USD", "5.00", 500, `{"code":"USD","symbol":"$","exponent":2}`},
			{"jp", "JPY", "500", 500, `{"code":"JPY","symbol":"¥","exponent":0}`},
			{"kw", "KWD", "1.250", 1250, `{"code":"KWD","symbol":"","exponent":3}`},
		} {
			r := s.admin(t, "POST", "/admin/v1/accounts", fmt.Sprintf(`{"id":%q,"currency":%q,"opening_balance":%q}`, c.id, c.currency, c.opening))
			want(t, r, 201, "")
			if num(r.data()["balance_minor"]) != c.minor || r.data()["balance"] != c.opening || !strings.Contains(r.raw, `"currency":`+c.object) {
				t.Fatalf("create in %s: %s", c.currency, r.raw)
			}
			bal, err := b.Store.Balance(context.Background(), c.id)
			if err != nil || bal.Available.Minor != c.minor || bal.Available.Currency.Code != c.currency {
				t.Fatalf("%s balance %+v, %v", c.currency, bal.Available, err)
			}
		}
		// A yen has no minor unit, a dinar three: more decimals are refused.
		r := s.admin(t, "POST", "/admin/v1/accounts/jp/topups", `{"amount":"1.5","reference":"t1"}`)
		want(t, r, 400, "invalid_argument")
		if r.field("amount") == "" {
			t.Errorf("fields: %s", r.raw)
		}
		r = s.admin(t, "POST", "/admin/v1/accounts/kw/topups", `{"amount":"0.125","reference":"t1"}`)
		want(t, r, 200, "")
		if num(r.data()["balance_minor"]) != 1375 || r.data()["balance"] != "1.375" {
			t.Fatalf("KWD top-up: %s", r.raw)
		}
		want(t, s.admin(t, "POST", "/admin/v1/accounts/jp/topups", `{"amount":"100","reference":"t2"}`), 200, "")
		r = s.admin(t, "GET", "/admin/v1/accounts/jp/ledger", "")
		want(t, r, 200, "")
		if !strings.Contains(r.raw, `"code":"JPY"`) || !strings.Contains(r.raw, `"balance_minor":600`) {
			t.Errorf("JPY ledger: %s", r.raw)
		}
		for _, bad := range []string{"usd", "XAU", "US", "€", "ABC"} {
			r := s.admin(t, "POST", "/admin/v1/accounts", fmt.Sprintf(`{"id":"x","currency":%q}`, bad))
			want(t, r, 400, "invalid_argument")
			if !strings.Contains(r.field("currency"), "ISO 4217") {
				t.Errorf("currency %q: %s", bad, r.raw)
			}
		}
	})
}

func (k kit) testLedger(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		for _, ref := range []string{"r1", "r2", "r3"} {
			want(t, s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":100,"reference":"`+ref+`"}`), 200, "")
		}
		var refs []string
		var bals []int64
		for _, e := range s.pages(t, "/admin/v1/accounts/acme/ledger?limit=2", "entries") {
			if e["kind"] != "credit" || num(e["amount_minor"]) != 100 {
				t.Errorf("entry %v", e)
			}
			refs = append(refs, e["ref"].(string))
			bals = append(bals, num(e["balance_minor"]))
		}
		if strings.Join(refs, ",") != "topup:r1,topup:r2,topup:r3" || bals[2] != 1300 {
			t.Fatalf("ledger: %v %v", refs, bals)
		}
		want(t, s.admin(t, "GET", "/admin/v1/accounts/nobody/ledger", ""), 404, "not_found")
		want(t, s.admin(t, "GET", "/admin/v1/accounts/acme/ledger?after=bad!", ""), 400, "invalid_argument")
		want(t, s.admin(t, "GET", "/admin/v1/accounts/acme/ledger?limit=501", ""), 400, "invalid_argument")
	})
}

func (k kit) testMessages(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		s.create(t, "other")
		base := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
		for i, id := range []string{"m1", "m2", "m3"} {
			m := &record.Message{ID: id, Account: "acme", Kind: sms.Kind, Request: sms.Kind, To: "9876543210",
				Units: 1, Metered: true, Charge: notify.Money{Minor: 25, Currency: record.INR()}, CreatedAt: base.Add(time.Duration(i) * time.Second)}
			if _, err := b.Msgs.Open(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.Msgs.Open(context.Background(), &record.Message{ID: "o1", Account: "other", Kind: sms.Kind, CreatedAt: base}); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range s.pages(t, "/admin/v1/accounts/acme/messages?limit=2", "messages") {
			if m["status"] != "pending" || num(m["cost_minor"]) != 25 || m["channel"] != "sms" {
				t.Errorf("message %v", m)
			}
			ids = append(ids, m["message_id"].(string))
		}
		if strings.Join(ids, ",") != "m3,m2,m1" {
			t.Fatalf("messages: %v", ids)
		}
		want(t, s.admin(t, "GET", "/admin/v1/accounts/nobody/messages", ""), 404, "not_found")
		want(t, s.admin(t, "GET", "/admin/v1/accounts/acme/messages?after=eA", ""), 400, "invalid_argument")
		want(t, s.admin(t, "GET", "/admin/v1/accounts/acme/messages?limit=-1", ""), 400, "invalid_argument")
	})
}

func (k kit) testDLTTemplates(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		const path = "/admin/v1/accounts/acme/dlt-templates"
		r := s.admin(t, "PUT", path+"/1107161", `{"entity_id":"1201","content":"Your code is {#var#}"}`)
		want(t, r, 201, "")
		r = s.admin(t, "PUT", path+"/1107161", `{"entity_id":"1201","content":"Code {#var#}","message_id":"55"}`)
		want(t, r, 200, "")
		r = s.admin(t, "GET", path, "")
		want(t, r, 200, "")
		ts := r.data()["dlt_templates"].([]any)
		if len(ts) != 1 || ts[0].(map[string]any)["content"] != "Code {#var#}" || ts[0].(map[string]any)["message_id"] != "55" {
			t.Fatalf("list: %s", r.raw)
		}
		a, _ := b.Store.Account(context.Background(), "acme")
		if set, err := sms.SettingsOf(a); err != nil || len(set.DLTTemplates) != 1 || set.DLTTemplates[0].ID != "1107161" ||
			set.DLTTemplates[0].Content != "Code {#var#}" || set.DLTTemplates[0].MessageID != "55" {
			t.Fatalf("stored: %+v, %v", set, err)
		}
		r = s.admin(t, "PUT", path+"/1107161", `{"content":""}`)
		want(t, r, 400, "invalid_argument")
		if r.field("content") == "" {
			t.Errorf("fields: %s", r.raw)
		}
		// Each vendor's own ID, by provider name.
		r = s.admin(t, "PUT", path+"/1107162", `{"entity_id":"1201","content":"Hi {#var#}","message_ids":{"msg91":"66a1b2","smsgateway":"161"}}`)
		want(t, r, 201, "")
		if !strings.Contains(r.raw, `"message_ids":{"msg91":"66a1b2","smsgateway":"161"}`) {
			t.Fatalf("message_ids: %s", r.raw)
		}
		a, _ = b.Store.Account(context.Background(), "acme")
		if set, err := sms.SettingsOf(a); err != nil || len(set.DLTTemplates) != 2 || set.DLTTemplates[1].MessageIDs["msg91"] != "66a1b2" {
			t.Fatalf("stored: %+v, %v", set, err)
		}
		r = s.admin(t, "PUT", path+"/1107163", `{"content":"Hi","message_ids":{"bad name!":"1","msg91":""}}`)
		want(t, r, 400, "invalid_argument")
		if r.field("message_ids") == "" || r.field("message_ids.msg91") == "" {
			t.Errorf("message_ids fields: %s", r.raw)
		}
		s.wantDeleteOnce(t, "dlt-templates", "1107162", `{"content":"x"}`, "dlt_template")
		s.wantDeleteOnce(t, "dlt-templates", "1107161", `{"content":"x"}`, "dlt_template")
	})
}

func (k kit) testCustomTemplates(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		const path = "/admin/v1/accounts/acme/templates"
		r := s.admin(t, "PUT", path+"/welcome", `{"variables":["NAME"],"sms":"Hi {{NAME}}, welcome to Acme."}`)
		want(t, r, 201, "")
		want(t, s.admin(t, "PUT", path+"/welcome", `{"variables":["NAME"],"chat":"Hi {{NAME}}!"}`), 200, "")
		r = s.admin(t, "GET", path, "")
		want(t, r, 200, "")
		ts := r.data()["templates"].([]any)
		if len(ts) != 1 || ts[0].(map[string]any)["chat"] != "Hi {{NAME}}!" || ts[0].(map[string]any)["class"] != "transactional" {
			t.Fatalf("list: %s", r.raw)
		}
		if tpl, err := b.Store.Template(context.Background(), "acme", "welcome"); err != nil || tpl.Bodies[chat.Kind] != (store.Body{Text: "Hi {{NAME}}!"}) || len(tpl.Bodies) != 1 {
			t.Fatalf("stored: %v %v", tpl, err)
		}
		for _, c := range []struct{ body, field string }{
			{`{"sms":"Hi {{NAME"}`, "sms"},
			{`{"email_html":"<script>{{X}}</script>"}`, "email_html"},
			{`{"sms":"x","class":"spam"}`, "class"},
			{`{}`, "body"},
		} {
			r := s.admin(t, "PUT", path+"/broken", c.body)
			want(t, r, 400, "invalid_argument")
			if r.field(c.field) == "" {
				t.Errorf("%s: want field %s: %s", c.body, c.field, r.raw)
			}
		}
		r = s.admin(t, "PUT", path+"/Bad%20Slug", `{"sms":"x"}`)
		want(t, r, 400, "invalid_argument")
		if r.field("slug") == "" {
			t.Errorf("slug: %s", r.raw)
		}
		s.wantDeleteOnce(t, "templates", "welcome", `{"sms":"x"}`, "template")
	})
}

// wantDeleteOnce checks the end of the tests of acme's templates of a
// collection (dlt-templates, templates), where item was put: a PUT of
// body, a GET and a DELETE under an unknown account are 404; item deletes
// once, then is 404; the log has action's put and delete.
func (s *server) wantDeleteOnce(t *testing.T, collection, item, body, action string) {
	t.Helper()
	path, nobody := "/admin/v1/accounts/acme/"+collection, "/admin/v1/accounts/nobody/"+collection
	want(t, s.admin(t, "PUT", nobody+"/"+item, body), 404, "not_found")
	want(t, s.admin(t, "GET", nobody, ""), 404, "not_found")
	want(t, s.admin(t, "DELETE", path+"/"+item, ""), 200, "")
	want(t, s.admin(t, "DELETE", path+"/"+item, ""), 404, "not_found")
	want(t, s.admin(t, "DELETE", nobody+"/"+item, ""), 404, "not_found")
	if logs := s.logs.String(); !strings.Contains(logs, `"action":"`+action+`.put"`) || !strings.Contains(logs, `"action":"`+action+`.delete"`) {
		t.Errorf("log: %s", logs)
	}
}

// TestHangUpDoesNotCutAChange: a client that hangs up (its request's
// context canceled) before the store is called still gets its top-up
// made, once: the store calls run detached from the connection, so a
// change is never left made-or-not by a hang-up, and the retry with the
// same reference finds it.
func (k kit) testHangUpDoesNotCutAChange(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		h, err := adminapi.New(b.Store, adminKey)
		if err != nil {
			t.Fatal(err)
		}
		ctx, hangUp := context.WithCancel(context.Background())
		hangUp()
		req := httptest.NewRequestWithContext(ctx, "POST", "/admin/v1/accounts/acme/topups",
			strings.NewReader(`{"amount_minor":500,"reference":"inv-7"}`))
		req.Header.Set("Authorization", bearer)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("top-up of a client that hung up: %d %s", rec.Code, rec.Body)
		}
		if bal, _ := b.Store.Balance(context.Background(), "acme"); bal.Available.Minor != 1500 {
			t.Fatalf("balance %d, want 1500", bal.Available.Minor)
		}
		// The client's retry finds it made, and credits nothing more.
		want(t, s.admin(t, "POST", "/admin/v1/accounts/acme/topups", `{"amount_minor":500,"reference":"inv-7"}`), 200, "")
		if bal, _ := b.Store.Balance(context.Background(), "acme"); bal.Available.Minor != 1500 {
			t.Fatalf("balance after the retry %d, want 1500", bal.Available.Minor)
		}
	})
}
