package memstore

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

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
	dl := NewDeliveryLog(10)
	tpl := NewTemplates()
	w := NewWallet()
	calls := map[string]error{}
	_, calls["Account"] = acc.Account(ctx, "a")
	_, calls["AccountByKey"] = acc.AccountByKey(ctx, "k")
	_, calls["Reserve"] = idem.Reserve(ctx, "a", "k", "fp")
	calls["Complete"] = idem.Complete(ctx, "a", "k", &notify.Receipt{})
	calls["Release"] = idem.Release(ctx, "a", "k")
	calls["Record"] = dl.Record(ctx, &notify.Receipt{Account: "a", MessageID: "m"})
	_, calls["Receipt"] = dl.Receipt(ctx, "a", "m")
	_, calls["Template"] = tpl.Template(ctx, "a", "s")
	calls["PutTemplate"] = tpl.PutTemplate(ctx, "a", &notify.Template{Slug: "s"})
	calls["DeleteTemplate"] = tpl.DeleteTemplate(ctx, "a", "s")
	_, calls["Templates"] = tpl.Templates(ctx, "a")
	_, calls["Balance"] = w.Balance(ctx, "a")
	for name, err := range calls {
		if notify.CodeOf(err) != notify.CodeCanceled {
			t.Errorf("%s with a canceled context = %v, want Canceled", name, err)
		}
	}
	if dl.Len() != 0 {
		t.Errorf("Record with a canceled context recorded")
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
	if err := s.Complete(ctx, "a", "k", &notify.Receipt{}); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("Complete without Reserve = %v, want NotFound", err)
	}
	if _, err := s.Reserve(ctx, "a", "k", "fp"); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, "a", "k", nil); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Complete(nil) = %v, want InvalidArgument", err)
	}
	if err := s.Complete(ctx, "a", "k", &notify.Receipt{MessageID: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, "a", "k", &notify.Receipt{MessageID: "m2"}); notify.CodeOf(err) != notify.CodeConflict {
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
			if err := s.Complete(ctx, "a", k, &notify.Receipt{MessageID: k}); err != nil {
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
	receipt := &notify.Receipt{MessageID: "m"}
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

func TestDeliveryLogEvicts(t *testing.T) {
	ctx := context.Background()
	l := NewDeliveryLog(3)
	rec := func(acct, id string, note string) {
		t.Helper()
		if err := l.Record(ctx, &notify.Receipt{Account: acct, MessageID: id, Note: note}); err != nil {
			t.Fatal(err)
		}
	}
	rec("a", "1", "")
	rec("a", "2", "")
	rec("b", "1", "")         // same message ID, other account: a separate receipt
	rec("a", "2", "replaced") // replaces in place, evicts nothing
	if r, err := l.Receipt(ctx, "a", "2"); err != nil || r.Note != "replaced" {
		t.Errorf("Receipt(a, 2) = %+v, %v; want the replacement", r, err)
	}
	rec("a", "3", "") // evicts a/1, the oldest
	if _, err := l.Receipt(ctx, "a", "1"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("oldest receipt still found: %v", err)
	}
	for _, k := range [][2]string{{"a", "2"}, {"b", "1"}, {"a", "3"}} {
		if _, err := l.Receipt(ctx, k[0], k[1]); err != nil {
			t.Errorf("Receipt(%s, %s): %v", k[0], k[1], err)
		}
	}
	if l.Len() != 3 {
		t.Errorf("Len = %d, want 3", l.Len())
	}
	for _, bad := range []*notify.Receipt{nil, {MessageID: "m"}, {Account: "a"}} {
		if err := l.Record(ctx, bad); notify.CodeOf(err) != notify.CodeInvalidArgument {
			t.Errorf("Record(%+v) = %v, want InvalidArgument", bad, err)
		}
	}
	if NewDeliveryLog(0).Len() != 0 || len(NewDeliveryLog(-1).ring) != DefaultDeliveryLogCapacity {
		t.Errorf("a capacity <= 0 does not give the default")
	}
}

// TestDeliveryLogMemoryFlat records a million receipts (200,000 under the
// race detector) into a log of 1000 and checks that the log holds 1000 and
// the heap did not grow with the count: not by the receipts, and not by
// the index either, which a Go map under steady churn would let grow to
// several times its size (golang/go#70886).
func TestDeliveryLogMemoryFlat(t *testing.T) {
	const capacity = 1000
	total := 1_000_000
	if raceEnabled {
		total = 200_000
	}
	ctx := context.Background()
	l := NewDeliveryLog(capacity)
	// A receipt object is reused only once the log has forgotten it,
	// capacity+1 records later, so the test itself allocates little.
	pool := make([]notify.Receipt, capacity+1)
	var base uint64
	for i := 0; i < total; i++ {
		r := &pool[i%len(pool)]
		*r = notify.Receipt{Account: "acme", MessageID: strconv.Itoa(i)}
		if err := l.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i == 2*capacity {
			base = liveHeap()
		}
	}
	grown := int64(liveHeap()) - int64(base)
	if l.Len() != capacity || len(l.index) != capacity || len(l.ring) != capacity {
		t.Fatalf("after %d records: Len %d, index %d, ring %d; want %d", total, l.Len(), len(l.index), len(l.ring), capacity)
	}
	// A thousand receipts take some 300 KB and their index some 50 KB;
	// a million retained receipts would take 200 MB, an index grown under
	// churn some 300 KB more.
	if grown > 64<<10 {
		t.Errorf("the heap grew by %d bytes between %d and %d records", grown, 2*capacity, total)
	}
	if _, err := l.Receipt(ctx, "acme", strconv.Itoa(total-1)); err != nil {
		t.Errorf("the last receipt: %v", err)
	}
	if _, err := l.Receipt(ctx, "acme", strconv.Itoa(total-capacity-1)); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("a receipt older than the capacity: %v", err)
	}
}

func TestTemplatesRefuses(t *testing.T) {
	s := NewTemplates()
	err := s.PutTemplate(context.Background(), "", &notify.Template{Slug: "x"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("PutTemplate without account = %v, want InvalidArgument", err)
	}
	// Deleting the last template of an account forgets the account.
	ctx := context.Background()
	_ = s.PutTemplate(ctx, "a", &notify.Template{Slug: "x"})
	_ = s.DeleteTemplate(ctx, "a", "x")
	if len(s.byAccount) != 0 {
		t.Errorf("an account without templates is still kept: %v", s.byAccount)
	}
}

// Errors only a Go caller sees name the package; those a sender sees
// (storetest and wallettest check them) do not.
func TestErrorsNamePackage(t *testing.T) {
	ctx := context.Background()
	_, err1 := NewAccounts().Account(ctx, "x")
	_, err2 := NewTemplates().Template(ctx, "a", "x")
	_, err3 := NewDeliveryLog(1).Receipt(ctx, "a", "x")
	for i, err := range []error{err1, err2, err3} {
		if err == nil || !strings.Contains(err.Error(), "memstore: ") {
			t.Errorf("error %d = %v, want a memstore error", i, err)
		}
	}
}
