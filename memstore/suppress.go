package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// Suppressions is an in-memory store.Suppressions, for one process; use
// pgstore's to share a list between processes.
//
// Memory: unbounded. Every entry is kept until RemoveSuppression takes it
// off (about 150 bytes an entry): a suppression list must not forget an
// address that opted out, so there is nothing it may drop. ListSuppressions
// sorts the account's entries on each call, O(n log n) for an account of
// n entries.
//
// The zero value is an empty list, ready to use; a Ledger holds one (see
// Ledger.AddSuppression). Methods are safe for concurrent use. An ended
// ctx is its Canceled or DeadlineExceeded error, with nothing changed.
type Suppressions struct {
	// mu is read-locked by the lookup every send makes, so that sends do
	// not queue behind one another.
	mu sync.RWMutex
	// byAccount holds each account's entries by channel and recipient.
	byAccount map[string]map[suppressKey]store.Suppression
}

type suppressKey struct {
	kind record.Kind
	to   string
}

// NewSuppressions returns an empty list.
func NewSuppressions() *Suppressions { return &Suppressions{} }

// AddSuppression puts e on its account's list, as store.Suppressions
// documents: an entry already there keeps its reason and time unless e's
// reason outranks it.
func (s *Suppressions) AddSuppression(ctx context.Context, e store.Suppression) (store.Suppression, error) {
	if err := ctx.Err(); err != nil {
		return store.Suppression{}, ctxError("add suppression", err)
	}
	e, err := storeutil.CheckSuppression(e)
	if err != nil {
		return store.Suppression{}, fmt.Errorf("memstore: add suppression: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAccount == nil {
		s.byAccount = make(map[string]map[suppressKey]store.Suppression)
	}
	m := s.byAccount[e.Account]
	if m == nil {
		m = make(map[suppressKey]store.Suppression)
		s.byAccount[e.Account] = m
	}
	k := suppressKey{e.Kind, e.To}
	if old, ok := m[k]; ok && !e.Reason.Outranks(old.Reason) {
		return old, nil
	}
	m[k] = e
	return e, nil
}

// RemoveSuppression takes the recipient off the account's list, as
// store.Suppressions documents.
func (s *Suppressions) RemoveSuppression(ctx context.Context, account string, kind record.Kind, to string) error {
	if err := ctx.Err(); err != nil {
		return ctxError("remove suppression", err)
	}
	to, err := storeutil.CheckSuppressionKey(account, kind, to)
	if err != nil {
		return fmt.Errorf("memstore: remove suppression: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byAccount[account]
	k := suppressKey{kind, to}
	if _, ok := m[k]; !ok {
		return fmt.Errorf("memstore: suppression of a %s recipient: %w", kind, store.ErrNotFound)
	}
	delete(m, k)
	if len(m) == 0 {
		delete(s.byAccount, account)
	}
	return nil
}

// LookupSuppression answers the account's entry for the recipient, as
// store.Suppressions documents.
func (s *Suppressions) LookupSuppression(ctx context.Context, account string, kind record.Kind, to string) (store.Suppression, bool, error) {
	if err := ctx.Err(); err != nil {
		return store.Suppression{}, false, ctxError("lookup suppression", err)
	}
	to, err := storeutil.CheckSuppressionKey(account, kind, to)
	if err != nil {
		return store.Suppression{}, false, fmt.Errorf("memstore: lookup suppression: %w", err)
	}
	e, ok := s.entry(account, kind, to)
	return e, ok, nil
}

// entry answers the account's entry for the recipient, which the caller
// has checked or which, when it breaks the list's rules, can have none.
func (s *Suppressions) entry(account string, kind record.Kind, to string) (store.Suppression, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.byAccount[account][suppressKey{kind, to}]
	return e, ok
}

// LookupSuppressions answers the account's entries for many recipients
// under one read lock, as store.Suppressions documents.
func (s *Suppressions) LookupSuppressions(ctx context.Context, account string, kind record.Kind, tos []string) ([]store.Suppression, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("lookup suppressions", err)
	}
	keys, err := storeutil.CheckSuppressionKeys(account, kind, tos)
	if err != nil {
		return nil, fmt.Errorf("memstore: lookup suppressions: %w", err)
	}
	out := make([]store.Suppression, len(keys))
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.byAccount[account]
	for i, k := range keys {
		if k != "" {
			out[i] = m[suppressKey{kind, k}]
		}
	}
	return out, nil
}

// ListSuppressions answers a page of the account's list, as
// store.Suppressions documents.
func (s *Suppressions) ListSuppressions(ctx context.Context, account string, q store.SuppressionQuery) ([]store.Suppression, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("list suppressions", err)
	}
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("memstore: list suppressions: %w", err)
	}
	s.mu.RLock()
	out := make([]store.Suppression, 0, len(s.byAccount[account]))
	for k, e := range s.byAccount[account] {
		if q.Kind != "" && k.kind != q.Kind {
			continue
		}
		if (q.AfterKind != "" || q.AfterTo != "") && cmpKey(k, suppressKey{q.AfterKind, q.AfterTo}) <= 0 {
			continue
		}
		out = append(out, e)
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Suppression) int {
		return cmpKey(suppressKey{a.Kind, a.To}, suppressKey{b.Kind, b.To})
	})
	if n := storeutil.PageSize(q); len(out) > n {
		out = out[:n]
	}
	return out, nil
}

func cmpKey(a, b suppressKey) int {
	if c := cmp.Compare(a.kind, b.kind); c != 0 {
		return c
	}
	return cmp.Compare(a.to, b.to)
}

// AddSuppression adds to the Ledger's suppression list, which the
// Notifier enforces and feeds with bounces; see Suppressions.
func (s *Ledger) AddSuppression(ctx context.Context, e store.Suppression) (store.Suppression, error) {
	return s.suppressions.AddSuppression(ctx, e)
}

// RemoveSuppression removes from the Ledger's suppression list; see
// Suppressions.
func (s *Ledger) RemoveSuppression(ctx context.Context, account string, kind record.Kind, to string) error {
	return s.suppressions.RemoveSuppression(ctx, account, kind, to)
}

// LookupSuppression reads the Ledger's suppression list; see
// Suppressions.
func (s *Ledger) LookupSuppression(ctx context.Context, account string, kind record.Kind, to string) (store.Suppression, bool, error) {
	return s.suppressions.LookupSuppression(ctx, account, kind, to)
}

// LookupSuppressions reads the Ledger's suppression list for many
// recipients; see Suppressions.
func (s *Ledger) LookupSuppressions(ctx context.Context, account string, kind record.Kind, tos []string) ([]store.Suppression, error) {
	return s.suppressions.LookupSuppressions(ctx, account, kind, tos)
}

// ListSuppressions pages through the Ledger's suppression list; see
// Suppressions.
func (s *Ledger) ListSuppressions(ctx context.Context, account string, q store.SuppressionQuery) ([]store.Suppression, error) {
	return s.suppressions.ListSuppressions(ctx, account, q)
}

var (
	_ store.Suppressions = (*Suppressions)(nil)
	_ store.Suppressions = (*Ledger)(nil)
)

// OpenUnlisted reads the Ledger's list, then opens m when no entry
// stops it, as store.Ledger documents.
//
// For a record every send opens (an account, a channel with a list) it
// reads the entry directly, without checking to's shape first: the list
// holds no recipient its rules refuse (AddSuppression checks them), so
// such a recipient is found on it by neither path, and a send is spared
// the check and two calls through the store.Ledger interface (560 of a
// send's 21,600 instructions, docs/performance.md). Any other record
// takes storeutil.OpenUnlisted, whose refusals it answers.
func (s *Ledger) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	if m == nil || m.Account == "" || !store.SuppressibleKind(m.Kind) {
		return storeutil.OpenUnlisted(ctx, s, m, to, stopping)
	}
	if err := storeutil.CheckStopping(stopping); err != nil {
		return record.Balance{}, store.Suppression{}, err
	}
	if err := ctx.Err(); err != nil {
		return record.Balance{}, store.Suppression{}, ctxError("open message", err)
	}
	if e, found := s.suppressions.entry(m.Account, m.Kind, to); found && slices.Contains(stopping, e.Reason) {
		return record.Balance{}, e, nil
	}
	b, err := s.Open(ctx, m)
	return b, store.Suppression{}, err
}
