package queuetest

import (
	"context"
	"testing"
	"time"

	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/store"
)

// Setup is what Run needs of a queue for one subtest: a fresh queue, its
// ledger, a funded account, a way into the queue's transactions and a
// clock.
type Setup struct {
	// Queue is the queue under test, not yet running.
	Queue queue.Queue
	// Ledger is the ledger the queue opens its records through.
	Ledger store.Ledger
	// Account names an account whose wallet holds 1000.00 INR (100000
	// minor units, exponent 2), unique to the subtest.
	Account string
	// Begin starts a transaction the queue's OpenTx joins, and returns
	// it with its commit and rollback.
	Begin func(ctx context.Context) (tx any, commit, rollback func(context.Context) error, err error)
	// Now is the queue's clock, at the precision its store keeps
	// (microseconds on PostgreSQL): the suite compares the times it
	// reads back with the ones it wrote.
	Now func() time.Time
	// Advance moves a clock the test controls forward by d and lets the
	// queue see it; nil for a queue on the real clock, for which the
	// suite waits instead (so it keeps its times short).
	Advance func(d time.Duration)
}

// Harness makes a Setup per subtest; the suite calls it once per
// subtest, and the harness stops what it started with t.Cleanup.
type Harness func(t *testing.T) Setup
