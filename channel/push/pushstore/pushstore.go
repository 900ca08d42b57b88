// Package pushstore is the storage contract of the push channel's device
// registry, beside package push as verifystore is beside verify: the
// Device a store keeps (a Web Push subscription or an FCM token
// registered for one of an account's recipients) and the Devices a store
// implements.
//
// It imports only the standard library and package store (whose
// sentinels its errors are), so that a store implements it without
// importing the push channel or the notify package: memstore and pgstore
// do. storetest.RunPushDevices is its conformance suite.
package pushstore

import (
	"context"
	"time"
)

// MaxDevices is the most devices one recipient has registered: a store
// that registers one more forgets the recipient's least recently
// registered device, so that a recipient's list stays bounded however
// often an app registers.
const MaxDevices = 20

// MaxLookup is the most recipients one Devices call names: a bulk push's
// (notify.MaxBulkRecipients).
const MaxLookup = 10000

// MaxRecipientLen is the longest recipient name, in bytes.
const MaxRecipientLen = 200

// Device is one push address registered for a recipient.
type Device struct {
	// Recipient is the app's name of the person the device belongs to:
	// its user ID, an e-mail address, a phone number; 1 to
	// MaxRecipientLen bytes, compared byte for byte.
	Recipient string
	// To is the device's address in the push channel's canonical form
	// (push.Recipient): a Web Push endpoint or an FCM token. An account
	// has at most one device of a To.
	To string
	// P256dh and Auth are a Web Push subscription's keys, as the browser
	// gave them; empty for an FCM token.
	P256dh, Auth string
	// RegisteredAt is when the device was last registered, as the
	// caller gave it (never the store's clock); a store keeps it in UTC
	// to the microsecond. Not zero.
	RegisteredAt time.Time
}

// Devices keeps the devices each account registered for its recipients,
// shared by every instance that uses the same store. Methods are safe for
// concurrent use; they copy what they are given and return copies.
// Accounts never see each other's devices.
type Devices interface {
	// RegisterDevice keeps d for account. A device of the account with
	// the same To is replaced (the browser renewed its keys, or the
	// device passed to another recipient); when d.Recipient then has
	// more than MaxDevices devices, those after the first MaxDevices in
	// Devices' order are forgotten: the one registered longest ago, which
	// is d itself when its RegisteredAt is older than all the others'. store.ErrInvalid when account, d.Recipient or d.To is
	// empty, d.Recipient is longer than MaxRecipientLen or
	// d.RegisteredAt is zero, with nothing changed.
	RegisterDevice(ctx context.Context, account string, d Device) error

	// Devices returns the devices of the account's recipients in one
	// read (pgstore in one statement, memstore under one lock): grouped
	// by recipient in the order of recipients, a name given twice
	// counting once, at its first place; each recipient's most recently
	// registered first (ties by To, in byte order). A name without
	// devices adds none, and so does a name the store cannot hold (it
	// has none). None at all is an empty slice and a nil error, also for
	// an empty recipients. len(recipients) is at most MaxLookup
	// (notify.MaxBulkRecipients, a bulk push's bound; a repeated name
	// counts each time): more is store.ErrInvalid.
	Devices(ctx context.Context, account string, recipients []string) ([]Device, error)

	// UnregisterDevice forgets the account's device to, whoever it is
	// registered for: store.ErrNotFound when there is none.
	UnregisterDevice(ctx context.Context, account, to string) error
}
