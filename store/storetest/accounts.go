package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/store"
)

// AccountFixture is an account and the API keys that authenticate it.
type AccountFixture struct {
	Account *store.Account
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
//   - AccountByKey returns the account that owns each of its keys, and
//     ErrUnauthenticated for an empty key, an unknown one, and keys one
//     character longer, shorter or different from a real one, with error
//     texts that contain neither the tried key nor the real one;
//   - disabled accounts are returned like others (the Notifier refuses
//     them);
//   - changing an account the store returned, or the fixture after New,
//     changes nothing in the store;
//   - 64 goroutines looking accounts up at once all get the right ones.
func RunAccounts(t *testing.T, h AccountsHarness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("storetest: AccountsHarness needs New")
	}
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

// fullAccount returns an account with every field set.
func fullAccount() *store.Account {
	return &store.Account{
		ID:             newName("acct"),
		Name:           "Acme Stores",
		VendorID:       "ACMEST",
		Currency:       inr,
		PrimaryGateway: "qr",
		DLTTemplates: []store.DLTTemplate{
			{ID: "1107160000000000001", EntityID: "1101160000000000001", Content: "Your OTP is {#var#}. Do not share it."},
			{ID: "1107160000000000002", EntityID: "1101160000000000001", Content: "Order {#var#} has shipped.", MessageID: "164725"},
		},
		SenderIDs: []string{"ACMEST", "ACMEIN"},
		PricePlan: "gold",
	}
}

func newKey() string { return newName("key") + newName("") }

// diffAccount describes how got differs from want, or returns "". A nil
// and an empty DLTTemplates (or SenderIDs) are the same.
func diffAccount(got, want *store.Account) string {
	if got == nil {
		return "nil account"
	}
	var d []string
	field := func(name string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	field("ID", got.ID, want.ID)
	field("Name", got.Name, want.Name)
	field("VendorID", got.VendorID, want.VendorID)
	field("Currency", got.Currency, want.Currency)
	field("PrimaryGateway", got.PrimaryGateway, want.PrimaryGateway)
	field("PricePlan", got.PricePlan, want.PricePlan)
	field("Disabled", got.Disabled, want.Disabled)
	if !slices.Equal(got.DLTTemplates, want.DLTTemplates) {
		d = append(d, fmt.Sprintf("DLTTemplates = %+v, want %+v", got.DLTTemplates, want.DLTTemplates))
	}
	if !slices.Equal(got.SenderIDs, want.SenderIDs) {
		d = append(d, fmt.Sprintf("SenderIDs = %v, want %v", got.SenderIDs, want.SenderIDs))
	}
	return strings.Join(d, "; ")
}

func cloneAccount(a *store.Account) *store.Account {
	c := *a
	c.DLTTemplates = slices.Clone(a.DLTTemplates)
	c.SenderIDs = slices.Clone(a.SenderIDs)
	return &c
}

func testAccountFields(t *testing.T, h AccountsHarness) {
	full := fullAccount()
	bare := &store.Account{ID: newName("acct"), Currency: inr}
	s := h.New(t, []AccountFixture{{Account: cloneAccount(full)}, {Account: cloneAccount(bare)}})
	for _, want := range []*store.Account{full, bare} {
		got, err := s.Account(context.Background(), want.ID)
		if err != nil {
			t.Fatalf("Account(%q): %v", want.ID, err)
		}
		if d := diffAccount(got, want); d != "" {
			t.Errorf("Account(%q): %s", want.ID, d)
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
	check := func(key string, want *store.Account) {
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
	// The fixture is the caller's: changing it must not reach the store.
	// (Accounts a lookup returns are the store's: the store.Accounts
	// contract forbids changing them, so there is nothing to test there.)
	fixture.Name = "changed by the caller"
	fixture.DLTTemplates[0].Content = "changed by the caller"
	fixture.SenderIDs[0] = "CHANGED"

	ctx := context.Background()
	for _, lookup := range []func() (*store.Account, error){
		func() (*store.Account, error) { return s.Account(ctx, want.ID) },
		func() (*store.Account, error) { return s.AccountByKey(ctx, key) },
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
	accts := make([]*store.Account, n)
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
