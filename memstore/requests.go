package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/notifykit/notify/store"
)

// requestRecords keeps the request records of a Ledger (OpenRequest,
// RequestByKey), forgotten as its settled message records are: in
// generations of capacity/2 records (WithMessageCapacity), the previous
// one dropped whole when the current one fills, so that it keeps the
// most recent capacity/2 records at least and capacity at most.
type requestRecords struct {
	mu       sync.Mutex
	cur, old requestGen // old is the previous generation
}

// requestGen is one generation of request records.
type requestGen struct {
	byKey map[idemKey][]*store.RequestRecord // oldest first
	ids   map[string]struct{}
}

// OpenRequest writes r, as store.Ledger documents.
func (s *Ledger) OpenRequest(ctx context.Context, r *store.RequestRecord) error {
	if err := ctx.Err(); err != nil {
		return ctxError("open request", err)
	}
	if r == nil || r.ID == "" || r.Account == "" || r.IdempotencyKey == "" {
		return fmt.Errorf("memstore: a request record needs an ID, an account and a key: %w", store.ErrInvalid)
	}
	rr := &s.requests
	rr.mu.Lock()
	defer rr.mu.Unlock()
	_, inCur := rr.cur.ids[r.ID]
	if _, inOld := rr.old.ids[r.ID]; inCur || inOld {
		return fmt.Errorf("memstore: request %s is recorded already: %w", r.ID, store.ErrConflict)
	}
	if rr.cur.ids == nil || int64(len(rr.cur.ids)) >= s.genCap {
		rr.old = rr.cur
		rr.cur = requestGen{byKey: make(map[idemKey][]*store.RequestRecord), ids: make(map[string]struct{})}
	}
	c := *r
	c.Parts = slices.Clone(r.Parts)
	k := idemKey{r.Account, r.IdempotencyKey}
	rr.cur.byKey[k] = append(rr.cur.byKey[k], &c)
	rr.cur.ids[r.ID] = struct{}{}
	return nil
}

// RequestByKey returns a copy of the account's newest request record
// with key opened at or after since, or ErrNotFound.
func (s *Ledger) RequestByKey(ctx context.Context, account, key string, since time.Time) (*store.RequestRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("request by key", err)
	}
	rr := &s.requests
	rr.mu.Lock()
	defer rr.mu.Unlock()
	k := idemKey{account, key}
	for _, recs := range [2][]*store.RequestRecord{rr.cur.byKey[k], rr.old.byKey[k]} { // newest first
		for i := len(recs) - 1; i >= 0; i-- {
			if !recs[i].CreatedAt.Before(since) {
				c := *recs[i]
				c.Parts = slices.Clone(recs[i].Parts)
				return &c, nil
			}
		}
	}
	return nil, fmt.Errorf("memstore: request record of key %q: %w", key, store.ErrNotFound)
}
