package storetest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storetest"
)

// simplePushDevices is a plain pushstore.Devices: one mutex, one list of
// every account's devices, scans. With no defect it must pass
// RunPushDevices; each defect must make it fail.
type simplePushDevices struct {
	defect string
	mu     sync.Mutex
	all    []simpleDevice // in the order registered
	// racyWaiting, for the racy defect, is closed by the next
	// registration to begin: the one under way waits for it.
	racyWaiting chan struct{}
}

// racyWait bounds how long a registration of the racy defect waits for
// the next to begin: one that has no successor (every call of a
// sequential test) goes on after it.
const racyWait = 20 * time.Millisecond

type simpleDevice struct {
	account string
	pushstore.Device
}

// same reports whether a and b name the same recipient.
func (s *simplePushDevices) same(a, b string) bool {
	if s.defect == "folds-case" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// ofAccount reports whether a device kept for kept is one of account's.
func (s *simplePushDevices) ofAccount(kept, account string) bool {
	return kept == account || s.defect == "global-to"
}

// before reports whether a comes before b in Devices' order.
func (s *simplePushDevices) before(a, b pushstore.Device) bool {
	if c := b.RegisteredAt.Compare(a.RegisteredAt); c != 0 {
		return c < 0
	}
	if s.defect == "ties-fold-case" {
		return strings.ToLower(a.To) < strings.ToLower(b.To)
	}
	return a.To < b.To
}

func (s *simplePushDevices) RegisterDevice(ctx context.Context, account string, d pushstore.Device) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.defect == "partial-invalid" {
		s.forget(account, d.To)
	}
	n := len(d.Recipient)
	if s.defect == "counts-runes" {
		n = utf8.RuneCountInString(d.Recipient)
	}
	switch {
	case account == "" || d.Recipient == "" || n > pushstore.MaxRecipientLen:
		return store.InvalidField("recipient", "1 to 200 bytes, of a named account")
	case d.To == "" && s.defect != "accepts-empty-to":
		return store.InvalidField("to", "is required")
	case d.RegisteredAt.IsZero() && s.defect != "accepts-zero-time":
		return store.InvalidField("registered_at", "is required")
	}
	switch s.defect {
	case "millis":
		d.RegisteredAt = d.RegisteredAt.Truncate(time.Millisecond).UTC()
	case "keeps-zone":
		d.RegisteredAt = d.RegisteredAt.Truncate(time.Microsecond)
	default:
		d.RegisteredAt = d.RegisteredAt.Truncate(time.Microsecond).UTC()
	}
	if s.defect == "racy" {
		s.racyOverwrite()
	}
	replaced := false
	for i := range s.all {
		e := &s.all[i]
		if !s.ofAccount(e.account, account) || e.To != d.To {
			continue
		}
		switch s.defect {
		case "replace-keeps-keys":
			e.Recipient, e.RegisteredAt = d.Recipient, d.RegisteredAt
			replaced = true
		case "stays-with-recipient":
			if e.Recipient == d.Recipient {
				e.Device = d
				replaced = true
			}
		default:
			e.Device = d
			replaced = true
		}
	}
	if !replaced {
		s.all = append(s.all, simpleDevice{account, d})
	}
	s.evict(account, d, s.all)
	return nil
}

// racyOverwrite is the racy defect: a registration that reads the list,
// lets go of it, and writes back what it read, as a store would whose
// statement reads its rows without a lock and writes them all. Each
// waits, unlocked, for the next registration to begin, so that under
// concurrent calls every one of them erases what the one before it
// wrote, whatever the scheduler does: the newest devices go missing,
// which no later registration can restore. Called with s.mu held.
func (s *simplePushDevices) racyOverwrite() {
	if s.racyWaiting != nil {
		close(s.racyWaiting) // the registration before this one goes on
	}
	next := make(chan struct{})
	s.racyWaiting = next
	seen := slices.Clone(s.all)
	s.mu.Unlock()
	select {
	case <-next:
	case <-time.After(racyWait):
	}
	s.mu.Lock()
	if s.racyWaiting == next {
		s.racyWaiting = nil // no successor began: nothing to close
	}
	s.all = seen
}

// evict forgets the devices of d's recipient beyond MaxDevices, of those
// in seen.
func (s *simplePushDevices) evict(account string, d pushstore.Device, seen []simpleDevice) {
	if s.defect == "no-evict" {
		return
	}
	var mine []simpleDevice // in the order registered
	for _, e := range seen {
		if s.ofAccount(e.account, account) && (s.same(e.Recipient, d.Recipient) || s.defect == "evicts-across-recipients") {
			mine = append(mine, e)
		}
	}
	if len(mine) <= pushstore.MaxDevices {
		return
	}
	if s.defect != "evicts-first-registered" {
		slices.SortStableFunc(mine, func(a, b simpleDevice) int {
			switch {
			case s.before(a.Device, b.Device):
				return 1 // oldest first
			case s.before(b.Device, a.Device):
				return -1
			}
			return 0
		})
	}
	drop := map[string]bool{}
	for _, e := range mine {
		if len(drop) == len(mine)-pushstore.MaxDevices {
			break
		}
		if s.defect == "keeps-new" && e.To == d.To {
			continue
		}
		drop[e.To] = true
	}
	s.all = slices.DeleteFunc(s.all, func(e simpleDevice) bool { return s.ofAccount(e.account, account) && drop[e.To] })
}

// forget deletes account's device to, and reports whether there was one.
func (s *simplePushDevices) forget(account, to string) bool {
	n := len(s.all)
	s.all = slices.DeleteFunc(s.all, func(e simpleDevice) bool {
		return (s.ofAccount(e.account, account) || s.defect == "unregister-any-account") && e.To == to
	})
	return len(s.all) < n
}

func (s *simplePushDevices) Devices(ctx context.Context, account string, recipients []string) ([]pushstore.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(recipients) > pushstore.MaxLookup && s.defect != "no-names-bound" {
		return nil, store.InvalidField("recipients", "at most 10,000")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []pushstore.Device
	if s.defect != "nil-none" {
		out = []pushstore.Device{}
	}
	names := recipients
	if s.defect == "names-sorted" {
		names = slices.Sorted(slices.Values(recipients))
	}
	done := map[string]bool{}
	for _, name := range names {
		if done[name] && s.defect != "repeats-names" {
			continue
		}
		done[name] = true
		var mine []pushstore.Device
		for _, e := range s.all {
			if s.ofAccount(e.account, account) && s.same(e.Recipient, name) {
				mine = append(mine, e.Device)
			}
		}
		if s.defect != "registration-order" {
			slices.SortStableFunc(mine, func(a, b pushstore.Device) int {
				switch {
				case s.before(a, b):
					return -1
				case s.before(b, a):
					return 1
				}
				return 0
			})
		}
		out = append(out, mine...)
	}
	return out, nil
}

func (s *simplePushDevices) UnregisterDevice(ctx context.Context, account, to string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.forget(account, to) && s.defect != "unregister-twice" {
		return fmt.Errorf("no device %q: %w", to, store.ErrNotFound)
	}
	return nil
}

func runPushSuite(t *testing.T, defect string) {
	storetest.RunPushDevices(t, storetest.PushDevicesHarness{
		New: func(t *testing.T) pushstore.Devices {
			if defect == "shares" {
				return &sharingPushDevices{}
			}
			return &simplePushDevices{defect: defect}
		},
	})
}

// sharingPushDevices keeps each recipient's devices in a slice, in
// Devices' order, and answers that slice itself: a reader that changes
// what it was given changes the store.
type sharingPushDevices struct {
	mu sync.Mutex
	m  map[[2]string][]pushstore.Device
}

func (s *sharingPushDevices) RegisterDevice(ctx context.Context, account string, d pushstore.Device) error {
	inner := &simplePushDevices{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, l := range s.m {
		if k[0] == account {
			for _, e := range l {
				inner.all = append(inner.all, simpleDevice{account, e})
			}
		}
	}
	if err := inner.RegisterDevice(ctx, account, d); err != nil {
		return err
	}
	if s.m == nil {
		s.m = map[[2]string][]pushstore.Device{}
	}
	for k := range s.m {
		if k[0] == account {
			delete(s.m, k)
		}
	}
	for _, e := range inner.all {
		k := [2]string{account, e.Recipient}
		s.m[k] = append(s.m[k], e.Device)
	}
	for k, l := range s.m {
		slices.SortFunc(l, func(a, b pushstore.Device) int {
			if c := b.RegisteredAt.Compare(a.RegisteredAt); c != 0 {
				return c
			}
			return strings.Compare(a.To, b.To)
		})
		s.m[k] = slices.Grow(l, 4)
	}
	return nil
}

// Devices answers a recipient's own slice when asked for one.
func (s *sharingPushDevices) Devices(ctx context.Context, account string, recipients []string) ([]pushstore.Device, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(recipients) > 10000 {
		return nil, store.InvalidField("recipients", "at most 10,000")
	}
	if len(recipients) == 1 {
		if l := s.m[[2]string{account, recipients[0]}]; l != nil {
			return l, nil
		}
	}
	out := []pushstore.Device{}
	done := map[string]bool{}
	for _, name := range recipients {
		if !done[name] {
			done[name] = true
			out = append(out, s.m[[2]string{account, name}]...)
		}
	}
	return out, nil
}

func (s *sharingPushDevices) UnregisterDevice(ctx context.Context, account, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, l := range s.m {
		if k[0] != account {
			continue
		}
		if i := slices.IndexFunc(l, func(d pushstore.Device) bool { return d.To == to }); i >= 0 {
			s.m[k] = slices.Delete(l, i, i+1)
			return nil
		}
	}
	return fmt.Errorf("no device %q: %w", to, store.ErrNotFound)
}

// TestSimplePushDevices shows that a plain, correct store passes the
// suite.
func TestSimplePushDevices(t *testing.T) {
	runPushSuite(t, "")
}

// TestPushFlawedHelper runs the suite against flawed stores when started
// by TestPushSuiteCatchesDefects in a child process; its failure is
// expected.
func TestPushFlawedHelper(t *testing.T) {
	runPushSuite(t, childDefect(t, "STORETEST_PUSH_DEFECT"))
}

func TestPushSuiteCatchesDefects(t *testing.T) {
	wantDefectsCaught(t, "TestPushFlawedHelper", "STORETEST_PUSH_DEFECT", []flaw{
		{"millis", "RoundTrip"},
		{"keeps-zone", "RoundTrip"},
		{"registration-order", "Order"},
		{"ties-fold-case", "Order"},
		{"replace-keeps-keys", "Replace"},
		{"stays-with-recipient", "Replace"},
		{"no-evict", "Evict"},
		{"evicts-first-registered", "Evict"},
		{"keeps-new", "Evict"},
		{"evicts-across-recipients", "Evict"},
		{"global-to", "Apart"},
		{"folds-case", "Apart"},
		{"unregister-any-account", "Unregister"},
		{"unregister-twice", "Unregister"},
		{"accepts-empty-to", "Invalid"},
		{"accepts-zero-time", "Invalid"},
		{"counts-runes", "Invalid"},
		{"partial-invalid", "Invalid"},
		{"nil-none", "None"},
		{"names-sorted", "ManyNames"},
		{"repeats-names", "ManyNames"},
		{"no-names-bound", "NamesBound"},
		{"racy", "Concurrent"},
		{"shares", "CallersCannotChangeStore"},
	})
}
