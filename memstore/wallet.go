package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// refShards is the number of independently locked ref maps per account, a
// power of two. Sharding keeps the map work of concurrent debits on one
// account off the balance lock and off each other.
const refShards = 16

// maxRefLen bounds the length of a ref, far above any message ID.
const maxRefLen = 64 << 10

// Wallet keeps the money of a memstore Ledger (NewLedger): one balance
// per account, opened with Open, moved by references. It passes
// storetest.RunWallet. It is safe for concurrent use.
//
// Refs are kept per account: the same ref on two accounts is two
// operations. Every ref is remembered, with its amount and the balance
// after it, so that a retry returns the first result. That costs about 70
// bytes per operation plus a copy of the ref's bytes (the Wallet keeps no
// caller memory). Without WithRefRetention this memory grows with every
// debit and credit for the life of the Wallet, which suits tests and
// development; bound it for long-running processes.
//
// Concurrent operations on one account contend only briefly: the ref
// check runs under one of 16 locks chosen by the ref's hash, and the
// account's own lock guards only the balance arithmetic.
type Wallet struct {
	purses sync.Map // account ID -> *purse
	seed   maphash.Seed
	// genCap is how many refs one shard's generation holds before it
	// becomes the old generation; 0 keeps every ref.
	genCap int
}

// WalletOption configures a Wallet in NewWallet.
type WalletOption func(*Wallet)

// WithRefRetention bounds the refs each account remembers to about n. The
// refs are spread by hash over 16 shards; each shard keeps two
// generations of n/16 refs and drops the older generation when the newer
// one fills, reusing its memory, so a busy account's memory stays flat
// and its operations stop allocating. An account therefore remembers at
// most 2n refs and, refs spreading evenly, at least its most recent n or
// so. A retry with a ref that was forgotten moves money again, so n should
// cover every retry that can still arrive (the Notifier retries within
// seconds). n <= 0 keeps every ref (the default).
func WithRefRetention(n int) WalletOption {
	return func(w *Wallet) {
		if n <= 0 {
			w.genCap = 0
			return
		}
		w.genCap = (n + refShards - 1) / refShards
	}
}

// NewWallet returns an empty Wallet.
func NewWallet(opts ...WalletOption) *Wallet {
	w := &Wallet{seed: maphash.MakeSeed()}
	for _, o := range opts {
		o(w)
	}
	return w
}

// purse is one account's balance and the refs that moved it. Lock order:
// a shard's mu, then the purse's mu; never two shards (except in ledger,
// which takes all of them in index order and nothing else first).
type purse struct {
	currency record.Currency

	mu      sync.Mutex
	balance int64
	seq     uint64
	_       [64]byte // keep the hot balance off the shards' cache lines

	shards [refShards]refShard
}

type refShard struct {
	mu  sync.Mutex
	cur *refTable
	old *refTable // the previous generation, under a retention bound
	_   [40]byte  // one shard per cache line
}

func (s *refShard) lookup(h uint64, ref string) (*refEntry, int) {
	if s.cur == nil {
		return nil, -1
	}
	if e, slot := s.cur.find(h, ref); e != nil || s.old == nil {
		return e, slot
	} else if e, _ := s.old.find(h, ref); e != nil {
		return e, -1
	} else {
		return nil, slot
	}
}

// insert records e for ref, whose hash is h, at the slot lookup returned.
func (s *refShard) insert(h uint64, slot int, ref string, e refEntry, genCap int) {
	switch {
	case s.cur == nil:
		s.cur = newRefTable(genCap)
		_, slot = s.cur.find(h, ref)
	case genCap > 0 && s.cur.n >= genCap:
		// The oldest generation is forgotten; its memory is reused.
		next := s.old
		if next == nil {
			next = newRefTable(genCap)
		} else {
			next.reset()
		}
		s.old, s.cur = s.cur, next
		_, slot = s.cur.find(h, ref)
	case s.cur.full():
		s.old, s.cur = s.cur, newRefTable(0)
		_, slot = s.cur.find(h, ref)
	}
	s.cur.add(h, slot, ref, e)
}

// Open creates account with the opening balance, which fixes the
// account's currency. An empty account, a negative opening or one without
// a currency code is ErrInvalid; an account already open is
// ErrConflict.
func (w *Wallet) Open(account string, opening record.Money) error {
	switch {
	case account == "":
		return fmt.Errorf("memstore: open: empty account ID: %w", store.ErrInvalid)
	case opening.Minor < 0:
		return fmt.Errorf("memstore: open %q: negative opening balance %s: %w", account, opening, store.ErrInvalid)
	case opening.Currency.Code == "":
		return fmt.Errorf("memstore: open %q: opening balance has no currency: %w", account, store.ErrInvalid)
	}
	p := &purse{currency: opening.Currency, balance: opening.Minor}
	if _, loaded := w.purses.LoadOrStore(account, p); loaded {
		return fmt.Errorf("memstore: open %q: account already has a wallet: %w", account, store.ErrConflict)
	}
	return nil
}

func (w *Wallet) purse(op, account string) (*purse, error) {
	v, ok := w.purses.Load(account)
	if !ok {
		return nil, fmt.Errorf("memstore: %s: no wallet for account %q: %w", op, account, store.ErrNotFound)
	}
	return v.(*purse), nil
}

// Balance returns the account's balance; an unknown account is ErrNotFound
// and an ended context its Canceled or DeadlineExceeded error.
func (w *Wallet) Balance(ctx context.Context, account string) (record.Balance, error) {
	if err := ctx.Err(); err != nil {
		return record.Balance{}, ctxError("balance", err)
	}
	p, err := w.purse("balance", account)
	if err != nil {
		return record.Balance{}, err
	}
	p.mu.Lock()
	b := p.balance
	p.mu.Unlock()
	return record.Balance{Account: account, Available: record.Money{Minor: b, Currency: p.currency}}, nil
}

// Debit takes amount from the account under ref, as storetest.Wallet
// documents (the Ledger debits each record's charge through it). Errors: an ended context (nothing moves), ErrNotFound,
// ErrInvalid for a non-positive amount, another currency or an
// empty ref, ErrConflict for a ref recorded with another direction or
// amount, ErrInsufficientFunds.
func (w *Wallet) Debit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	return w.apply(ctx, "debit", account, amount, ref, w.hashRef(ref), -1, false)
}

// debitNew is Debit of a ref the wallet must not know: a known one is
// ErrConflict, not a retry. The Ledger's Open debits through it, so that a
// message ID whose record was forgotten (settled beyond the capacity)
// while its debit is remembered is taken, rather than opened again with
// no money moved. h is hashRef(ref), which the Ledger has at hand: it
// hashes message IDs with the wallet's seed (NewLedger), so that a send
// hashes its ID once.
func (w *Wallet) debitNew(ctx context.Context, account string, amount record.Money, ref string, h uint64) (record.Balance, error) {
	return w.apply(ctx, "debit", account, amount, ref, h, -1, true)
}

// Credit adds amount to the account under ref; errors as for Debit,
// except that a credit beyond the largest int64 balance is
// ErrInvalid instead of ErrInsufficientFunds.
func (w *Wallet) Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	return w.apply(ctx, "credit", account, amount, ref, w.hashRef(ref), 1, false)
}

// hashRef returns the hash of ref that chooses its shard and slot.
func (w *Wallet) hashRef(ref string) uint64 { return maphash.String(w.seed, ref) }

// apply moves sign*amount under ref, whose hash is h (hashRef); a ref already recorded answers the
// recorded movement, or, when fresh, ErrConflict. The shard lock makes the ref check
// and the move one step for callers sharing a ref; the purse lock guards
// only the balance arithmetic, so callers with different refs serialise
// on a few instructions.
func (w *Wallet) apply(ctx context.Context, op, account string, amount record.Money, ref string, h uint64, sign int64, fresh bool) (record.Balance, error) {
	if err := ctx.Err(); err != nil {
		return record.Balance{}, ctxError(op, err)
	}
	if amount.Minor <= 0 {
		return record.Balance{}, fmt.Errorf("memstore: %s of %s: amount must be more than zero: %w", op, amount, store.ErrInvalid)
	}
	if ref == "" || len(ref) > maxRefLen {
		return record.Balance{}, fmt.Errorf("memstore: %s: a ref must have 1 to %d bytes, not %d: %w", op, maxRefLen, len(ref), store.ErrInvalid)
	}
	p, err := w.purse(op, account)
	if err != nil {
		return record.Balance{}, err
	}
	if !amount.Currency.Same(p.currency) {
		return record.Balance{}, fmt.Errorf("memstore: %s of %s: account %q is in %s: %w", op, amount, account, p.currency.Code, store.ErrInvalid)
	}
	delta := sign * amount.Minor

	// The shard comes from the hash's low bits, the table slot from its
	// high bits, so the two stay independent.
	sh := &p.shards[h&(refShards-1)]
	sh.mu.Lock()
	rec, slot := sh.lookup(h, ref)
	if rec != nil {
		recAmount, recAfter := rec.amount, rec.after
		sh.mu.Unlock()
		if fresh {
			return record.Balance{}, fmt.Errorf("memstore: %s of %s: ref %q is recorded already: %w", op, amount, ref, store.ErrConflict)
		}
		if recAmount != delta {
			return record.Balance{}, fmt.Errorf("memstore: %s of %s: ref %q was recorded for a %s: %w", op, amount, ref, describe(recAmount, p.currency), store.ErrConflict)
		}
		return record.Balance{Account: account, Available: record.Money{Minor: recAfter, Currency: p.currency}}, nil
	}
	p.mu.Lock()
	bal := p.balance
	if sign < 0 && bal < amount.Minor || sign > 0 && bal > math.MaxInt64-amount.Minor {
		p.mu.Unlock()
		sh.mu.Unlock()
		have := record.Money{Minor: bal, Currency: p.currency}
		if sign < 0 {
			return record.Balance{}, fmt.Errorf("debit of %s: account %q has %s: %w", amount, account, have, store.ErrInsufficientFunds)
		}
		return record.Balance{}, fmt.Errorf("memstore: credit of %s: account %q has %s, and the sum overflows: %w", amount, account, have, store.ErrInvalid)
	}
	bal += delta
	p.balance = bal
	p.seq++
	seq := p.seq
	p.mu.Unlock()
	sh.insert(h, slot, ref, refEntry{amount: delta, after: bal, seq: seq}, w.genCap)
	sh.mu.Unlock()
	return record.Balance{Account: account, Available: record.Money{Minor: bal, Currency: p.currency}}, nil
}

func describe(delta int64, c record.Currency) string {
	if delta < 0 {
		return "debit of " + record.Money{Minor: -delta, Currency: c}.String()
	}
	return "credit of " + record.Money{Minor: delta, Currency: c}.String()
}

// EntryKind says whether a ledger entry took money or added it.
type EntryKind int

// The entry kinds.
const (
	Debit EntryKind = iota + 1
	Credit
)

// String returns "debit" or "credit".
func (k EntryKind) String() string {
	switch k {
	case Debit:
		return "debit"
	case Credit:
		return "credit"
	}
	return "unknown"
}

// Entry is one debit or credit that moved money.
type Entry struct {
	// Seq orders the account's entries as they were applied, from 1.
	Seq  uint64
	Kind EntryKind
	Ref  string
	// Amount is the amount moved, always positive.
	Amount record.Money
	// Balance is the balance right after the entry.
	Balance record.Money
}

// Ledger returns the account's remembered entries in the order they were
// applied, with the balance at that moment, or ErrNotFound. It is a
// consistent snapshot: operations on the account wait while it is taken.
// Under WithRefRetention, forgotten refs are missing from it.
func (w *Wallet) Ledger(account string) ([]Entry, record.Money, error) {
	p, err := w.purse("ledger", account)
	if err != nil {
		return nil, record.Money{}, err
	}
	for i := range p.shards {
		p.shards[i].mu.Lock()
	}
	p.mu.Lock()
	bal := p.balance
	p.mu.Unlock()
	var out []Entry
	add := func(r *refEntry, ref string) {
		e := Entry{Seq: r.seq, Kind: Credit, Ref: ref, Amount: record.Money{Minor: r.amount, Currency: p.currency},
			Balance: record.Money{Minor: r.after, Currency: p.currency}}
		if r.amount < 0 {
			e.Kind, e.Amount.Minor = Debit, -r.amount
		}
		out = append(out, e)
	}
	for i := range p.shards {
		for _, t := range []*refTable{p.shards[i].old, p.shards[i].cur} {
			if t != nil {
				t.each(add)
			}
		}
	}
	for i := range p.shards {
		p.shards[i].mu.Unlock()
	}
	slices.SortFunc(out, func(a, b Entry) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return out, record.Money{Minor: bal, Currency: p.currency}, nil
}

// ctxError is a context error of op, keeping errors.Is true.
func ctxError(op string, err error) error {
	return fmt.Errorf("memstore: %s: %w", op, err)
}

// Statement returns up to limit of the entries Wallet.Ledger remembers
// with a Seq greater than after (notify.WalletStore.Statement). Entries
// carry no time.
func (w *Wallet) Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("ledger", err)
	}
	entries, _, err := w.Ledger(account)
	if errors.Is(err, store.ErrNotFound) {
		return []record.LedgerEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	i, _ := slices.BinarySearchFunc(entries, after, func(e Entry, after int64) int {
		return cmp.Compare(int64(e.Seq), after)
	})
	if i < len(entries) && int64(entries[i].Seq) == after {
		i++
	}
	entries = entries[i:]
	if limit >= 0 && len(entries) > limit {
		entries = entries[:limit]
	}
	out := make([]record.LedgerEntry, len(entries))
	for i, e := range entries {
		amount := e.Amount
		if e.Kind == Debit {
			amount.Minor = -amount.Minor
		}
		out[i] = record.LedgerEntry{Seq: int64(e.Seq), Ref: e.Ref, Amount: amount, Balance: e.Balance}
	}
	return out, nil
}
