package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// AdminHarness connects RunAdmin to one store.Admin.
type AdminHarness struct {
	// New returns an empty store, the store.Accounts that authenticates its
	// accounts' keys and the Ledger that writes the records its
	// AccountMessages reads (charging its wallets), releasing them with
	// t.Cleanup. Required.
	New func(t *testing.T) (store.Admin, store.Accounts, store.Ledger)
}

// RunAdmin checks a store.Admin:
//
//   - CreateAccount stores the account (its settings' JSON too), its key
//     and its wallet; a taken ID or a key of another account is
//     ErrConflict and stores nothing; changing the account passed in
//     afterwards (its Settings map, a setting's bytes) changes nothing;
//   - Accounts pages through the accounts by ID, each with its settings;
//   - UpdateAccount changes the account, its settings too (replacing,
//     adding and removing kinds), returns the stored account, returns
//     update's error and stores nothing then, is ErrNotFound for an
//     unknown account, and loses none of 16 concurrent updates; the
//     settings bytes update set are not the store's: changing them
//     afterwards changes neither the account it returned nor a later
//     read;
//   - ReplaceAPIKeys stops the old key at once;
//   - a repeated Credit ref moves money once; with another amount it is
//     ErrConflict;
//   - Statement pages through the movements in order;
//   - AccountMessages pages through an account's records, newest first,
//     and no other account's.
func RunAdmin(t *testing.T, h AdminHarness) {
	t.Helper()
	needs(t, h.New != nil, "AdminHarness needs New")
	runAll(t, []subtest{
		{"CreateAccount", func(t *testing.T) { testAdminCreate(t, h) }},
		{"Accounts", func(t *testing.T) { testAdminList(t, h) }},
		{"UpdateAccount", func(t *testing.T) { testAdminUpdate(t, h) }},
		{"ReplaceAPIKeys", func(t *testing.T) { testAdminKeys(t, h) }},
		{"TopUpRef", func(t *testing.T) { testAdminCredit(t, h) }},
		{"Statement", func(t *testing.T) { testAdminLedger(t, h) }},
		{"AccountMessages", func(t *testing.T) { testAdminMessages(t, h) }},
	})
}

// adminSMSSettings are the SMS settings of adminAccount: one DLT
// template, which the concurrent updates add to.
const adminSMSSettings = `{"sender_id":"ACMEIN","sender_ids":["ACMEIN"],` +
	`"dlt_templates":[{"id":"1107","entity_id":"1201","content":"Code {#var#}"}]}`

func adminAccount(id string) *record.Account {
	return &record.Account{ID: id, Name: "Acme " + id, Currency: inr, PricePlan: "gold",
		Settings: map[record.Kind]json.RawMessage{kindSMS: json.RawMessage(adminSMSSettings)}}
}

func mustCreate(t *testing.T, s store.Admin, id, key string, opening int64) {
	t.Helper()
	if err := s.CreateAccount(context.Background(), adminAccount(id), key, rupees(opening)); err != nil {
		t.Fatalf("CreateAccount(%s): %v", id, err)
	}
}

// wantAccount fails t unless both the Admin and the Accounts store
// (through key) return want.
func wantAccount(t *testing.T, what string, s store.Admin, keys store.Accounts, key string, want *record.Account) {
	t.Helper()
	ctx := context.Background()
	a, err := s.Account(ctx, want.ID)
	if err != nil {
		t.Fatalf("%s: Account: %v", what, err)
	}
	if d := diffAccount(a, want); d != "" {
		t.Errorf("%s: Account: %s", what, d)
	}
	a, err = keys.AccountByKey(ctx, key)
	if err != nil {
		t.Fatalf("%s: AccountByKey: %v", what, err)
	}
	if d := diffAccount(a, want); d != "" {
		t.Errorf("%s: AccountByKey: %s", what, d)
	}
}

func testAdminCreate(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, keys, _ := h.New(t)
	id, key := newName("acct"), newName("key")
	acct := adminAccount(id)
	acct.Settings[kindChat] = json.RawMessage(chatSettings)
	if err := s.CreateAccount(ctx, acct, key, rupees(500)); err != nil {
		t.Fatalf("CreateAccount(%s): %v", id, err)
	}
	want := cloneAccount(acct)
	// The account passed in is the caller's again: changing it, down to
	// a setting's bytes in place, must not reach the store.
	acct.Name = "changed by the caller"
	scribble(acct.Settings[kindSMS])
	acct.Settings[kindChat] = json.RawMessage(`{"primary_gateway":"cloud"}`)
	acct.Settings[kindOTP] = json.RawMessage(`{"added":"by the caller"}`)
	wantAccount(t, "after CreateAccount", s, keys, key, want)
	if a, err := s.Account(ctx, id); err != nil || a.Currency.Code != "INR" {
		t.Errorf("Account = %+v, %v", a, err)
	}
	if b, err := s.Balance(ctx, id); err != nil || b.Available.Minor != 500 {
		t.Errorf("Balance = %v, %v; want 500", b, err)
	}
	if a, err := keys.AccountByKey(ctx, key); err != nil || a.ID != id {
		t.Errorf("AccountByKey = %v, %v", a, err)
	}
	err := s.CreateAccount(ctx, adminAccount(id), newName("key"), rupees(0))
	wantErr(t, "CreateAccount with a taken ID", err, store.ErrConflict)
	other := newName("acct")
	err = s.CreateAccount(ctx, adminAccount(other), key, rupees(0))
	wantErr(t, "CreateAccount with another account's key", err, store.ErrConflict)
	_, err = s.Account(ctx, other)
	wantErr(t, "Account after a refused CreateAccount", err, store.ErrNotFound)
	_, err = s.Balance(ctx, other)
	wantErr(t, "Balance after a refused CreateAccount", err, store.ErrNotFound)
	err = s.CreateAccount(ctx, adminAccount(newName("acct")), "", rupees(0))
	wantErr(t, "CreateAccount without a key", err, store.ErrInvalid)
	_, err = s.Account(ctx, newName("missing"))
	wantErr(t, "Account of an unknown ID", err, store.ErrNotFound)

	// An account without settings comes back without: no kind at all.
	bare, bareKey := &record.Account{ID: newName("acct"), Currency: inr}, newName("key")
	if err := s.CreateAccount(ctx, bare, bareKey, rupees(0)); err != nil {
		t.Fatalf("CreateAccount(no settings): %v", err)
	}
	wantAccount(t, "account without settings", s, keys, bareKey, bare)
}

func testAdminList(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, _, _ := h.New(t)
	prefix := newName("list")
	var want []string
	for i := range 5 {
		id := fmt.Sprintf("%s-%d", prefix, 4-i) // created out of order
		mustCreate(t, s, id, newName("key"), 0)
		want = append([]string{id}, want...)
	}
	var got []string
	after := prefix
	for page := 0; ; page++ {
		as, err := s.Accounts(ctx, after, 2)
		if err != nil {
			t.Fatalf("Accounts: %v", err)
		}
		if len(as) > 2 {
			t.Fatalf("Accounts(limit 2) returned %d", len(as))
		}
		if len(as) == 0 || page > 5 {
			break
		}
		for _, a := range as {
			got = append(got, a.ID)
			if d := diffAccount(a, adminAccount(a.ID)); d != "" {
				t.Errorf("Accounts: %s: %s", a.ID, d)
			}
		}
		after = as[len(as)-1].ID
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
}

// addDLTTemplate adds a DLT template with the ID to the SMS settings of
// a, as the admin API would: decoding them, and storing new bytes.
func addDLTTemplate(a *record.Account, id string) error {
	var set map[string]any
	if err := json.Unmarshal(a.Settings[kindSMS], &set); err != nil {
		return fmt.Errorf("SMS settings %q: %w", a.Settings[kindSMS], err)
	}
	ts, _ := set["dlt_templates"].([]any)
	set["dlt_templates"] = append(ts, map[string]any{"id": id, "entity_id": "1201", "content": "x"})
	body, err := json.Marshal(set)
	if err != nil {
		return err
	}
	a.Settings[kindSMS] = body
	return nil
}

// putSetting makes v a's settings of kind, as they are (no copy).
func putSetting(a *record.Account, kind record.Kind, v json.RawMessage) {
	if a.Settings == nil {
		a.Settings = map[record.Kind]json.RawMessage{}
	}
	a.Settings[kind] = v
}

// dltTemplates counts the DLT templates in the SMS settings of a, or
// returns -1 when they are not there.
func dltTemplates(a *record.Account) int {
	var set struct {
		DLT []any `json:"dlt_templates"`
	}
	if a == nil || json.Unmarshal(a.Settings[kindSMS], &set) != nil {
		return -1
	}
	return len(set.DLT)
}

func testAdminUpdate(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, keys, _ := h.New(t)
	id, key := newName("acct"), newName("key")
	mustCreate(t, s, id, key, 0)
	a, err := s.UpdateAccount(ctx, id, func(a *record.Account) error { a.Disabled = true; return nil })
	if err != nil || !a.Disabled {
		t.Fatalf("UpdateAccount = %+v, %v", a, err)
	}
	want := adminAccount(id)
	want.Disabled = true
	if d := diffAccount(a, want); d != "" {
		t.Errorf("UpdateAccount returned %s", d)
	}
	if a, err := keys.AccountByKey(ctx, key); err != nil || !a.Disabled {
		t.Fatalf("after disabling, AccountByKey = %+v, %v", a, err)
	}
	// An error of update, such as the admin API's validation of the
	// changed account, comes back as it is.
	boom := fmt.Errorf("update refused: %w", store.InvalidField("dlt_template", "boom"))
	_, err = s.UpdateAccount(ctx, id, func(a *record.Account) error {
		a.Disabled = false
		putSetting(a, kindSMS, json.RawMessage(`{"sender_id":"BOOM"}`))
		return boom
	})
	if err != boom {
		t.Fatalf("UpdateAccount returned %v, want update's error", err)
	}
	if a, _ := s.Account(ctx, id); !a.Disabled {
		t.Fatal("a failed update was stored")
	}
	wantAccount(t, "after a failed update", s, keys, key, want)
	_, err = s.UpdateAccount(ctx, newName("missing"), func(*record.Account) error { return nil })
	wantErr(t, "UpdateAccount of an unknown account", err, store.ErrNotFound)

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := s.UpdateAccount(ctx, id, func(a *record.Account) error {
				return addDLTTemplate(a, fmt.Sprint(i))
			})
			if err != nil {
				t.Errorf("concurrent UpdateAccount: %v", err)
			}
		})
	}
	wg.Wait()
	if a, _ := s.Account(ctx, id); dltTemplates(a) != 17 {
		t.Fatalf("after 16 concurrent updates: %d DLT templates, want 17", dltTemplates(a))
	}

	// Settings change like any field: a kind replaced, one added; the
	// bytes update set stay the caller's.
	sms, chat := json.RawMessage(`{"sender_id":"ACMENW","sender_ids":["ACMENW"]}`), json.RawMessage(chatSettings)
	a, err = s.UpdateAccount(ctx, id, func(a *record.Account) error {
		putSetting(a, kindSMS, sms)
		putSetting(a, kindChat, chat)
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateAccount(settings): %v", err)
	}
	want.Settings = map[record.Kind]json.RawMessage{kindSMS: slices.Clone(sms), kindChat: slices.Clone(chat)}
	scribble(sms)
	scribble(chat)
	if d := diffAccount(a, want); d != "" {
		t.Errorf("UpdateAccount(settings) returned, once the caller changed its bytes: %s", d)
	}
	wantAccount(t, "after UpdateAccount(settings)", s, keys, key, want)

	// A kind removed is gone, not null; so are all of them.
	if _, err := s.UpdateAccount(ctx, id, func(a *record.Account) error {
		delete(a.Settings, kindChat)
		return nil
	}); err != nil {
		t.Fatalf("UpdateAccount(remove chat): %v", err)
	}
	delete(want.Settings, kindChat)
	wantAccount(t, "after removing the chat settings", s, keys, key, want)
	a, err = s.UpdateAccount(ctx, id, func(a *record.Account) error { a.Settings = nil; return nil })
	if err != nil {
		t.Fatalf("UpdateAccount(remove all): %v", err)
	}
	want.Settings = nil
	if d := diffAccount(a, want); d != "" {
		t.Errorf("UpdateAccount(remove all) returned %s", d)
	}
	wantAccount(t, "after removing every setting", s, keys, key, want)
}

func testAdminKeys(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, keys, _ := h.New(t)
	id, old, fresh := newName("acct"), newName("key"), newName("key")
	mustCreate(t, s, id, old, 0)
	if err := s.ReplaceAPIKeys(ctx, id, fresh); err != nil {
		t.Fatalf("ReplaceAPIKeys: %v", err)
	}
	_, err := keys.AccountByKey(ctx, old)
	wantErr(t, "AccountByKey with the replaced key", err, store.ErrUnauthenticated)
	if a, err := keys.AccountByKey(ctx, fresh); err != nil || a.ID != id {
		t.Fatalf("AccountByKey with the new key = %v, %v", a, err)
	}
	err = s.ReplaceAPIKeys(ctx, newName("missing"), newName("key"))
	wantErr(t, "ReplaceAPIKeys of an unknown account", err, store.ErrNotFound)
	other := newName("acct")
	mustCreate(t, s, other, newName("key"), 0)
	err = s.ReplaceAPIKeys(ctx, other, fresh)
	wantErr(t, "ReplaceAPIKeys with another account's key", err, store.ErrConflict)
	if a, err := keys.AccountByKey(ctx, fresh); err != nil || a.ID != id {
		t.Fatalf("after a refused ReplaceAPIKeys, AccountByKey = %v, %v", a, err)
	}
}

func testAdminCredit(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, _, _ := h.New(t)
	id := newName("acct")
	mustCreate(t, s, id, newName("key"), 100)
	for range 2 {
		b, err := s.Credit(ctx, id, rupees(250), "topup:inv-1")
		if err != nil || b.Available.Minor != 350 {
			t.Fatalf("Credit = %v, %v; want 350", b, err)
		}
	}
	_, err := s.Credit(ctx, id, rupees(300), "topup:inv-1")
	wantErr(t, "Credit of another amount under a used ref", err, store.ErrConflict)
	if b, _ := s.Balance(ctx, id); b.Available.Minor != 350 {
		t.Fatalf("balance %d, want 350", b.Available.Minor)
	}
}

func testAdminLedger(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, _, _ := h.New(t)
	id := newName("acct")
	mustCreate(t, s, id, newName("key"), 0)
	for i := range 5 {
		if _, err := s.Credit(ctx, id, rupees(int64(i+1)), fmt.Sprintf("topup:%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var got []record.LedgerEntry
	after := int64(0)
	for range 5 {
		page, err := s.Statement(ctx, id, after, 2)
		if err != nil {
			t.Fatalf("Statement: %v", err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
		after = page[len(page)-1].Seq
	}
	if len(got) != 5 {
		t.Fatalf("%d entries, want 5: %+v", len(got), got)
	}
	bal := int64(0)
	for i, e := range got {
		bal += int64(i + 1)
		if e.Ref != fmt.Sprintf("topup:%d", i) || e.Amount.Minor != int64(i+1) || e.Balance.Minor != bal ||
			e.Amount.Currency.Code != "INR" || (i > 0 && e.Seq <= got[i-1].Seq) {
			t.Errorf("entry %d = %+v", i, e)
		}
	}
	page, err := s.Statement(ctx, newName("missing"), 0, 10)
	if err != nil || len(page) != 0 {
		t.Fatalf("Statement of an unknown account = %v, %v; want empty", page, err)
	}
}

func testAdminMessages(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, _, msgs := h.New(t)
	a, b := newName("acct"), newName("acct")
	mustCreate(t, s, a, newName("key"), 1000)
	mustCreate(t, s, b, newName("key"), 1000)
	base := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	open := func(account, id string, at time.Time) {
		t.Helper()
		m := &record.Message{ID: id, Account: account, Kind: kindSMS, Request: kindSMS, To: "9876543210",
			Units: 1, Metered: true, Charge: rupees(25), CreatedAt: at}
		if _, err := msgs.Open(ctx, m); err != nil {
			t.Fatalf("Open(%s): %v", id, err)
		}
	}
	p := newName("m")
	// Newest first: m-4 (latest), then m-3b and m-3a at the same time (by
	// ID, descending), m-2, m-1, m-0.
	open(a, p+"-0", base)
	open(a, p+"-1", base.Add(time.Microsecond))
	open(a, p+"-2", base.Add(time.Second))
	open(a, p+"-3a", base.Add(2*time.Second))
	open(a, p+"-3b", base.Add(2*time.Second))
	open(a, p+"-4", base.Add(3*time.Second))
	open(b, p+"-other", base.Add(time.Hour))
	want := []string{p + "-4", p + "-3b", p + "-3a", p + "-2", p + "-1", p + "-0"}
	var got []string
	var cur store.MessageCursor
	for range 6 {
		page, err := s.AccountMessages(ctx, a, cur, 4)
		if err != nil {
			t.Fatalf("AccountMessages: %v", err)
		}
		if len(page) > 4 {
			t.Fatalf("AccountMessages(limit 4) returned %d", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			if m.Account != a || m.Charge.Minor != 25 || m.State != record.StatePending {
				t.Errorf("record %+v", m)
			}
			got = append(got, m.ID)
		}
		last := page[len(page)-1]
		cur = store.MessageCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
	page, err := s.AccountMessages(ctx, newName("missing"), store.MessageCursor{}, 10)
	if err != nil || len(page) != 0 {
		t.Fatalf("AccountMessages of an unknown account = %v, %v; want empty", page, err)
	}
}
