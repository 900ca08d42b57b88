package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
//   - CreateAccount stores the account, its key and its wallet; a taken
//     ID or a key of another account is ErrConflict and stores nothing;
//   - Accounts pages through the accounts by ID;
//   - UpdateAccount changes the account, returns update's error and
//     stores nothing then, is ErrNotFound for an unknown account, and loses
//     none of 16 concurrent updates;
//   - ReplaceAPIKeys stops the old key at once;
//   - a repeated Credit ref moves money once; with another amount it is
//     ErrConflict;
//   - LedgerPage pages through the movements in order;
//   - AccountMessages pages through an account's records, newest first,
//     and no other account's.
func RunAdmin(t *testing.T, h AdminHarness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("storetest: AdminHarness needs New")
	}
	runAll(t, []subtest{
		{"CreateAccount", func(t *testing.T) { testAdminCreate(t, h) }},
		{"Accounts", func(t *testing.T) { testAdminList(t, h) }},
		{"UpdateAccount", func(t *testing.T) { testAdminUpdate(t, h) }},
		{"ReplaceAPIKeys", func(t *testing.T) { testAdminKeys(t, h) }},
		{"TopUpRef", func(t *testing.T) { testAdminCredit(t, h) }},
		{"LedgerPage", func(t *testing.T) { testAdminLedger(t, h) }},
		{"AccountMessages", func(t *testing.T) { testAdminMessages(t, h) }},
	})
}

func adminAccount(id string) *store.Account {
	return &store.Account{ID: id, Name: "Acme " + id, VendorID: "ACMEIN", Currency: inr,
		DLTTemplates: []store.DLTTemplate{{ID: "1107", EntityID: "1201", Content: "Code {#var#}"}},
		SenderIDs:    []string{"ACMEIN"}, PricePlan: "gold"}
}

func mustCreate(t *testing.T, s store.Admin, id, key string, opening int64) {
	t.Helper()
	if err := s.CreateAccount(context.Background(), adminAccount(id), key, rupees(opening)); err != nil {
		t.Fatalf("CreateAccount(%s): %v", id, err)
	}
}

func testAdminCreate(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, keys, _ := h.New(t)
	id, key := newName("acct"), newName("key")
	mustCreate(t, s, id, key, 500)
	a, err := s.Account(ctx, id)
	if err != nil {
		t.Fatalf("Account: %v", err)
	}
	if a.Name != "Acme "+id || a.PricePlan != "gold" || len(a.DLTTemplates) != 1 || a.DLTTemplates[0].Content != "Code {#var#}" ||
		len(a.SenderIDs) != 1 || a.Currency.Code != "INR" {
		t.Errorf("Account = %+v", a)
	}
	if b, err := s.Balance(ctx, id); err != nil || b.Available.Minor != 500 {
		t.Errorf("Balance = %v, %v; want 500", b, err)
	}
	if a, err := keys.AccountByKey(ctx, key); err != nil || a.ID != id {
		t.Errorf("AccountByKey = %v, %v", a, err)
	}
	err = s.CreateAccount(ctx, adminAccount(id), newName("key"), rupees(0))
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
		}
		after = as[len(as)-1].ID
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
}

func testAdminUpdate(t *testing.T, h AdminHarness) {
	ctx := context.Background()
	s, keys, _ := h.New(t)
	id, key := newName("acct"), newName("key")
	mustCreate(t, s, id, key, 0)
	a, err := s.UpdateAccount(ctx, id, func(a *store.Account) error { a.Disabled = true; return nil })
	if err != nil || !a.Disabled {
		t.Fatalf("UpdateAccount = %+v, %v", a, err)
	}
	if a, err := keys.AccountByKey(ctx, key); err != nil || !a.Disabled {
		t.Fatalf("after disabling, AccountByKey = %+v, %v", a, err)
	}
	// An error of update, such as the admin API's validation of the
	// changed account, comes back as it is.
	boom := fmt.Errorf("update refused: %w", store.Invalid("dlt_template", "boom"))
	_, err = s.UpdateAccount(ctx, id, func(a *store.Account) error { a.Disabled = false; return boom })
	if err != boom {
		t.Fatalf("UpdateAccount returned %v, want update's error", err)
	}
	if a, _ := s.Account(ctx, id); !a.Disabled {
		t.Fatal("a failed update was stored")
	}
	_, err = s.UpdateAccount(ctx, newName("missing"), func(*store.Account) error { return nil })
	wantErr(t, "UpdateAccount of an unknown account", err, store.ErrNotFound)

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := s.UpdateAccount(ctx, id, func(a *store.Account) error {
				a.DLTTemplates = append(a.DLTTemplates, store.DLTTemplate{ID: fmt.Sprint(i), Content: "x"})
				return nil
			})
			if err != nil {
				t.Errorf("concurrent UpdateAccount: %v", err)
			}
		})
	}
	wg.Wait()
	if a, _ := s.Account(ctx, id); len(a.DLTTemplates) != 17 {
		t.Fatalf("after 16 concurrent updates: %d DLT templates, want 17", len(a.DLTTemplates))
	}
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
	var got []store.LedgerEntry
	after := int64(0)
	for range 5 {
		page, err := s.LedgerPage(ctx, id, after, 2)
		if err != nil {
			t.Fatalf("LedgerPage: %v", err)
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
	page, err := s.LedgerPage(ctx, newName("missing"), 0, 10)
	if err != nil || len(page) != 0 {
		t.Fatalf("LedgerPage of an unknown account = %v, %v; want empty", page, err)
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
		m := &store.Record{ID: id, Account: account, Kind: kindSMS, Request: kindSMS, To: "9876543210",
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
			if m.Account != a || m.Charge.Minor != 25 || m.State != store.StatePending {
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
