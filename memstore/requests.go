package memstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/notifykit/notify/store"
)

// requestRecords keeps the request records of a Ledger (OpenRequest,
// RequestByKey): about as many as the store keeps settled message
// records, forgetting the oldest first.
type requestRecords struct {
	mu    sync.Mutex
	byKey map[idemKey][]*store.RequestRecord // oldest first
	ids   map[string]struct{}
	order []idemKey // the key of each record kept, oldest first
	head  int
	// deletes counts the records forgotten since the maps were built
	// (see churned).
	deletes int
}

// OpenRequest writes r, as store.Ledger documents.
func (s *Ledger) OpenRequest(ctx context.Context, r *store.RequestRecord) error {
	if err := ctx.Err(); err != nil {
		return ctxError("open request", err)
	}
	if r == nil || r.ID == "" || r.Account == "" || r.IdempotencyKey == "" {
		return store.Errorf(store.ErrInvalid, "memstore: a request record needs an ID, an account and a key")
	}
	rr := &s.requests
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.byKey == nil {
		rr.byKey = make(map[idemKey][]*store.RequestRecord)
		rr.ids = make(map[string]struct{})
	}
	if _, dup := rr.ids[r.ID]; dup {
		return store.Errorf(store.ErrConflict, "memstore: request %s is recorded already", r.ID)
	}
	c := *r
	c.Parts = slices.Clone(r.Parts)
	k := idemKey{r.Account, r.IdempotencyKey}
	rr.byKey[k] = append(rr.byKey[k], &c)
	rr.ids[r.ID] = struct{}{}
	rr.order = append(rr.order, k)
	if limit := s.shardCap * messageShards; len(rr.order)-rr.head > limit {
		rr.forgetOldest()
	}
	return nil
}

// forgetOldest drops the oldest record kept. Called with mu held.
func (rr *requestRecords) forgetOldest() {
	k := rr.order[rr.head]
	rr.head++
	recs := rr.byKey[k]
	delete(rr.ids, recs[0].ID)
	if len(recs) == 1 {
		delete(rr.byKey, k)
	} else {
		recs[0] = nil // the slice's array must not keep the record alive
		rr.byKey[k] = recs[1:]
	}
	if rr.deletes++; churned(rr.deletes, len(rr.ids)) {
		rr.ids, rr.byKey, rr.deletes = rebuilt(rr.ids), rebuilt(rr.byKey), 0
	}
	if rr.head > len(rr.order)/2 { // compact, so the queue does not grow
		rr.order = slices.Delete(rr.order, 0, rr.head)
		rr.head = 0
	}
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
	recs := rr.byKey[idemKey{account, key}]
	for i := len(recs) - 1; i >= 0; i-- {
		if !recs[i].CreatedAt.Before(since) {
			c := *recs[i]
			c.Parts = slices.Clone(recs[i].Parts)
			return &c, nil
		}
	}
	return nil, store.Errorf(store.ErrNotFound, "memstore: request record of key %q", key)
}
