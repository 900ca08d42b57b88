package memqueue

import (
	"context"
	"fmt"
	"sync"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Tx is a transaction of a Queue, which OpenTx joins: it holds the
// records opened in it until Commit opens them, with their debits and
// jobs, in order. It stands in for the caller's database transaction in
// development and tests.
type Tx struct {
	q    *Queue
	mu   sync.Mutex
	recs []*record.Message
	done bool
}

// Begin starts a transaction.
func (q *Queue) Begin() *Tx { return &Tx{q: q} }

// Commit opens the transaction's records in the order they were added,
// each with its debit and job. Memory has no atomicity across records: a
// record the ledger refuses (a short wallet) stops the commit with its
// error, the records before it stand and those after it are dropped.
// Committing an ended transaction is store.ErrInvalid.
func (t *Tx) Commit(ctx context.Context) error {
	recs, err := t.end()
	if err != nil {
		return err
	}
	for _, m := range recs {
		if _, err := t.q.Open(ctx, m); err != nil {
			return fmt.Errorf("memqueue: commit: message %s: %w", m.ID, err)
		}
	}
	return nil
}

// Rollback drops the transaction's records: nothing of them is charged,
// written or run. Rolling back an ended transaction is store.ErrInvalid.
func (t *Tx) Rollback(context.Context) error {
	_, err := t.end()
	return err
}

// end ends the transaction and returns its records.
func (t *Tx) end() ([]*record.Message, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, fmt.Errorf("memqueue: %w: the transaction has ended", store.ErrInvalid)
	}
	t.done = true
	recs := t.recs
	t.recs = nil
	return recs, nil
}
