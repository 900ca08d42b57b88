package notifytest

import (
	"context"
	"sync"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// SentGate is a store.Ledger whose first move into sent waits until
// Release: the moment when the vendor has accepted a message, and may
// already report on it, but the Notifier has not recorded its vendor ID.
// Authors of providers with delivery-report webhooks use it to test that
// a report arriving then is answered "retry later" (notify.Report's
// Unavailable, 503 at a webhook), not acknowledged and lost:
//
//	gate := notifytest.NewSentGate(ledger)
//	n, _ := notify.New(accounts, gate, ...)
//	go n.Send(ctx, req)
//	vendorID := <-gate.Held() // the send waits in its move to sent
//	// ... post the vendor's report of vendorID: expect a 503 ...
//	gate.Release()            // the move lands; a report again applies
//
// Only the first move into sent waits; every other call goes straight to
// the Ledger it wraps. It is safe for concurrent use.
type SentGate struct {
	store.Ledger
	held        chan string
	release     chan struct{}
	once        sync.Once
	releaseOnce sync.Once
}

// NewSentGate returns a SentGate over l. l may also be set later, through
// the Ledger field, before the first call.
func NewSentGate(l store.Ledger) *SentGate {
	return &SentGate{Ledger: l, held: make(chan string, 1), release: make(chan struct{})}
}

// Held delivers the vendor ID of the held move once it starts waiting.
func (g *SentGate) Held() <-chan string { return g.held }

// Release lets the held move (and any later one) through. Calling it
// again does nothing, so a test may also call it in a cleanup.
func (g *SentGate) Release() { g.releaseOnce.Do(func() { close(g.release) }) }

// Move holds the first move into sent until Release (or until ctx ends:
// then it fails, as a store that timed out), then moves it.
func (g *SentGate) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	first := false
	if u.State == record.StateSent {
		g.once.Do(func() { first = true })
	}
	if first {
		g.held <- u.ProviderMessageID
		select {
		case <-g.release:
		case <-ctx.Done(): // a test that never releases does not hang the send for good
			return store.Moved{}, ctx.Err()
		}
	}
	return g.Ledger.Move(ctx, account, id, u)
}
