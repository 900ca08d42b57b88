package memstore

import (
	"cmp"
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/notifykit/notify/store"
)

// DefaultMessageCapacity is how many settled records NewLedger keeps
// unless told otherwise.
const DefaultMessageCapacity = 100_000

// messageShards is the number of independently locked record maps, a
// power of two: concurrent sends of different messages seldom share one.
const messageShards = 32

// Ledger is an in-memory store.Ledger: records of messages beside a
// memstore Wallet, which it charges and refunds under each record's lock,
// so a record and its money move together for as long as the process
// lives; what a crash would leave (an abandoned send) is a record left
// pending or attempting, which Notifier.Reconcile settles. It is safe for
// concurrent use.
//
// Records still pending or attempting are always kept; of the others it
// keeps about the most recent capacity (WithMessageCapacity), spread over
// 32 shards, and forgets the oldest.
type Ledger struct {
	wallet   *Wallet
	seed     maphash.Seed
	shardCap int
	shards   [messageShards]messageShard

	byKey *msgIndex[idemKey] // message IDs, in the order they were opened
	// byProvider maps a vendor's message ID to the message IDs it names,
	// in the order the vendor accepted them. Keyed by the vendor's ID
	// alone (ByProviderID keeps the provider's own records): a string key
	// takes the map's fast path, and a record's provider may change after
	// the index is written (a chat failover) without leaving a stale key.
	byProvider *msgIndex[string]
	requests   requestRecords
}

type messageShard struct {
	mu      sync.Mutex
	records map[string]*store.Record
	settled []string // IDs of records that left the open states, oldest first
	head    int
	// attempting holds the shard's records in StateAttempting, by
	// provider, for Attempting.
	attempting map[string]map[*store.Record]struct{}
	// deletes counts the deletes from records and from attempting's
	// sets since they were built (see churned).
	deletes, attemptingDeletes int
}

// LedgerOption configures a Ledger in NewLedger.
type LedgerOption func(*Ledger)

// WithMessageCapacity bounds the settled records kept to about n (n <= 0:
// DefaultMessageCapacity).
func WithMessageCapacity(n int) LedgerOption {
	return func(s *Ledger) {
		if n <= 0 {
			n = DefaultMessageCapacity
		}
		s.shardCap = (n + messageShards - 1) / messageShards
	}
}

// NewLedger returns a Ledger with no records that keeps its money in w
// (open accounts' wallets there, with Wallet.Open); a nil w is a new,
// empty Wallet, enough for unmetered sending.
func NewLedger(w *Wallet, opts ...LedgerOption) *Ledger {
	if w == nil {
		w = NewWallet()
	}
	s := &Ledger{wallet: w, seed: maphash.MakeSeed(), byKey: newMsgIndex(func(seed maphash.Seed, k idemKey) uint64 { return maphash.String(seed, k.key) }),
		byProvider: newMsgIndex(maphash.String)}
	WithMessageCapacity(DefaultMessageCapacity)(s)
	for _, o := range opts {
		o(s)
	}
	for i := range s.shards {
		s.shards[i].records = make(map[string]*store.Record)
		s.shards[i].attempting = make(map[string]map[*store.Record]struct{})
	}
	return s
}

// Balance returns the account's balance in the Ledger's Wallet, as
// store.Ledger documents.
func (s *Ledger) Balance(ctx context.Context, account string) (store.Balance, error) {
	return s.wallet.Balance(ctx, account)
}

// Credit credits the account's wallet, as store.Ledger documents.
func (s *Ledger) Credit(ctx context.Context, account string, amount store.Money, ref string) (store.Balance, error) {
	return s.wallet.Credit(ctx, account, amount, ref)
}

func (s *Ledger) shard(id string) *messageShard {
	return &s.shards[maphash.String(s.seed, id)&(messageShards-1)]
}

// Open writes m as a new record, pending or attempting, and debits
// m.Charge, as store.Ledger documents: m itself becomes the record, and is left
// untouched when Open fails. Besides the store's own errors, an ended
// context is its Canceled or DeadlineExceeded error, with nothing written.
func (s *Ledger) Open(ctx context.Context, m *store.Record) (store.Balance, error) {
	if err := ctx.Err(); err != nil {
		return store.Balance{}, ctxError("open message", err)
	}
	if m == nil || m.ID == "" || m.Account == "" {
		return store.Balance{}, store.Errorf(store.ErrInvalid, "memstore: open message: a record needs ID and Account")
	}
	if m.Charge.Minor < 0 {
		return store.Balance{}, store.Errorf(store.ErrInvalid, "memstore: open message %q: a charge must not be negative", m.ID)
	}
	state, history, ok := store.OpenStates(m.State, m.CreatedAt)
	if !ok {
		return store.Balance{}, store.Errorf(store.ErrInvalid, "memstore: open message %q: a record cannot start %s", m.ID, m.State)
	}
	sh := s.shard(m.ID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.records[m.ID]; ok {
		return store.Balance{}, store.Errorf(store.ErrConflict, "memstore: message %q is recorded already", m.ID)
	}
	var b store.Balance
	if m.Charge.Minor > 0 {
		var err error
		if b, err = s.wallet.debitNew(ctx, m.Account, m.Charge, m.ID); err != nil {
			return store.Balance{}, err
		}
	}
	m.State, m.History = state, history
	m.Refunded, m.VendorCode = false, "" // a new record: no refund, no report yet (as pgstore writes it)
	m.UpdatedAt = m.CreatedAt
	sh.records[m.ID] = m
	if m.State == store.StateAttempting {
		sh.enterAttempting(m)
	}
	if m.IdempotencyKey != "" {
		s.byKey.add(idemKey{m.Account, m.IdempotencyKey}, m.ID)
	}
	if m.ProviderMessageID != "" {
		s.byProvider.add(m.ProviderMessageID, m.ID)
	}
	return b, nil
}

// Move moves the record along store.CanMove, refunding its charge when it
// moves into failed, as store.Ledger documents.
func (s *Ledger) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if err := ctx.Err(); err != nil {
		return store.Moved{}, ctxError("move message", err)
	}
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rec, err := sh.lookup(account, id)
	if err != nil {
		return store.Moved{}, err
	}
	if !store.CanMove(rec.State, u.State) {
		if store.CanBackfill(rec.State, u.State) && !inHistory(rec, u.State) {
			backfill(rec, store.StateChange{State: u.State, At: u.At})
			return movedOf(rec), nil
		}
		return movedOf(rec), store.Errorf(store.ErrConflict, "message %s is %s and cannot become %s", id, rec.State, u.State)
	}
	refund := u.State == store.StateFailed && rec.Charge.Minor > 0 && !u.KeepCharge
	if refund {
		if _, err := s.wallet.Credit(ctx, account, rec.Charge, "refund:"+id); err != nil {
			return store.Moved{}, err
		}
	}
	if u.State == store.StateSent && u.Reprice != nil && u.Reprice.Minor >= 0 && u.Reprice.Minor < rec.Charge.Minor {
		diff := store.Money{Minor: rec.Charge.Minor - u.Reprice.Minor, Currency: rec.Charge.Currency}
		if _, err := s.wallet.Credit(ctx, account, diff, "adjust:"+id); err != nil {
			return store.Moved{}, err
		}
		rec.Charge.Minor = u.Reprice.Minor
	}
	hadProviderID := rec.ProviderMessageID != ""
	if rec.State == store.StateAttempting {
		sh.leaveAttempting(rec)
	}
	applyUpdate(rec, u)
	rec.Refunded = rec.Refunded || refund
	if rec.State == store.StateAttempting {
		sh.enterAttempting(rec)
	}
	if !hadProviderID && rec.ProviderMessageID != "" {
		s.byProvider.add(rec.ProviderMessageID, id)
	}
	if !u.State.Open() && rec.History[len(rec.History)-2].State.Open() {
		s.settle(sh, id)
	}
	return movedOf(rec), nil
}

// movedOf is Move's answer for rec. Called with the shard's lock held.
func movedOf(rec *store.Record) store.Moved {
	return store.Moved{State: rec.State, Charge: rec.Charge, Refunded: rec.Refunded, UpdatedAt: rec.UpdatedAt}
}

// enterAttempting indexes rec, just moved into attempting, under its
// provider. Called with sh.mu held.
func (sh *messageShard) enterAttempting(rec *store.Record) {
	set := sh.attempting[rec.Provider]
	if set == nil {
		set = make(map[*store.Record]struct{})
		sh.attempting[rec.Provider] = set
	}
	set[rec] = struct{}{}
}

// leaveAttempting removes rec, about to move out of attempting, from the
// index (under its provider as it stands, the one it entered under: only
// a move changes it). An emptied set stays, for the provider's next send:
// providers are few, and making the set again would cost each send an
// allocation. Called with sh.mu held.
func (sh *messageShard) leaveAttempting(rec *store.Record) {
	set := sh.attempting[rec.Provider]
	delete(set, rec)
	// Every send enters and leaves: the set churns more than any map here.
	if sh.attemptingDeletes++; churned(sh.attemptingDeletes, len(set)) {
		sh.attempting[rec.Provider], sh.attemptingDeletes = rebuilt(set), 0
	}
}

func inHistory(rec *store.Record, st store.State) bool {
	return slices.ContainsFunc(rec.History, func(c store.StateChange) bool { return c.State == st })
}

// backfill adds step to rec's history, before the first step of a state
// further along (clocks of vendor and host differ, so the states' order
// places it, not the times).
func backfill(rec *store.Record, step store.StateChange) {
	i := slices.IndexFunc(rec.History, func(c store.StateChange) bool { return store.CanBackfill(c.State, step.State) })
	if i < 0 {
		i = len(rec.History)
	}
	rec.History = slices.Insert(rec.History, i, step)
}

// applyUpdate moves rec to u.State and sets u's non-empty fields.
func applyUpdate(rec *store.Record, u store.Update) {
	rec.State = u.State
	rec.UpdatedAt = u.At
	rec.History = append(rec.History, store.StateChange{State: u.State, At: u.At})
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&rec.Provider, u.Provider)
	set(&rec.ProviderMessageID, u.ProviderMessageID)
	set(&rec.Error, u.Error)
	set(&rec.VendorCode, u.VendorCode)
	set(&rec.Note, u.Note)
	if u.Gateway != "" {
		rec.Gateway = u.Gateway
	}
	if u.ErrorCode != "" {
		rec.ErrorCode = u.ErrorCode
	}
	if u.Attempts != 0 {
		rec.Attempts = u.Attempts
	}
}

// settle queues id among the settled records and forgets the oldest
// beyond the shard's share of the capacity. Called with sh.mu held.
func (s *Ledger) settle(sh *messageShard, id string) {
	sh.settled = append(sh.settled, id)
	for len(sh.settled)-sh.head > s.shardCap {
		old := sh.settled[sh.head]
		sh.settled[sh.head] = ""
		sh.head++
		if rec, ok := sh.records[old]; ok {
			delete(sh.records, old)
			s.dropKeys(rec)
			if sh.deletes++; churned(sh.deletes, len(sh.records)) {
				sh.records, sh.deletes = rebuilt(sh.records), 0
			}
		}
	}
	// Compact once the forgotten head is as long as what is kept, so
	// that the queue stays within twice the shard's share however small
	// that share is.
	if sh.head > s.shardCap {
		sh.settled = append([]string(nil), sh.settled[sh.head:]...)
		sh.head = 0
	}
}

// dropKeys removes a forgotten record from the indexes.
func (s *Ledger) dropKeys(rec *store.Record) {
	if rec.IdempotencyKey != "" {
		s.byKey.drop(idemKey{rec.Account, rec.IdempotencyKey}, rec.ID)
	}
	if rec.ProviderMessageID != "" {
		s.byProvider.drop(rec.ProviderMessageID, rec.ID)
	}
}

// lookup returns the account's record id, or ErrNotFound (also for another
// account's record). Called with sh.mu held.
func (sh *messageShard) lookup(account, id string) (*store.Record, error) {
	rec, ok := sh.records[id]
	if !ok || rec.Account != account {
		return nil, store.Errorf(store.ErrNotFound, "memstore: no message %q", id)
	}
	return rec, nil
}

// Message returns a copy of the account's record id, or ErrNotFound.
func (s *Ledger) Message(ctx context.Context, account, id string) (*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("message", err)
	}
	sh := s.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rec, err := sh.lookup(account, id)
	if err != nil {
		return nil, err
	}
	return cloneMessage(rec), nil
}

// ByKey returns copies of the account's records opened with key at or
// after since, oldest first.
func (s *Ledger) ByKey(ctx context.Context, account, key string, since time.Time) ([]*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("messages by key", err)
	}
	ids := s.byKey.get(idemKey{account, key})
	var out []*store.Record
	for _, id := range ids {
		if m, err := s.Message(ctx, account, id); err == nil && !m.CreatedAt.Before(since) {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b *store.Record) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// ByProviderID returns copies of the records provider accepted under its
// message ID id, oldest first.
func (s *Ledger) ByProviderID(ctx context.Context, provider, id string) ([]*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("messages by provider ID", err)
	}
	ids := s.byProvider.get(id)
	var out []*store.Record
	for _, mid := range ids {
		sh := s.shard(mid)
		sh.mu.Lock()
		if rec, ok := sh.records[mid]; ok && rec.Provider == provider {
			out = append(out, cloneMessage(rec))
		}
		sh.mu.Unlock()
	}
	slices.SortStableFunc(out, func(a, b *store.Record) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// Stale returns copies of up to limit open records that last moved
// before cutoff, least recently moved first. It scans every record.
func (s *Ledger) Stale(ctx context.Context, cutoff time.Time, limit int) ([]*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("stale messages", err)
	}
	var out []*store.Record
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, rec := range sh.records {
			if rec.State.Open() && rec.UpdatedAt.Before(cutoff) {
				out = append(out, cloneMessage(rec))
			}
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b *store.Record) int {
		return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.ID, b.ID))
	})
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Attempting reports whether provider has a record in attempting that
// last moved at or after since, as store.Ledger documents. It
// reads each shard's index of its attempting records (those of sends in
// flight, and of dead ones until Notifier.Reconcile settles them), and
// stops at the first that is young enough.
func (s *Ledger) Attempting(ctx context.Context, provider string, since time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, ctxError("attempting messages", err)
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for rec := range sh.attempting[provider] {
			if !rec.UpdatedAt.Before(since) {
				sh.mu.Unlock()
				return true, nil
			}
		}
		sh.mu.Unlock()
	}
	return false, nil
}

func cloneMessage(m *store.Record) *store.Record {
	c := *m
	c.History = slices.Clone(m.History)
	c.Resend = slices.Clone(m.Resend)
	return &c
}

// Interface guard
var _ store.Ledger = (*Ledger)(nil)
