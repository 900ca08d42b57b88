package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// pushDeviceQueries are the statements of PushDevices; see
// buildPushDeviceQueries.
type pushDeviceQueries struct {
	lock, register, devices, unregister string
}

// stateDeadlock is deadlock_detected, which RegisterDevice repeats.
const stateDeadlock = "40P01"

// registerRetries bounds the repeats of a registration the server chose
// as a deadlock's victim.
const registerRetries = 3

func buildPushDeviceQueries(x func(string) string) pushDeviceQueries {
	return pushDeviceQueries{
		// lock serialises the registrations of a recipient: it comes
		// first in their batch, so the register after it, a statement of
		// its own, takes its snapshot once the registration before it
		// has committed.
		lock: `SELECT pg_advisory_xact_lock($1)`,

		// register upserts the device ($2 the hash of its To $3) and
		// deletes the recipient's devices beyond the first $8 in
		// Devices' order, in one statement: listed is the recipient's
		// list as it will stand (its devices but this one, and this one
		// as registered), beyond what of it is forgotten. When the
		// device itself is beyond (registered longer ago than all $8
		// others), it is not inserted, and a row of its To, the
		// recipient's or another's, is deleted. The DELETE re-checks the
		// recipient on each row it deletes, so a device that another
		// recipient's registration took meanwhile is left to it.
		register: x(`WITH listed AS (
	SELECT to_hash, device_to, registered_at FROM {{s}}{{p}}push_devices
	WHERE account = $1 AND recipient = $4 AND to_hash <> $2
	UNION ALL
	SELECT $2::bytea, $3::text COLLATE "C", $7::timestamptz
), beyond AS (
	SELECT to_hash FROM listed ORDER BY registered_at DESC, device_to COLLATE "C" OFFSET $8
), up AS (
	INSERT INTO {{s}}{{p}}push_devices AS d (account, to_hash, device_to, recipient, p256dh, auth, registered_at)
	SELECT $1, $2, $3, $4, $5, $6, $7
	WHERE NOT EXISTS (SELECT 1 FROM beyond WHERE to_hash = $2)
	ON CONFLICT (account, to_hash) DO UPDATE SET recipient = EXCLUDED.recipient,
		p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, registered_at = EXCLUDED.registered_at
)
DELETE FROM {{s}}{{p}}push_devices AS d USING beyond
WHERE d.account = $1 AND d.to_hash = beyond.to_hash AND (d.recipient = $4 OR d.to_hash = $2)`),

		// devices reads the devices of the recipients $2 (distinct
		// names), grouped in their order: a probe of the index
		// (account, recipient, registered_at DESC) for each name, then
		// one sort of the rows found by the name's place, time and To.
		// (A join with the names' ordinals, not array_position, whose
		// scan of the array for every row found would make 10,000 names
		// quadratic.)
		devices: x(`SELECT d.recipient, d.device_to, d.p256dh, d.auth, d.registered_at
FROM unnest($2::text[]) WITH ORDINALITY AS n(recipient, place)
JOIN {{s}}{{p}}push_devices AS d ON d.account = $1 AND d.recipient = n.recipient
ORDER BY n.place, d.registered_at DESC, d.device_to COLLATE "C"`),

		unregister: x(`DELETE FROM {{s}}{{p}}push_devices WHERE account = $1 AND to_hash = $2`),
	}
}

// PushDevices is a pushstore.Devices kept in PostgreSQL: the push
// channel's device registry (the Web Push subscriptions and FCM tokens
// each account registered for its recipients), shared by every instance
// that uses the database, in the table of migration 0024. Make one with
// Store.PushDevices.
//
// A device is one row, keyed by its account and the SHA-256 of its To
// (an FCM token may be longer than an index entry holds), its To kept
// too, as given; its recipient is compared byte for byte and its
// RegisteredAt kept in UTC at the microsecond, the caller's time and
// never the database's. Rows are kept until unregistered or forgotten
// for a newer device of their recipient: nothing deletes them on a
// timer.
//
// RegisterDevice is one round trip: a batch (one implicit transaction)
// that takes a transaction-scoped advisory lock of the account's
// recipient, then, in one statement whose snapshot sees every
// registration of the recipient before it, upserts the device and
// deletes the recipient's devices beyond pushstore.MaxDevices. So
// registrations of one recipient from any number of instances are
// serialised, and each leaves at most MaxDevices, its newest; a device
// only ever joins a recipient's list under that recipient's lock. Devices
// is one SELECT, of an index probe for each recipient however many it
// names, UnregisterDevice one DELETE by primary key.
// Every method may be repeated after a lost connection (a registration
// is an upsert; a repeated removal of a row gone is store.ErrNotFound),
// and RegisterDevice is repeated when the server chose it as a deadlock's
// victim (two registrations that each move a device from the other's
// full recipient). Methods are safe for concurrent use; errors are as
// Store documents.
type PushDevices struct {
	s *Store
}

// PushDevices returns the Store's pushstore.Devices. It holds no state of
// its own and costs nothing to make; the table comes with Migrate.
func (s *Store) PushDevices() *PushDevices {
	return &PushDevices{s: s}
}

// RegisterDevice keeps d for account, as pushstore.Devices documents: a
// device of the account with d's To is replaced, also when it was
// another recipient's; then the recipient keeps its pushstore.MaxDevices
// most recently registered devices (ties by To), forgetting the rest,
// which is d itself when it was registered longer ago than all the
// others. store.ErrInvalid, a record.FieldErrors naming the fields, when
// account, d.Recipient or d.To is empty, d.Recipient is longer than
// pushstore.MaxRecipientLen bytes, d.RegisteredAt is zero, or a text is
// not UTF-8 or holds the NUL character (which a text column cannot
// keep); nothing changes then.
func (p *PushDevices) RegisterDevice(ctx context.Context, account string, d pushstore.Device) error {
	const op = "register device"
	var fe record.FieldErrors
	text := func(field, value string, required bool) {
		switch {
		case required && value == "":
			fe.Add(field, "is required")
		case !storable(value):
			fe.Add(field, "must be UTF-8 without the NUL character")
		}
	}
	text("account", account, true)
	text("recipient", d.Recipient, true)
	if len(d.Recipient) > pushstore.MaxRecipientLen {
		fe.Addf("recipient", "must be at most %d bytes", pushstore.MaxRecipientLen)
	}
	text("to", d.To, true)
	text("p256dh", d.P256dh, false)
	text("auth", d.Auth, false)
	if d.RegisteredAt.IsZero() {
		fe.Add("registered_at", "is required")
	}
	if err := store.InvalidFields(fe); err != nil {
		return fmt.Errorf("pgstore: %s: %w", op, err)
	}
	s := p.s
	hash := sha256.Sum256([]byte(d.To))
	lock := s.pushDeviceLock(account, d.Recipient)
	var err error
	for try := 0; ; try++ {
		err = s.do(ctx, repeatable, func() error {
			b := &pgx.Batch{}
			b.Queue(s.q.pushDevices.lock, lock)
			b.Queue(s.q.pushDevices.register, account, hash[:], d.To, d.Recipient, d.P256dh, d.Auth,
				microUTC(d.RegisteredAt), pushstore.MaxDevices)
			return s.batch(ctx, b, func(br pgx.BatchResults) error {
				if _, err := br.Exec(); err != nil {
					return err
				}
				_, err := br.Exec()
				return err
			})
		})
		if pgCode(err) != stateDeadlock || try == registerRetries || ctx.Err() != nil {
			break
		}
	}
	return s.fail(ctx, op, err)
}

// pushDeviceLock is the advisory lock of an account's recipient's
// devices: a hash of both, salted with the store's schema and prefix so
// that stores sharing a database do not wait for each other. Neither
// holds the NUL character (RegisterDevice refuses it), so no two pairs
// hash the same text.
func (s *Store) pushDeviceLock(account, recipient string) int64 {
	h := sha256.Sum256([]byte("notify push devices\x00" + s.schema + "\x00" + s.prefix + "\x00" + account + "\x00" + recipient))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// Devices returns the devices of the account's recipients, as
// pushstore.Devices documents, in one statement (none when no name may
// have devices): grouped by recipient in the order of recipients (a
// repeated name once, at its first place), each recipient's most
// recently registered first (ties by To in byte order), RegisteredAt in
// UTC; none is an empty slice and a nil error. A name a text column
// cannot hold (not UTF-8, or with the NUL character) has none, and so
// has every name of such an account. More than 10,000 names is
// store.ErrInvalid.
func (p *PushDevices) Devices(ctx context.Context, account string, recipients []string) ([]pushstore.Device, error) {
	const op = "devices"
	if len(recipients) > pushstore.MaxLookup {
		return nil, fmt.Errorf("pgstore: %s: %w", op,
			store.InvalidField("recipients", fmt.Sprintf("must name at most %d recipients", pushstore.MaxLookup)))
	}
	names := make([]string, 0, len(recipients))
	seen := make(map[string]bool, len(recipients))
	for _, name := range recipients {
		if !seen[name] && storable(name) {
			names = append(names, name)
		}
		seen[name] = true
	}
	if len(names) == 0 || !storable(account) {
		if err := ctx.Err(); err != nil {
			return nil, p.s.fail(ctx, op, err)
		}
		return []pushstore.Device{}, nil
	}
	out, err := readRows(ctx, p.s, op, func(row pgx.Row) (pushstore.Device, error) {
		var d pushstore.Device
		err := row.Scan(&d.Recipient, &d.To, &d.P256dh, &d.Auth, &d.RegisteredAt)
		d.RegisteredAt = d.RegisteredAt.UTC()
		return d, err
	}, p.s.q.pushDevices.devices, account, names)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []pushstore.Device{}
	}
	return out, nil
}

// UnregisterDevice forgets the account's device to, whichever recipient
// it is registered for; store.ErrNotFound when the account has none
// (also for a To a text column cannot hold).
func (p *PushDevices) UnregisterDevice(ctx context.Context, account, to string) error {
	const op = "unregister device"
	s := p.s
	if !storable(account) || !storable(to) {
		return fmt.Errorf("pgstore: %s: no device of that address: %w", op, store.ErrNotFound)
	}
	hash := sha256.Sum256([]byte(to))
	var n int64
	err := s.do(ctx, repeatable, func() error {
		tag, err := s.pool.Exec(ctx, s.q.pushDevices.unregister, account, hash[:])
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if n == 0 {
		return fmt.Errorf("pgstore: %s: no device of that address: %w", op, store.ErrNotFound)
	}
	return nil
}

// Interface guard
var _ pushstore.Devices = (*PushDevices)(nil)
