package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// PushDevices is an in-memory pushstore.Devices, the push channel's
// device registry, for one process: nothing persists, and processes do
// not share it (use pgstore's PushDevices for that).
//
// Each account's recipients have their devices in a list kept in the
// order Devices answers (the most recently registered first, ties by To
// in byte order), and each account's To names the recipient it is
// registered for, so that registering it again, for the same recipient
// or another, replaces it. A recipient keeps its pushstore.MaxDevices
// first devices in that order: registering one more forgets the one
// registered longest ago, which is the device just registered when its
// RegisteredAt is older than all the others'. Recipients are compared
// byte for byte. RegisteredAt is kept in UTC truncated to the
// microsecond, as a SQL timestamp keeps it, so that memstore and pgstore
// answer alike; the store reads no clock.
//
// Memory: a device is kept until it is unregistered, registered for
// another recipient, or forgotten for a newer one; a recipient holds at
// most pushstore.MaxDevices, and one whose last device goes is dropped
// with it. There is no expiry: an app unregisters a device the push
// service declared gone.
//
// The zero value is an empty registry, ready to use; NewPushDevices
// returns one too. Methods are safe for concurrent use (registrations
// take one mutex, so concurrent ones for a recipient leave its
// MaxDevices newest devices); they copy what they are given and answer
// copies. An ended ctx is its Canceled or DeadlineExceeded error, wrapped,
// with nothing changed.
type PushDevices struct {
	mu sync.RWMutex
	// recipients holds the devices of each account's recipient, in
	// Devices' order; a recipient without devices has no entry.
	recipients map[deviceKey][]pushstore.Device
	// owners holds the recipient each account's To is registered for.
	owners map[deviceKey]string
}

// deviceKey is an account and a recipient, or an account and a To.
type deviceKey struct{ account, name string }

// NewPushDevices returns an empty registry.
func NewPushDevices() *PushDevices { return &PushDevices{} }

// RegisterDevice keeps d for account, as pushstore.Devices documents: a
// device of the account with d's To is replaced, also when it was
// another recipient's; then, when d.Recipient has more than
// pushstore.MaxDevices devices, the one registered longest ago is
// forgotten. store.ErrInvalid, a record.FieldErrors naming the fields,
// when account, d.Recipient or d.To is empty, d.Recipient is longer than
// pushstore.MaxRecipientLen bytes or d.RegisteredAt is zero; nothing
// changes then.
func (s *PushDevices) RegisterDevice(ctx context.Context, account string, d pushstore.Device) error {
	if err := ctx.Err(); err != nil {
		return ctxError("register device", err)
	}
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	switch {
	case d.Recipient == "":
		fe.Add("recipient", "is required")
	case len(d.Recipient) > pushstore.MaxRecipientLen:
		fe.Addf("recipient", "must be at most %d bytes", pushstore.MaxRecipientLen)
	}
	if d.To == "" {
		fe.Add("to", "is required")
	}
	if d.RegisteredAt.IsZero() {
		fe.Add("registered_at", "is required")
	}
	if err := store.InvalidFields(fe); err != nil {
		return fmt.Errorf("memstore: register device: %w", err)
	}
	d.RegisteredAt = d.RegisteredAt.Truncate(time.Microsecond).UTC()

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners == nil {
		s.recipients = make(map[deviceKey][]pushstore.Device)
		s.owners = make(map[deviceKey]string)
	}
	owner := deviceKey{account, d.To}
	if r, ok := s.owners[owner]; ok {
		s.remove(deviceKey{account, r}, d.To)
	}
	s.owners[owner] = d.Recipient
	key := deviceKey{account, d.Recipient}
	list := s.recipients[key]
	i, _ := slices.BinarySearchFunc(list, d, deviceOrder)
	list = slices.Insert(list, i, d)
	if len(list) > pushstore.MaxDevices {
		for _, old := range list[pushstore.MaxDevices:] {
			delete(s.owners, deviceKey{account, old.To})
		}
		list = slices.Delete(list, pushstore.MaxDevices, len(list)) // zeroes the tail
	}
	s.recipients[key] = list
	return nil
}

// deviceOrder is the order of Devices: the most recently registered
// first, ties by To in byte order.
func deviceOrder(a, b pushstore.Device) int {
	if c := b.RegisteredAt.Compare(a.RegisteredAt); c != 0 {
		return c
	}
	return strings.Compare(a.To, b.To)
}

// remove takes the device to off key's list, dropping a list left
// empty. s.mu is held.
func (s *PushDevices) remove(key deviceKey, to string) {
	list := s.recipients[key]
	i := slices.IndexFunc(list, func(d pushstore.Device) bool { return d.To == to })
	if i < 0 {
		return
	}
	if list = slices.Delete(list, i, i+1); len(list) == 0 {
		delete(s.recipients, key)
		return
	}
	s.recipients[key] = list
}

// Devices returns a copy of the devices of the account's recipients,
// read under one lock, as pushstore.Devices documents: grouped by
// recipient in the order of recipients (a repeated name once, at its
// first place), each recipient's most recently registered first (ties by
// To); none is an empty slice and a nil error. More than 10,000 names is
// store.ErrInvalid.
func (s *PushDevices) Devices(ctx context.Context, account string, recipients []string) ([]pushstore.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("devices", err)
	}
	if len(recipients) > pushstore.MaxLookup {
		return nil, fmt.Errorf("memstore: devices: %w",
			store.InvalidField("recipients", fmt.Sprintf("must name at most %d recipients", pushstore.MaxLookup)))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []pushstore.Device{}
	var seen map[string]bool
	if len(recipients) > 1 {
		seen = make(map[string]bool, len(recipients))
	}
	for _, name := range recipients {
		if seen != nil {
			if seen[name] {
				continue
			}
			seen[name] = true
		}
		out = append(out, s.recipients[deviceKey{account, name}]...)
	}
	return out, nil
}

// UnregisterDevice forgets the account's device to, whichever recipient
// it is registered for; store.ErrNotFound when the account has none.
func (s *PushDevices) UnregisterDevice(ctx context.Context, account, to string) error {
	if err := ctx.Err(); err != nil {
		return ctxError("unregister device", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	owner := deviceKey{account, to}
	r, ok := s.owners[owner]
	if !ok {
		return fmt.Errorf("memstore: unregister device: no device of that address: %w", store.ErrNotFound)
	}
	delete(s.owners, owner)
	s.remove(deviceKey{account, r}, to)
	return nil
}

// Interface guard
var _ pushstore.Devices = (*PushDevices)(nil)
