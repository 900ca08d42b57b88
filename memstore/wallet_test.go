package memstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

func inr(minor int64) notify.Money { return notify.Money{Minor: minor, Currency: record.INR()} }

func TestWalletOpen(t *testing.T) {
	w := NewWallet()
	if err := w.Open("acme", inr(100)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		account string
		opening notify.Money
		code    notify.Code
	}{
		{"again", "acme", inr(5), notify.CodeConflict},
		{"empty account", "", inr(5), notify.CodeInvalidArgument},
		{"negative", "neg", inr(-1), notify.CodeInvalidArgument},
		{"no currency", "nocur", notify.Money{Minor: 5}, notify.CodeInvalidArgument},
	}
	for _, tt := range tests {
		err := w.Open(tt.account, tt.opening)
		if got := notify.CodeOf(err); got != tt.code {
			t.Errorf("%s: Open = %v, want code %s", tt.name, err, tt.code)
		}
		if err != nil && !strings.Contains(err.Error(), "memstore: ") {
			t.Errorf("%s: error %q lacks the package prefix", tt.name, err)
		}
	}
	b, err := w.Balance(context.Background(), "acme")
	if err != nil || b.Available.Minor != 100 {
		t.Errorf("a refused second Open changed the balance: %+v, %v", b, err)
	}
	if _, err := w.Balance(context.Background(), "neg"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("a refused Open created the account: %v", err)
	}
}

func TestWalletLedger(t *testing.T) {
	ctx := context.Background()
	w := NewWallet()
	if err := w.Open("acme", inr(1000)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Ledger("ghost"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Errorf("Ledger(ghost) = %v, want NotFound", err)
	}
	steps := []struct {
		credit bool
		amount int64
	}{{false, 100}, {true, 30}, {false, 1}, {false, 929}, {true, 5}}
	for i, s := range steps {
		op := w.Debit
		if s.credit {
			op = w.Credit
		}
		if _, err := op(ctx, "acme", inr(s.amount), fmt.Sprintf("ref-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Repeats and refusals leave no trace.
	_, _ = w.Debit(ctx, "acme", inr(100), "ref-0")
	_, _ = w.Debit(ctx, "acme", inr(1000), "too-much")

	entries, bal, err := w.Ledger("acme")
	if err != nil {
		t.Fatal(err)
	}
	if bal != inr(5) {
		t.Errorf("Ledger balance = %v, want 0.05 INR", bal)
	}
	want := []Entry{
		{1, Debit, "ref-0", inr(100), inr(900)},
		{2, Credit, "ref-1", inr(30), inr(930)},
		{3, Debit, "ref-2", inr(1), inr(929)},
		{4, Debit, "ref-3", inr(929), inr(0)},
		{5, Credit, "ref-4", inr(5), inr(5)},
	}
	if len(entries) != len(want) {
		t.Fatalf("Ledger has %d entries, want %d: %+v", len(entries), len(want), entries)
	}
	for i := range want {
		if entries[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, entries[i], want[i])
		}
	}
	if Debit.String() != "debit" || Credit.String() != "credit" || EntryKind(0).String() != "unknown" {
		t.Errorf("EntryKind strings: %q %q %q", Debit, Credit, EntryKind(0))
	}
}

// TestWalletManyRefs drives the ref tables through index growth, several
// log and arena chunks and refs longer than an arena chunk, then checks
// that every ref still deduplicates and the ledger adds up.
func TestWalletManyRefs(t *testing.T) {
	ctx := context.Background()
	w := NewWallet()
	const n = 20000
	if err := w.Open("acme", inr(n)); err != nil {
		t.Fatal(err)
	}
	ref := func(i int) string {
		if i%1000 == 0 {
			return fmt.Sprintf("%d-%s", i, strings.Repeat("x", arenaChunk+i/1000))
		}
		return fmt.Sprintf("msg-%d", i)
	}
	for i := 0; i < n; i++ {
		b, err := w.Debit(ctx, "acme", inr(1), ref(i))
		if err != nil || b.Available.Minor != int64(n-i-1) {
			t.Fatalf("debit %d = %+v, %v", i, b, err)
		}
	}
	for i := 0; i < n; i += 7 {
		b, err := w.Debit(ctx, "acme", inr(1), ref(i))
		if err != nil || b.Available.Minor != int64(n-i-1) {
			t.Fatalf("repeat of debit %d = %+v, %v; want its first balance %d", i, b, err, n-i-1)
		}
	}
	entries, bal, err := w.Ledger("acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n || bal.Minor != 0 {
		t.Fatalf("Ledger: %d entries, balance %v; want %d and 0", len(entries), bal, n)
	}
	for i, e := range entries {
		if e.Seq != uint64(i+1) || e.Ref != ref(i) || e.Kind != Debit || e.Balance.Minor != int64(n-i-1) {
			t.Fatalf("entry %d = seq %d kind %v balance %v ref %.20q; want ref %.20q", i, e.Seq, e.Kind, e.Balance, e.Ref, ref(i))
		}
	}
}

func TestWalletRefTooLong(t *testing.T) {
	w := NewWallet()
	if err := w.Open("acme", inr(100)); err != nil {
		t.Fatal(err)
	}
	_, err := w.Debit(context.Background(), "acme", inr(1), strings.Repeat("r", maxRefLen+1))
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("Debit with a %d-byte ref = %v, want InvalidArgument", maxRefLen+1, err)
	}
	if _, err := w.Debit(context.Background(), "acme", inr(1), strings.Repeat("r", maxRefLen)); err != nil {
		t.Errorf("Debit with a %d-byte ref: %v", maxRefLen, err)
	}
}

func TestWalletRefRetention(t *testing.T) {
	ctx := context.Background()
	const keep = 1600
	n := 50000
	if raceEnabled {
		n = 16000
	}
	w := NewWallet(WithRefRetention(keep))
	if err := w.Open("acme", inr(math.MaxInt64/2)); err != nil {
		t.Fatal(err)
	}
	ref := func(i int) string { return fmt.Sprintf("msg-%d", i) }
	for i := 0; i < n; i++ {
		if _, err := w.Debit(ctx, "acme", inr(1), ref(i)); err != nil {
			t.Fatal(err)
		}
	}
	entries, _, err := w.Ledger("acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 2*keep {
		t.Errorf("the wallet remembers %d refs, more than twice the retention %d", len(entries), keep)
	}
	// The most recent refs are remembered: retries of them move nothing.
	before, _ := w.Balance(ctx, "acme")
	for i := n - keep/2; i < n; i++ {
		if _, err := w.Debit(ctx, "acme", inr(1), ref(i)); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := w.Balance(ctx, "acme"); after != before {
		t.Errorf("retrying the %d most recent refs moved money: %v -> %v", keep/2, before.Available, after.Available)
	}
	// The first refs were forgotten, as documented: they charge again.
	if b, err := w.Debit(ctx, "acme", inr(1), ref(0)); err != nil || b.Available.Minor != before.Available.Minor-1 {
		t.Errorf("ref 0, long forgotten, = %+v, %v; want a new debit", b, err)
	}
	// Memory is reused: each shard holds two tables, whatever n was.
	p, _ := w.purse("test", "acme")
	for i := range p.shards {
		for _, tb := range []*refTable{p.shards[i].cur, p.shards[i].old} {
			if tb != nil && len(tb.slots) > 4*keep/refShards {
				t.Errorf("shard %d: index of %d slots for a generation of %d", i, len(tb.slots), keep/refShards)
			}
		}
	}
}

func TestRefTableFingerprintCollision(t *testing.T) {
	// Two refs whose hashes share the top 32 bits must stay apart: the
	// table compares the refs themselves.
	tb := newRefTable(0)
	h := uint64(0xdeadbeef)<<32 | 1
	_, slot := tb.find(h, "a")
	tb.add(h, slot, "a", refEntry{amount: -1})
	e, slot := tb.find(h|2, "b")
	if e != nil {
		t.Fatalf("find(b) returned a's entry")
	}
	tb.add(h|2, slot, "b", refEntry{amount: -2})
	if e, _ := tb.find(h, "a"); e == nil || e.amount != -1 {
		t.Errorf("find(a) = %+v", e)
	}
	if e, _ := tb.find(h|2, "b"); e == nil || e.amount != -2 {
		t.Errorf("find(b) = %+v", e)
	}
}
