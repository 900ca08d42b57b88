package memstore

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/internal/recordmove"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// DefaultMessageCapacity is how many settled records NewLedger keeps at
// most unless told otherwise (see WithMessageCapacity).
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
// Records still pending, attempting, queued or scheduled are always kept. The settled ones
// are kept in two generations, the current one and the previous one, and
// forgotten a generation at a time: once capacity/2 records have settled
// into the current generation (WithMessageCapacity), the previous one is
// dropped whole, the current one becomes the previous, and the open
// records move into a new current one (turn). Dropping a generation's
// maps whole costs nothing per record, where forgetting the oldest record
// one at a time cost every send map deletes, in the records and in each
// index, on memory long gone cold. Records are spread over 32 locked
// shards, by the hash of their ID; the one step that takes every shard's
// lock is that turn of the generations, once every capacity/2 settled
// records, and its work is the open records it carries.
type Ledger struct {
	wallet *Wallet
	seed   maphash.Seed
	// genCap is how many records settle into a generation before it
	// turns: capacity/2, at least 1.
	genCap int64
	// settled counts the records settled into the current generation.
	// It changes only under the lock of the record's shard, and is reset
	// by turn, which holds every shard's lock.
	settled atomic.Int64
	shards  [messageShards]messageShard
	// turnMu lets one turn run at a time, and guards sizes: per shard,
	// how many records the generation that last turned held, the size
	// turn makes the next one's map.
	turnMu sync.Mutex
	sizes  [messageShards]int

	// byKey and byProvider index the records kept, in generations that
	// turn with theirs (see msgIndex); lookups check each record they
	// name against the key and against the records kept, so an entry
	// that outlives its record, or its record's key, is harmless.
	byKey *msgIndex // records by account and idempotency key
	// byProvider finds records by their vendor's message ID, in the
	// order the vendor accepted them. Keyed by the vendor's ID alone
	// (ByProviderID keeps the provider's own records): a record's
	// provider may change after the index is written (a chat failover)
	// without leaving a stale key.
	byProvider *msgIndex
	requests   requestRecords
	// suppressions is the account's suppression list (suppress.go).
	suppressions Suppressions
	// preferences are the accounts' categories and their recipients'
	// choices (preference.go).
	preferences Preferences
}

// messageShard holds the records whose IDs hash to it. Every record is
// in exactly one of cur and old; the open ones are all in cur (turn
// carries them), so old holds settled records only, which never become
// open again.
type messageShard struct {
	mu sync.Mutex
	// cur and old hold the records by the hash of their ID (hashID),
	// the one the shard was chosen by.
	cur recSet
	old recSet // the previous generation; empty before the first turn
	// attempting holds the shard's records in StateAttempting, by
	// provider, for Attempting; pending those in StatePending. Together
	// they are the open records, which Stale reads and turn carries.
	attempting map[string]map[*record.Message]struct{}
	pending    map[*record.Message]struct{}
	// waiting holds the shard's records in StateQueued or StateScheduled,
	// which turn carries too (a queue's job will take them) and Stale
	// leaves alone.
	waiting map[*record.Message]struct{}
	// attemptingDeletes, pendingDeletes and waitingDeletes count the
	// deletes from attempting's sets, from pending and from waiting since
	// they were built (see churned).
	attemptingDeletes, pendingDeletes, waitingDeletes int
}

// LedgerOption configures a Ledger in NewLedger.
type LedgerOption func(*Ledger)

// WithMessageCapacity bounds the settled records kept to n (n <= 0:
// DefaultMessageCapacity), and the request records (OpenRequest) alike.
// They are forgotten half a capacity at a time, oldest first (see
// Ledger): between calls, the Ledger keeps the most recent n/2 settled
// records at least (rounded down, and one at least) and n at most,
// however they spread over its shards. The one excess: records that
// concurrent moves settle while the generations turn (a millisecond or
// so at the default capacity) join the generation being closed, and
// stand beyond n until the next turn. Open records are kept besides,
// however many.
func WithMessageCapacity(n int) LedgerOption {
	return func(s *Ledger) {
		if n <= 0 {
			n = DefaultMessageCapacity
		}
		s.genCap = int64(max(n/2, 1))
	}
}

// NewLedger returns a Ledger with no records that keeps its money in w
// (open accounts' wallets there, with Wallet.Open); a nil w is a new,
// empty Wallet, enough for unmetered sending.
func NewLedger(w *Wallet, opts ...LedgerOption) *Ledger {
	if w == nil {
		w = NewWallet()
	}
	// The wallet's seed: Open hashes a message ID once, for its shard here
	// and for its debit's ref there (Wallet.debitNew).
	s := &Ledger{wallet: w, seed: w.seed, byKey: newMsgIndex(), byProvider: newMsgIndex()}
	WithMessageCapacity(DefaultMessageCapacity)(s)
	for _, o := range opts {
		o(s)
	}
	for i := range s.shards {
		s.shards[i].cur = newRecSet(0)
		s.shards[i].attempting = make(map[string]map[*record.Message]struct{})
		s.shards[i].pending = make(map[*record.Message]struct{})
		s.shards[i].waiting = make(map[*record.Message]struct{})
	}
	return s
}

// Balance returns the account's balance in the Ledger's Wallet, as
// store.Ledger documents.
func (s *Ledger) Balance(ctx context.Context, account string) (record.Balance, error) {
	return s.wallet.Balance(ctx, account)
}

// Credit credits the account's wallet, as store.Ledger documents.
func (s *Ledger) Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	return s.wallet.Credit(ctx, account, amount, ref)
}

// Statement returns the account's movements in the Ledger's Wallet, as
// Wallet.Statement does.
func (s *Ledger) Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error) {
	return s.wallet.Statement(ctx, account, after, limit)
}

// hashID returns the hash of a message ID, which chooses its shard
// (shard) and is its key there.
func (s *Ledger) hashID(id string) uint64 { return maphash.String(s.seed, id) }

func (s *Ledger) shard(h uint64) *messageShard {
	return &s.shards[h&(messageShards-1)]
}

// Open writes m as a new record, pending or attempting, and debits
// m.Charge, as store.Ledger documents: m itself becomes the record, and is left
// untouched when Open fails. Besides the store's own errors, an ended
// context is its Canceled or DeadlineExceeded error, with nothing written.
func (s *Ledger) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	if err := ctx.Err(); err != nil {
		return record.Balance{}, ctxError("open message", err)
	}
	if m == nil || m.ID == "" || m.Account == "" {
		return record.Balance{}, fmt.Errorf("memstore: open message: a record needs ID and Account: %w", store.ErrInvalid)
	}
	if m.Charge.Minor < 0 {
		return record.Balance{}, fmt.Errorf("memstore: open message %q: a charge must not be negative: %w", m.ID, store.ErrInvalid)
	}
	state, history, ok := record.OpenStates(m.State, m.CreatedAt)
	if !ok {
		return record.Balance{}, fmt.Errorf("memstore: open message %q: a record cannot start %s: %w", m.ID, m.State, store.ErrInvalid)
	}
	h := s.hashID(m.ID)
	sh := s.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.find(h, m.ID) != nil {
		return record.Balance{}, fmt.Errorf("memstore: message %q is recorded already: %w", m.ID, store.ErrConflict)
	}
	var b record.Balance
	if m.Charge.Minor > 0 {
		var err error
		if b, err = s.wallet.debitNew(ctx, m.Account, m.Charge, m.ID, h); err != nil {
			return record.Balance{}, err
		}
	}
	m.State, m.History = state, history
	m.Refunded, m.VendorCode, m.Tried = false, "", nil // a new record: no refund, no report, no calls yet (as pgstore writes it)
	m.UpdatedAt = m.CreatedAt
	sh.cur.add(h, m)
	sh.enterOpen(m)
	if m.IdempotencyKey != "" {
		s.byKey.add(s.byKey.hash2(m.Account, m.IdempotencyKey), m)
	}
	if m.ProviderMessageID != "" {
		s.byProvider.add(s.byProvider.hash(m.ProviderMessageID), m)
	}
	return b, nil
}

// Move moves the record along record.CanMove, refunding its charge when it
// moves into failed, as store.Ledger documents. The move that settles the
// last record of a generation also turns the generations (see Ledger),
// after it has let go of the record's shard.
func (s *Ledger) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if err := ctx.Err(); err != nil {
		return store.Moved{}, ctxError("move message", err)
	}
	mv, full, err := s.move(ctx, s.hashID(id), account, id, u)
	if full {
		s.turn()
	}
	return mv, err
}

// move is Move under the shard's lock; full reports that the move
// settled the record that filled the current generation.
func (s *Ledger) move(ctx context.Context, h uint64, account, id string, u store.Update) (mv store.Moved, full bool, err error) {
	sh := s.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rec, err := sh.lookup(h, account, id)
	if err != nil {
		return store.Moved{}, false, err
	}
	if u.From != "" && rec.State != u.From {
		return movedOf(rec), false, fmt.Errorf("message %s is %s, not %s: %w", id, rec.State, u.From, store.ErrConflict)
	}
	if !record.CanMove(rec.State, u.State) {
		// A conditional move is that move or nothing: no backfill.
		if u.From == "" && record.CanBackfill(rec.State, u.State) && !rec.Entered(u.State) {
			backfill(rec, record.StateChange{State: u.State, At: u.At})
			return movedOf(rec), false, nil
		}
		return movedOf(rec), false, fmt.Errorf("message %s is %s and cannot become %s: %w", id, rec.State, u.State, store.ErrConflict)
	}
	if storeutil.RepriceMismatch(u, rec.Charge) {
		return movedOf(rec), false, fmt.Errorf("memstore: move message %q: a reprice in %s of a charge in %s: %w", id, u.Reprice.Currency.Code, rec.Charge.Currency.Code, store.ErrInvalid)
	}
	refund := u.State == record.StateFailed && rec.Charge.Minor > 0 && !u.KeepCharge
	var after record.Money // the balance after a credit of the move's
	if refund {
		b, err := s.wallet.Credit(ctx, account, rec.Charge, store.RefundRefPrefix+id)
		if err != nil {
			return store.Moved{}, false, err
		}
		after = b.Available
	}
	if storeutil.Repricing(u) && u.Reprice.Minor < rec.Charge.Minor {
		diff := record.Money{Minor: rec.Charge.Minor - u.Reprice.Minor, Currency: rec.Charge.Currency}
		b, err := s.wallet.Credit(ctx, account, diff, store.AdjustRefPrefix+id)
		if err != nil {
			return store.Moved{}, false, err
		}
		rec.Charge.Minor, after = u.Reprice.Minor, b.Available
	}
	providerID := rec.ProviderMessageID
	wasLive := rec.State.Live()
	if wasLive {
		sh.leaveOpen(rec)
	}
	recordmove.Apply(rec, u) // a settled record drops its Payload
	rec.Refunded = rec.Refunded || refund
	if rec.State.Live() {
		sh.enterOpen(rec)
	}
	if rec.ProviderMessageID != providerID {
		// Into the index's current generation, whichever holds the
		// record: an entry must not be forgotten before its record. An
		// entry under the ID it replaces stays, until its generation is
		// forgotten, and finds nothing (ByProviderID checks the ID).
		s.byProvider.add(s.byProvider.hash(rec.ProviderMessageID), rec)
	}
	if wasLive && !rec.State.Live() {
		// A live record is in cur (turn carries it), so it settles
		// into the current generation, which it now counts towards.
		full = s.settled.Add(1) == s.genCap
	}
	mv = movedOf(rec)
	mv.Balance = after
	return mv, full, nil
}

// turn forgets the previous generation of settled records, makes the
// current one the previous, and starts a new one holding the open
// records, the maps of the records and of both indexes alike. It takes
// every shard's lock, in order, so that no record moves or opens, and no
// index entry is written, while the generations turn: what is forgotten
// is then exactly the previous generation. That pause costs the open
// records it carries, not the records it forgets (nor their maps: the
// collector frees them).
//
// The new generation's maps are made before the pause, each sized like
// the one it follows: a map that starts empty grows by rehashing every
// key it holds, several times over, at a cost to every send, and making
// them sized takes milliseconds, too long to hold every shard. (Clearing
// the forgotten maps for reuse would keep, for good, the room of the
// largest generation each ever held.) The move that filled the current
// generation calls it, holding no lock, and so waits for it.
func (s *Ledger) turn() {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	if s.settled.Load() < s.genCap {
		return // not full: nothing to forget (only a filling move calls turn)
	}
	var next [messageShards]recSet
	for i := range next {
		next[i] = newRecSet(s.sizes[i])
	}
	keys, providers := s.byKey.fresh(), s.byProvider.fresh()

	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	s.settled.Store(0)
	s.byKey.turn(&keys)
	s.byProvider.turn(&providers)
	for i := range s.shards {
		sh := &s.shards[i]
		s.sizes[i] = sh.cur.len()
		sh.old, sh.cur = sh.cur, next[i]
		for rec := range sh.pending {
			s.carry(sh, rec)
		}
		for rec := range sh.waiting {
			s.carry(sh, rec)
		}
		for _, set := range sh.attempting {
			for rec := range set {
				s.carry(sh, rec)
			}
		}
	}
}

// carry moves the open record rec, and its index entries, from the
// previous generation into the current one. Called by turn.
func (s *Ledger) carry(sh *messageShard, rec *record.Message) {
	h := s.hashID(rec.ID)
	sh.old.remove(h, rec)
	sh.cur.add(h, rec)
	if rec.IdempotencyKey != "" {
		s.byKey.carry(s.byKey.hash2(rec.Account, rec.IdempotencyKey), rec)
	}
	if rec.ProviderMessageID != "" {
		s.byProvider.carry(s.byProvider.hash(rec.ProviderMessageID), rec)
	}
}

// movedOf is Move's answer for rec. Called with the shard's lock held.
func movedOf(rec *record.Message) store.Moved {
	return store.Moved{State: rec.State, Charge: rec.Charge, Refunded: rec.Refunded, UpdatedAt: rec.UpdatedAt}
}

// enterOpen indexes rec, just opened or moved into a live state, as
// pending, waiting or, under its provider, as attempting. Called with
// sh.mu held.
func (sh *messageShard) enterOpen(rec *record.Message) {
	switch {
	case rec.State == record.StatePending:
		sh.pending[rec] = struct{}{}
		return
	case rec.State.Waiting():
		sh.waiting[rec] = struct{}{}
		return
	}
	set := sh.attempting[rec.Provider]
	if set == nil {
		set = make(map[*record.Message]struct{})
		sh.attempting[rec.Provider] = set
	}
	set[rec] = struct{}{}
}

// leaveOpen removes rec, about to move out of its open state, from the
// index it entered (for an attempting record, under its provider as it
// stands, the one it entered under: only a move changes it). An emptied
// set of attempting records stays, for the provider's next send:
// providers are few, and making the set again would cost each send an
// allocation. Called with sh.mu held.
func (sh *messageShard) leaveOpen(rec *record.Message) {
	switch {
	case rec.State == record.StatePending:
		delete(sh.pending, rec)
		if sh.pendingDeletes++; churned(sh.pendingDeletes, len(sh.pending)) {
			sh.pending, sh.pendingDeletes = rebuilt(sh.pending), 0
		}
		return
	case rec.State.Waiting():
		delete(sh.waiting, rec)
		if sh.waitingDeletes++; churned(sh.waitingDeletes, len(sh.waiting)) {
			sh.waiting, sh.waitingDeletes = rebuilt(sh.waiting), 0
		}
		return
	}
	set := sh.attempting[rec.Provider]
	delete(set, rec)
	// Every send enters and leaves: the set churns more than any map here.
	if sh.attemptingDeletes++; churned(sh.attemptingDeletes, len(set)) {
		sh.attempting[rec.Provider], sh.attemptingDeletes = rebuilt(set), 0
	}
}

// backfill adds step to rec's history, before the first step of a state
// further along (clocks of vendor and host differ, so the states' order
// places it, not the times).
func backfill(rec *record.Message, step record.StateChange) {
	i := slices.IndexFunc(rec.History, func(c record.StateChange) bool { return record.CanBackfill(c.State, step.State) })
	if i < 0 {
		i = len(rec.History)
	}
	rec.History = slices.Insert(rec.History, i, step)
}

// find returns the record id, whose hash is h, or nil. Called with sh.mu
// held.
func (sh *messageShard) find(h uint64, id string) *record.Message {
	if rec := sh.cur.find(h, id); rec != nil {
		return rec
	}
	return sh.old.find(h, id)
}

// lookup returns the account's record id, or ErrNotFound (also for another
// account's record). Called with sh.mu held.
func (sh *messageShard) lookup(h uint64, account, id string) (*record.Message, error) {
	rec := sh.find(h, id)
	if rec == nil || rec.Account != account {
		return nil, fmt.Errorf("memstore: no message %q: %w", id, store.ErrNotFound)
	}
	return rec, nil
}

// Message returns a copy of the account's record id, or ErrNotFound.
func (s *Ledger) Message(ctx context.Context, account, id string) (*record.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("message", err)
	}
	h := s.hashID(id)
	sh := s.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rec, err := sh.lookup(h, account, id)
	if err != nil {
		return nil, err
	}
	return cloneMessage(rec), nil
}

// ByKey returns copies of the account's records opened with key at or
// after since, oldest first.
func (s *Ledger) ByKey(ctx context.Context, account, key string, since time.Time) ([]*record.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("messages by key", err)
	}
	return s.indexed(s.byKey.get(s.byKey.hash2(account, key)), func(rec *record.Message) bool {
		return rec.Account == account && rec.IdempotencyKey == key && !rec.CreatedAt.Before(since)
	}), nil
}

// ByProviderID returns copies of the records provider accepted under its
// message ID id, oldest first.
func (s *Ledger) ByProviderID(ctx context.Context, provider, id string) ([]*record.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("messages by provider ID", err)
	}
	if id == "" {
		return nil, nil
	}
	return s.indexed(s.byProvider.get(s.byProvider.hash(id)), func(rec *record.Message) bool {
		return rec.ProviderMessageID == id && rec.Provider == provider
	}), nil
}

// indexed returns copies of the records an index named that the Ledger
// still keeps and that match, oldest first, each once (a record whose
// vendor ID changed back to an earlier one is named twice). Each is read
// under its shard's lock.
func (s *Ledger) indexed(recs []*record.Message, match func(*record.Message) bool) []*record.Message {
	var out []*record.Message
	for i, rec := range recs {
		if slices.Contains(recs[:i], rec) {
			continue // few records share a key: a scan is enough
		}
		h := s.hashID(rec.ID) // an ID never changes: no lock needed to read it
		sh := s.shard(h)
		sh.mu.Lock()
		if sh.find(h, rec.ID) == rec && match(rec) {
			out = append(out, cloneMessage(rec))
		}
		sh.mu.Unlock()
	}
	slices.SortStableFunc(out, func(a, b *record.Message) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// Stale returns copies of up to limit open records that last moved
// before cutoff, least recently moved first. It reads the shards' indexes
// of their open records, not every record.
func (s *Ledger) Stale(ctx context.Context, cutoff time.Time, limit int) ([]*record.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("stale messages", err)
	}
	var out []*record.Message
	add := func(rec *record.Message) {
		if rec.UpdatedAt.Before(cutoff) {
			out = append(out, cloneMessage(rec))
		}
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for rec := range sh.pending {
			add(rec)
		}
		for _, set := range sh.attempting {
			for rec := range set {
				add(rec)
			}
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b *record.Message) int {
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

func cloneMessage(m *record.Message) *record.Message {
	c := *m
	c.History = slices.Clone(m.History)
	c.Resend = slices.Clone(m.Resend)
	c.Payload = slices.Clone(m.Payload)
	c.Tried = slices.Clone(m.Tried)
	return &c
}

// Interface guard
var _ store.Ledger = (*Ledger)(nil)
