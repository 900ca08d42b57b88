package memstore

import (
	"context"
	"sync"

	"github.com/notifykit/notify"
)

// DefaultDeliveryLogCapacity is the number of receipts NewDeliveryLog keeps
// when given no capacity.
const DefaultDeliveryLogCapacity = 10000

// DeliveryLog is an in-memory notify.DeliveryLog that keeps the most
// recent receipts, up to its capacity: a ring of receipts and an index by
// account and message ID. Recording past the capacity forgets the oldest
// receipt, so memory stays flat however many messages are sent. It is safe
// for concurrent use and retains the receipts it records, which callers
// must not modify afterwards.
type DeliveryLog struct {
	mu   sync.Mutex
	ring []logSlot
	next int
	// index maps keys to ring slots. It holds at most len(ring) keys, but
	// a Go map's deletes leave tombstones, and under steady churn it grows
	// to several times the size its keys need (golang/go#70886). So every
	// few turns of the ring it is rebuilt from the ring: one pass over the
	// capacity per rebuildTurns*capacity records.
	index map[logKey]int
	turns int // completed turns of the ring since the index was built
}

// rebuildTurns is how many turns of the ring an index serves before it is
// rebuilt: the Go 1.26 map first grows after about eight.
const rebuildTurns = 4

type logKey struct{ account, messageID string }

type logSlot struct {
	key     logKey
	receipt *notify.Receipt
}

// NewDeliveryLog returns a log that keeps the last capacity receipts;
// capacity <= 0 means DefaultDeliveryLogCapacity.
func NewDeliveryLog(capacity int) *DeliveryLog {
	if capacity <= 0 {
		capacity = DefaultDeliveryLogCapacity
	}
	return &DeliveryLog{ring: make([]logSlot, capacity), index: make(map[logKey]int, capacity)}
}

// Record keeps r, forgetting the oldest receipt if the log is full. A
// receipt with the account and message ID of one still kept replaces it.
// A nil receipt, or one without an account or message ID, is
// InvalidArgument.
func (l *DeliveryLog) Record(ctx context.Context, r *notify.Receipt) error {
	if err := ctx.Err(); err != nil {
		return ctxError("record", err)
	}
	if r == nil || r.Account == "" || r.MessageID == "" {
		return notify.Errorf(notify.CodeInvalidArgument, "memstore: record: a receipt needs an account and a message ID")
	}
	k := logKey{r.Account, r.MessageID}
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.index[k]; ok {
		l.ring[i].receipt = r
		return nil
	}
	slot := &l.ring[l.next]
	if slot.receipt != nil {
		delete(l.index, slot.key)
	}
	*slot = logSlot{key: k, receipt: r}
	l.index[k] = l.next
	l.next++
	if l.next == len(l.ring) {
		l.next = 0
		if l.turns++; l.turns == rebuildTurns {
			l.rebuildIndex()
		}
	}
	return nil
}

// rebuildIndex replaces the index by a fresh map of the ring's keys.
func (l *DeliveryLog) rebuildIndex() {
	index := make(map[logKey]int, len(l.ring))
	for i, s := range l.ring {
		if s.receipt != nil {
			index[s.key] = i
		}
	}
	l.index, l.turns = index, 0
}

// Receipt returns the kept receipt of the account's message, or NotFound
// (never recorded, recorded for another account, or forgotten).
func (l *DeliveryLog) Receipt(ctx context.Context, account, messageID string) (*notify.Receipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("receipt", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.index[logKey{account, messageID}]; ok {
		return l.ring[i].receipt, nil
	}
	return nil, notify.Errorf(notify.CodeNotFound, "memstore: no receipt of message %q for account %q", messageID, account)
}

// Len returns the number of receipts kept, at most the capacity.
func (l *DeliveryLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.index)
}

// Interface guards
var _ notify.DeliveryLog = (*DeliveryLog)(nil)
