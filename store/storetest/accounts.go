package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// AccountFixture is an account and the API keys that authenticate it.
type AccountFixture struct {
	Account *record.Account
	Keys    []string
}

// AccountsHarness connects RunAccounts to one store.Accounts.
type AccountsHarness struct {
	// New returns a store that holds the fixtures' accounts and keys
	// (and possibly other accounts: the suite's IDs and keys are random),
	// releasing it with t.Cleanup. Required.
	New func(t *testing.T, fixtures []AccountFixture) store.Accounts
}

// RunAccounts checks a store.Accounts:
//
//   - Account returns every field of the stored account, and ErrNotFound for
//     an unknown or empty ID;
//   - settings of several kinds come back with the same JSON (stores may
//     re-encode it: spacing, key order, escapes), and an account with no
//     settings (nil or an empty map) comes back with none: no kind
//     present, not even as null;
//   - AccountByKey returns the account that owns each of its keys, and
//     ErrUnauthenticated for an empty key, an unknown one, and keys one
//     character longer, shorter or different from a real one, with error
//     texts that contain neither the tried key nor the real one;
//   - disabled accounts are returned like others (the Notifier refuses
//     them);
//   - changing an account the store returned, or the fixture after New
//     (its fields, its Settings map, or the bytes of a setting in
//     place), changes nothing in the store;
//   - 64 goroutines looking accounts up at once all get the right ones.
func RunAccounts(t *testing.T, h AccountsHarness) {
	t.Helper()
	needs(t, h.New != nil, "AccountsHarness needs New")
	runAll(t, []subtest{
		{"AccountFields", func(t *testing.T) { testAccountFields(t, h) }},
		{"UnknownAccount", func(t *testing.T) { testUnknownAccount(t, h) }},
		{"AccountByKey", func(t *testing.T) { testAccountByKey(t, h) }},
		{"WrongKeys", func(t *testing.T) { testWrongKeys(t, h) }},
		{"DisabledAccount", func(t *testing.T) { testDisabledAccount(t, h) }},
		{"CallersCannotChangeStore", func(t *testing.T) { testAccountCopies(t, h) }},
		{"Concurrent", func(t *testing.T) { testAccountsConcurrent(t, h) }},
	})
}

// The settings of the suites' accounts: JSON objects as the SMS and chat
// channels would write them, with odd spacing, nesting, every kind of
// JSON value and text that encoders may escape, since a store keeps them
// opaque.
const (
	smsSettings = `{"sender_id":"ACMEST","sender_ids":["ACMEST","ACMEIN"],"dlt_templates":[` +
		`{"id":"1107160000000000001","entity_id":"1101160000000000001","content":"Your OTP is {#var#}. Do not share it."},` +
		`{"id":"1107160000000000002","entity_id":"1101160000000000001","content":"Order {#var#} has shipped.","message_id":"164725"}]}`
	chatSettings = `{ "primary_gateway" : "qr",
		"limits": {"per_day": 1000, "ratio": 0.25, "off": false, "none": null, "empty": {}, "list": []},
		"note": "नमस्ते <b>&</b> \"quoted\" \u00e9\n" }`
)

// fullAccount returns an account with every field set, and settings of
// two kinds.
func fullAccount() *record.Account {
	return &record.Account{
		ID:        newName("acct"),
		Name:      "Acme Stores",
		Currency:  inr,
		PricePlan: "gold",
		Region:    "US",
		Countries: []string{"US", "CA", "IN"},
		Locale:    "hi-IN",
		Settings: map[record.Kind]json.RawMessage{
			kindSMS:  json.RawMessage(smsSettings),
			kindChat: json.RawMessage(chatSettings),
		},
	}
}

func newKey() string { return newName("key") + newName("") }

// diffAccount describes how got differs from want, or returns "". Settings
// compare as JSON values (diffSettings).
func diffAccount(got, want *record.Account) string {
	if got == nil {
		return "nil account"
	}
	var d diffs
	d.field("ID", got.ID, want.ID)
	d.field("Name", got.Name, want.Name)
	d.field("Currency", got.Currency, want.Currency)
	d.field("PricePlan", got.PricePlan, want.PricePlan)
	d.field("Disabled", got.Disabled, want.Disabled)
	d.field("Region", got.Region, want.Region)
	d.field("Locale", got.Locale, want.Locale)
	if !slices.Equal(got.Countries, want.Countries) {
		d.add("Countries = %q, want %q", got.Countries, want.Countries)
	}
	if s := diffSettings(got.Settings, want.Settings); s != "" {
		d.add("%s", s)
	}
	return d.String()
}

// diffSettings describes how the settings got differ from want, or
// returns "": each kind must have the same JSON value (decoded, so that a
// store may re-encode it), and got no kind that want lacks (a nil and an
// empty map are the same: no settings).
func diffSettings(got, want map[record.Kind]json.RawMessage) string {
	var d diffs
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		if !ok {
			d.add("Settings[%s] missing, want %s", k, want[k])
			continue
		}
		if !sameJSON(g, want[k]) {
			d.add("Settings[%s] = %s, want the same JSON as %s", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			d.add("Settings[%s] = %q, want no settings of that kind", k, got[k])
		}
	}
	return d.String()
}

// sameJSON reports whether got and want are the same JSON value; got that
// is no JSON is not.
func sameJSON(got, want []byte) bool {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

// cloneAccount returns a deep copy of a, settings bytes included.
func cloneAccount(a *record.Account) *record.Account { return storeutil.CloneAccount(a) }

// scribble overwrites b in place with bytes of the same length that keep
// it valid JSON of another meaning, as a caller reusing its buffer would:
// every ASCII letter inside a string, outside escapes, becomes 'Z' (or
// 'z' when it is one), which changes every key.
func scribble(b []byte) {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				i += 5 // \uXXXX
			} else {
				i++
			}
		case c == '"':
			inString = !inString
		case inString && c == 'Z':
			b[i] = 'z'
		case inString && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'):
			b[i] = 'Z'
		}
	}
}

func testAccountFields(t *testing.T, h AccountsHarness) {
	full := fullAccount()
	bare := &record.Account{ID: newName("acct"), Currency: inr}
	empty := &record.Account{ID: newName("acct"), Currency: inr, Settings: map[record.Kind]json.RawMessage{}}
	s := h.New(t, []AccountFixture{{Account: cloneAccount(full)}, {Account: cloneAccount(bare)}, {Account: cloneAccount(empty)}})
	for _, want := range []*record.Account{full, bare, empty} {
		got, err := s.Account(context.Background(), want.ID)
		if err != nil {
			t.Fatalf("Account(%q): %v", want.ID, err)
		}
		if d := diffAccount(got, want); d != "" {
			t.Errorf("Account(%q): %s", want.ID, d)
		}
		if len(want.Settings) > 0 {
			continue
		}
		// No settings: no kind at all, not a kind holding null.
		if len(got.Settings) != 0 {
			t.Errorf("Account(%q) without settings: Settings = %q, want none", want.ID, got.Settings)
		}
		for _, k := range []record.Kind{kindSMS, kindChat, kindOTP} {
			if v, ok := got.Settings[k]; ok {
				t.Errorf("Account(%q) without settings: Settings[%s] = %q present", want.ID, k, v)
			}
		}
	}
}

func testUnknownAccount(t *testing.T, h AccountsHarness) {
	s := h.New(t, []AccountFixture{{Account: fullAccount()}})
	for _, id := range []string{newName("ghost"), ""} {
		_, err := s.Account(context.Background(), id)
		wantErr(t, fmt.Sprintf("Account(%q)", id), err, store.ErrNotFound)
	}
}

func testAccountByKey(t *testing.T, h AccountsHarness) {
	a, b := fullAccount(), fullAccount()
	aKeys, bKeys := []string{newKey(), newKey(), newKey()}, []string{newKey()}
	s := h.New(t, []AccountFixture{
		{Account: cloneAccount(a), Keys: slices.Clone(aKeys)},
		{Account: cloneAccount(b), Keys: slices.Clone(bKeys)},
	})
	check := func(key string, want *record.Account) {
		t.Helper()
		got, err := s.AccountByKey(context.Background(), key)
		if err != nil {
			t.Fatalf("AccountByKey(key of %s): %v", want.ID, err)
		}
		if d := diffAccount(got, want); d != "" {
			t.Errorf("AccountByKey(key of %s): %s", want.ID, d)
		}
	}
	for _, k := range aKeys {
		check(k, a)
	}
	check(bKeys[0], b)
}

func testWrongKeys(t *testing.T, h AccountsHarness) {
	key := newKey()
	s := h.New(t, []AccountFixture{{Account: fullAccount(), Keys: []string{key}}})
	flip := []byte(key)
	flip[len(flip)/2] ^= 1
	tries := map[string]string{
		"empty":          "",
		"unknown":        newKey(),
		"one longer":     key + "x",
		"one shorter":    key[:len(key)-1],
		"one different":  string(flip),
		"upper case":     strings.ToUpper(key),
		"leading space":  " " + key,
		"bearer prefix":  "Bearer " + key,
		"another prefix": key[:8],
	}
	for name, try := range tries {
		_, err := s.AccountByKey(context.Background(), try)
		wantErr(t, "AccountByKey("+name+")", err, store.ErrUnauthenticated)
		if try != "" && strings.Contains(err.Error(), try) {
			t.Errorf("AccountByKey(%s): the error contains the tried key: %v", name, err)
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("AccountByKey(%s): the error contains the real key", name)
		}
	}
}

func testDisabledAccount(t *testing.T, h AccountsHarness) {
	a := fullAccount()
	a.Disabled = true
	key := newKey()
	s := h.New(t, []AccountFixture{{Account: cloneAccount(a), Keys: []string{key}}})
	got, err := s.Account(context.Background(), a.ID)
	if err != nil || !got.Disabled {
		t.Fatalf("Account(disabled) = %+v, %v; want the account, Disabled set", got, err)
	}
	got, err = s.AccountByKey(context.Background(), key)
	if err != nil || !got.Disabled {
		t.Fatalf("AccountByKey(disabled) = %+v, %v; want the account, Disabled set", got, err)
	}
}

func testAccountCopies(t *testing.T, h AccountsHarness) {
	want := fullAccount()
	fixture := cloneAccount(want)
	key := newKey()
	s := h.New(t, []AccountFixture{{Account: fixture, Keys: []string{key}}})
	// The fixture is the caller's: changing it must not reach the store,
	// neither its fields nor its Settings map nor a setting's bytes,
	// overwritten in place as a caller reusing a buffer would.
	// (Accounts a lookup returns are the store's: the store.Accounts
	// contract forbids changing them, so there is nothing to test there.)
	fixture.Name = "changed by the caller"
	scribble(fixture.Settings[kindSMS])
	if sameJSON(fixture.Settings[kindSMS], want.Settings[kindSMS]) {
		t.Fatal("storetest: scribble left the SMS settings' meaning as it was")
	}
	fixture.Settings[kindChat] = json.RawMessage(`{"primary_gateway":"cloud"}`)
	fixture.Settings[kindOTP] = json.RawMessage(`{"added":"by the caller"}`)

	ctx := context.Background()
	for _, lookup := range []func() (*record.Account, error){
		func() (*record.Account, error) { return s.Account(ctx, want.ID) },
		func() (*record.Account, error) { return s.AccountByKey(ctx, key) },
	} {
		again, err := lookup()
		if err != nil {
			t.Fatal(err)
		}
		if d := diffAccount(again, want); d != "" {
			t.Errorf("after the caller changed the account it added: %s", d)
		}
	}
}

func testAccountsConcurrent(t *testing.T, h AccountsHarness) {
	const n = 8
	accts := make([]*record.Account, n)
	keys := make([]string, n)
	fixtures := make([]AccountFixture, n)
	for i := range accts {
		accts[i], keys[i] = fullAccount(), newKey()
		fixtures[i] = AccountFixture{Account: cloneAccount(accts[i]), Keys: []string{keys[i]}}
	}
	s := h.New(t, fixtures)
	var wg sync.WaitGroup
	errs := make(chan error, Goroutines)
	for g := 0; g < Goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				j := (g + i) % n
				a, err := s.AccountByKey(context.Background(), keys[j])
				if err == nil && a.ID != accts[j].ID {
					err = fmt.Errorf("key of %s gave %s", accts[j].ID, a.ID)
				}
				if err == nil {
					a, err = s.Account(context.Background(), accts[j].ID)
				}
				if err == nil && a.ID != accts[j].ID {
					err = fmt.Errorf("Account(%s) gave %s", accts[j].ID, a.ID)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
