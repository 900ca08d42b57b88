package memstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
)

func TestAccountsAddRefuses(t *testing.T) {
	s := NewAccounts()
	if err := s.Add(&notify.Account{ID: "acme"}, "key-1", "key-2"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		acct *notify.Account
		keys []string
		code notify.Code
	}{
		{"nil account", nil, nil, notify.CodeInvalidArgument},
		{"no ID", &notify.Account{}, nil, notify.CodeInvalidArgument},
		{"empty key", &notify.Account{ID: "b"}, []string{"key-3", ""}, notify.CodeInvalidArgument},
		{"key twice", &notify.Account{ID: "b"}, []string{"key-3", "key-3"}, notify.CodeConflict},
		{"ID taken", &notify.Account{ID: "acme"}, []string{"key-9"}, notify.CodeConflict},
		{"key taken", &notify.Account{ID: "b"}, []string{"key-4", "key-2"}, notify.CodeConflict},
	}
	for _, tt := range tests {
		err := s.Add(tt.acct, tt.keys...)
		if got := notify.CodeOf(err); got != tt.code {
			t.Errorf("%s: Add = %v, want %s", tt.name, err, tt.code)
		}
		for _, k := range tt.keys {
			if k != "" && strings.Contains(err.Error(), k) {
				t.Errorf("%s: the error %q contains a key", tt.name, err)
			}
		}
	}
	// Refused adds stored nothing, not even their good keys.
	ctx := context.Background()
	if _, err := s.Account(ctx, "b"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("a refused Add stored account b: %v", err)
	}
	for _, k := range []string{"key-3", "key-4", "key-9"} {
		if _, err := s.AccountByKey(ctx, k); notify.CodeOf(err) != notify.CodeUnauthenticated {
			t.Errorf("a refused Add stored %s: %v", k, err)
		}
	}
}

func TestAccountsUpdate(t *testing.T) {
	ctx := context.Background()
	s := NewAccounts()
	if err := s.Add(&notify.Account{ID: "acme", Name: "Acme"}, "key-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(&notify.Account{ID: "acme", Name: "Acme", Disabled: true}); err != nil {
		t.Fatal(err)
	}
	a, err := s.AccountByKey(ctx, "key-1")
	if err != nil || !a.Disabled {
		t.Errorf("after Update: AccountByKey = %+v, %v; want the disabled account", a, err)
	}
	if err := s.Update(&notify.Account{ID: "ghost"}); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("Update(ghost) = %v, want NotFound", err)
	}
	if err := s.Update(nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Update(nil) = %v, want InvalidArgument", err)
	}
}

func TestStoresHonourContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	acc := NewAccounts()
	idem := NewIdempotency(time.Hour)
	led := NewLedger(nil)
	tpl := NewTemplates()
	w := NewWallet()
	calls := map[string]error{}
	_, calls["Account"] = acc.Account(ctx, "a")
	_, calls["AccountByKey"] = acc.AccountByKey(ctx, "k")
	_, calls["Reserve"] = idem.Reserve(ctx, "a", "k", "fp")
	calls["Complete"] = idem.Complete(ctx, "a", "k", []byte("{}"))
	calls["Release"] = idem.Release(ctx, "a", "k")
	_, calls["Open"] = led.Open(ctx, &record.Message{Account: "a", ID: "m"})
	_, calls["Move"] = led.Move(ctx, "a", "m", store.Update{State: record.StateAttempting})
	_, calls["Message"] = led.Message(ctx, "a", "m")
	_, calls["Template"] = tpl.Template(ctx, "a", "s")
	calls["PutTemplate"] = tpl.PutTemplate(ctx, "a", &store.Template{Slug: "s"})
	calls["DeleteTemplate"] = tpl.DeleteTemplate(ctx, "a", "s")
	_, calls["Templates"] = tpl.Templates(ctx, "a")
	_, calls["Balance"] = w.Balance(ctx, "a")
	for name, err := range calls {
		if notify.CodeOf(err) != notify.CodeCanceled {
			t.Errorf("%s with a canceled context = %v, want Canceled", name, err)
		}
	}
	if _, err := led.Message(context.Background(), "a", "m"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("Open with a canceled context recorded: %v", err)
	}
}

func TestIdempotencyErrors(t *testing.T) {
	ctx := context.Background()
	s := NewIdempotency(0)
	if s.ttl != DefaultIdempotencyTTL {
		t.Errorf("NewIdempotency(0) TTL = %v, want %v", s.ttl, DefaultIdempotencyTTL)
	}
	if _, err := s.Reserve(ctx, "", "k", "fp"); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Reserve without account = %v", err)
	}
	if _, err := s.Reserve(ctx, "a", "", "fp"); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Reserve without key = %v", err)
	}
	if err := s.Complete(ctx, "a", "k", []byte("{}")); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("Complete without Reserve = %v, want NotFound", err)
	}
	if _, err := s.Reserve(ctx, "a", "k", "fp"); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, "a", "k", nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Complete(nil) = %v, want InvalidArgument", err)
	}
	if err := s.Complete(ctx, "a", "k", []byte("m")); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, "a", "k", []byte("m2")); notify.CodeOf(err) != notify.CodeConflict {
		t.Errorf("second Complete = %v, want Conflict", err)
	}
}

// TestIdempotencyPurges checks that expired entries leave memory, a
// bounded number per call, and that the expiry queue shrinks with them.
func TestIdempotencyPurges(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewIdempotency(time.Minute, WithClock(func() time.Time { return now }))
	const burst = 5000
	for i := 0; i < burst; i++ {
		k := strconv.Itoa(i)
		if _, err := s.Reserve(ctx, "a", k, "fp"); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.Complete(ctx, "a", k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(s.entries) != burst {
		t.Fatalf("%d entries, want %d", len(s.entries), burst)
	}
	now = now.Add(2 * time.Minute)
	// One call removes at most purgeBatch expired entries.
	if _, err := s.Reserve(ctx, "a", "fresh-0", "fp"); err != nil {
		t.Fatal(err)
	}
	if removed := burst + 1 - len(s.entries); removed <= 0 || removed > purgeBatch {
		t.Fatalf("one Reserve removed %d entries, want 1..%d", removed, purgeBatch)
	}
	// Enough calls clear every expired entry and most of the queue.
	for i := 1; i < 2*burst/purgeBatch+2; i++ {
		if _, err := s.Reserve(ctx, "a", "fresh-"+strconv.Itoa(i), "fp"); err != nil {
			t.Fatal(err)
		}
	}
	for k := range s.entries {
		if !strings.HasPrefix(k.key, "fresh-") {
			t.Fatalf("expired entry %q is still kept", k.key)
		}
	}
	if live := len(s.queue) - s.head; live > len(s.entries)+purgeBatch {
		t.Errorf("queue holds %d items for %d entries", live, len(s.entries))
	}
	if cap(s.queue) > 4*burst/2 {
		t.Errorf("queue capacity %d stayed near the burst's", cap(s.queue))
	}
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestIdempotencyMemoryFlat runs a million keys (200,000 under the race
// detector) through a store that holds about a thousand at a time and
// checks that the heap did not grow with the count: expired entries leave,
// and the map of live ones does not swell under the churn.
func TestIdempotencyMemoryFlat(t *testing.T) {
	const live = 1000
	total := 1_000_000
	if raceEnabled {
		total = 200_000
	}
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewIdempotency(live*time.Millisecond, WithClock(func() time.Time { return now }))
	receipt := []byte("m")
	var base uint64
	for i := range total {
		k := strconv.Itoa(i)
		now = now.Add(time.Millisecond)
		if _, err := s.Reserve(ctx, "a", k, "fp"); err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, "a", k, receipt); err != nil {
			t.Fatal(err)
		}
		if i == 2*live {
			base = liveHeap()
		}
	}
	grown := int64(liveHeap()) - int64(base)
	if n := len(s.entries); n > live+2*purgeBatch {
		t.Fatalf("%d entries kept, want about %d", n, live)
	}
	// A thousand entries take some 150 KB with their queue; a map grown
	// under churn would take several times that.
	if grown > 64<<10 {
		t.Errorf("the heap grew by %d bytes between %d and %d keys", grown, 2*live, total)
	}
}

// TestLedgerMemoryFlat sends a million messages (200,000 under the race
// detector) through a Ledger that keeps at most 1024 settled records, each
// opened with a charge, a key and a vendor ID, and settled, and checks
// that the heap did not grow with the count: not by the records, and not
// by the maps of records and their indexes either, which Go's maps would
// let swell under the churn. The Ledger keeps between 512 and 1024
// settled records, a generation of 512 at a time, so both ends of the
// comparison are taken just after a generation turned, where it holds
// 512: the counts are multiples of 512.
func TestLedgerMemoryFlat(t *testing.T) {
	const capacity = 1024
	total := 1_000_000
	if raceEnabled {
		total = 200_000
	}
	total -= total % (capacity / 2)
	ctx := context.Background()
	w := NewWallet(WithRefRetention(capacity))
	inr := record.INR()
	if err := w.Open("acme", notify.Money{Minor: 1 << 60, Currency: inr}); err != nil {
		t.Fatal(err)
	}
	l := NewLedger(w, WithMessageCapacity(capacity))
	var base uint64
	for i := 0; i < total; i++ {
		id := strconv.Itoa(i)
		m := &record.Message{ID: id, Account: "acme", Kind: "sms", To: "9876543210", Provider: "p",
			IdempotencyKey: "k" + id, Charge: notify.Money{Minor: 25, Currency: inr}}
		if _, err := l.Open(ctx, m); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Move(ctx, "acme", id, store.Update{State: record.StateAttempting}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Move(ctx, "acme", id, store.Update{State: record.StateSent, ProviderMessageID: "pm" + id}); err != nil {
			t.Fatal(err)
		}
		if i+1 == 4*capacity {
			base = liveHeap() // the bounded stores are full
		}
	}
	grown := int64(liveHeap()) - int64(base)
	// A thousand records (and a wallet ref each) take some 1 MB; a
	// million retained would take hundreds, and maps swollen by the churn
	// of a million keys (see churned) took another 1.2 MB.
	if grown > 256<<10 {
		t.Errorf("the heap grew by %d bytes between %d and %d messages", grown, 4*capacity, total)
	}
	last := strconv.Itoa(total - 1)
	if _, err := l.Message(ctx, "acme", last); err != nil {
		t.Errorf("the last record: %v", err)
	}
	if got, err := l.ByProviderID(ctx, "p", "pm"+last); err != nil || len(got) != 1 {
		t.Errorf("the last record by vendor ID: %d, %v", len(got), err)
	}
	if _, err := l.Message(ctx, "acme", "0"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("the first record, long forgotten: %v", err)
	}
	if got, _ := l.ByKey(ctx, "acme", "k0", time.Time{}); len(got) != 0 {
		t.Errorf("the first record's key still finds %d records", len(got))
	}
}

func TestTemplatesRefuses(t *testing.T) {
	s := NewTemplates()
	err := s.PutTemplate(context.Background(), "", &store.Template{Slug: "x"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("PutTemplate without account = %v, want InvalidArgument", err)
	}
	// Deleting the last template of an account forgets the account.
	ctx := context.Background()
	_ = s.PutTemplate(ctx, "a", &store.Template{Slug: "x"})
	_ = s.DeleteTemplate(ctx, "a", "x")
	if len(s.byAccount) != 0 {
		t.Errorf("an account without templates is still kept: %v", s.byAccount)
	}
}

// Errors only a Go caller sees name the package; those a sender sees
// (store/storetest checks them) do not.
func TestErrorsNamePackage(t *testing.T) {
	ctx := context.Background()
	_, err1 := NewAccounts().Account(ctx, "x")
	_, err2 := NewTemplates().Template(ctx, "a", "x")
	_, err3 := NewLedger(nil).Message(ctx, "a", "x")
	for i, err := range []error{err1, err2, err3} {
		if err == nil || !strings.Contains(err.Error(), "memstore: ") {
			t.Errorf("error %d = %v, want a memstore error", i, err)
		}
	}
}

// TestLedgerRefusesAnIDWhoseRecordWasForgotten: once a settled record is
// forgotten (beyond the capacity), its ID is still taken while the
// wallet remembers its debit. Opening it again is Conflict; before, it was
// written with no debit (the wallet took the known ref for a retry), and
// its refund later credited money that never moved.
func TestLedgerRefusesAnIDWhoseRecordWasForgotten(t *testing.T) {
	ctx := context.Background()
	w := NewWallet()
	if err := w.Open("a", record.Money{Minor: 100000, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	l := NewLedger(w, WithMessageCapacity(1))
	open := func(id string) error {
		_, err := l.Open(ctx, &record.Message{ID: id, Account: "a", Charge: record.Money{Minor: 100, Currency: record.INR()},
			CreatedAt: time.Now()})
		return err
	}
	settle := func(id string) {
		for _, st := range []record.State{record.StateAttempting, record.StateSent} {
			if _, err := l.Move(ctx, "a", id, store.Update{State: st, At: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := open("x"); err != nil {
		t.Fatal(err)
	}
	settle("x")
	for i := 0; ; i++ { // settle others until x is forgotten
		if _, err := l.Message(ctx, "a", "x"); errors.Is(err, store.ErrNotFound) {
			break
		}
		if i > 10000 {
			t.Fatal("x was never forgotten")
		}
		id := fmt.Sprintf("other-%d", i)
		if err := open(id); err != nil {
			t.Fatal(err)
		}
		settle(id)
	}
	before, err := w.Balance(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := open("x"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Open of a forgotten record's ID = %v, want ErrConflict", err)
	}
	if after, _ := w.Balance(ctx, "a"); after.Available != before.Available {
		t.Fatalf("balance %v after the refused Open, want %v", after.Available, before.Available)
	}
}
