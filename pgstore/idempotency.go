package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify"
)

// reserveRetries bounds Reserve's re-reads when the entry that holds a key
// committed after its statement began (see queries.reserve).
const reserveRetries = 5

// Reserve claims key for one send of the account, as
// notify.IdempotencyStore documents: no Receipt when the caller now holds
// the key (with Abandoned set when it took over a reservation of the same
// fingerprint whose lease, WithIdempotencyLease, ran out); the first receipt when a send with the
// key and the same fingerprint completed within the idempotency TTL;
// Conflict when the fingerprint differs or a send with the key is within
// its lease. Keys are stored as their SHA-256, so any length is accepted.
func (s *Store) Reserve(ctx context.Context, account, key, fingerprint string) (notify.Reservation, error) {
	var res notify.Reservation
	if account == "" || key == "" {
		return res, notify.Errorf(notify.CodeInvalidArgument, "pgstore: reserve: account and key are required")
	}
	sum := sha256.Sum256([]byte(key))
	for try := 0; try < reserveRetries; try++ {
		now := s.now()
		var mine bool
		var fp *string
		var body []byte
		var abandoned *time.Time
		err := s.do(ctx, onceOnly, func() error {
			return s.pool.QueryRow(ctx, s.q.reserve, account, sum[:], fingerprint, now,
				now.Add(s.idemTTL), now.Add(s.idemLease)).
				Scan(&mine, &fp, &body, &abandoned)
		})
		if errors.Is(err, pgx.ErrNoRows) || pgCode(err) == stateUniqueViolation {
			if ctx.Err() != nil {
				return res, s.fail(ctx, "reserve", ctx.Err())
			}
			continue // the holder committed after our snapshot; look again
		}
		if err != nil {
			return res, s.fail(ctx, "reserve", err)
		}
		switch {
		case mine:
			if abandoned != nil {
				res.Abandoned = *abandoned
			}
			return res, nil
		case fp == nil || *fp != fingerprint:
			return res, notify.Errorf(notify.CodeConflict, "idempotency key was used with another request")
		case body == nil:
			return res, notify.Errorf(notify.CodeConflict, "a send with this idempotency key is in flight")
		}
		r, err := decodeReceipt(body)
		if err != nil {
			return res, notify.WithCode(notify.CodeInternal, fmt.Errorf("pgstore: reserve: %w", err))
		}
		res.Receipt = r
		return res, nil
	}
	return res, notify.Errorf(notify.CodeUnavailable, "the idempotency key changed hands %d times; try again", reserveRetries)
}

// Complete stores r under the key that the caller reserved, for the
// idempotency TTL from now, even after the reservation's lease ran out (the
// Notifier's reconciler completes the keys of sends whose holder died). A
// key with no entry, or one whose TTL passed, is NotFound; a key completed
// already is Conflict. Complete does not retain r.
func (s *Store) Complete(ctx context.Context, account, key string, r *notify.Receipt) error {
	if r == nil {
		return notify.Errorf(notify.CodeInvalidArgument, "pgstore: complete: nil receipt")
	}
	body, err := encodeReceipt(r)
	if err != nil {
		return notify.WithCode(notify.CodeInternal, fmt.Errorf("pgstore: complete: %w", err))
	}
	sum := sha256.Sum256([]byte(key))
	now := s.now()
	var stored, completed bool
	// A repeat after a lost answer finds its own receipt and says
	// Conflict: the caller cannot tell that from a completion by another
	// holder, so only a run that surely did not reach the server repeats.
	err = s.do(ctx, onceOnly, func() error {
		return s.pool.QueryRow(ctx, s.q.complete, account, sum[:], body, now.Add(s.idemTTL), now).
			Scan(&stored, &completed)
	})
	switch {
	case err != nil:
		return s.fail(ctx, "complete", err)
	case stored:
		return nil
	case completed:
		return notify.Errorf(notify.CodeConflict, "pgstore: complete: the key is completed already")
	}
	return notify.Errorf(notify.CodeNotFound, "pgstore: complete: no reservation of the key")
}

// Release frees a key reserved by a send that failed. Releasing a key that
// is not reserved, or whose send completed, does nothing.
func (s *Store) Release(ctx context.Context, account, key string) error {
	sum := sha256.Sum256([]byte(key))
	err := s.do(ctx, repeatable, func() error {
		_, err := s.pool.Exec(ctx, s.q.release, account, sum[:])
		return err
	})
	return s.fail(ctx, "release", err)
}

// cleanupBatch is how many rows one DELETE of Cleanup removes, so that a
// large backlog is removed in short transactions.
const cleanupBatch = 5000

// Cleanup deletes idempotency entries whose TTL has passed, message
// records settled longer than the record TTL ago (open ones are kept
// for the reconciler) and request records as old, and the limiters' rows
// that count nothing any more (full buckets, windows whose units have all
// left), and returns how many rows it
// removed. Expired rows are already ignored by every read, so Cleanup only
// reclaims space; run it periodically from one or several instances
// (concurrent runs are safe). It works in batches and stops early, with
// the count so far, when ctx ends.
func (s *Store) Cleanup(ctx context.Context) (removed int64, err error) {
	now := s.now()
	for _, c := range []struct {
		query string
		now   any
	}{
		{s.q.cleanupIdem, now},
		{s.q.cleanupMessages, now.Add(-s.recordTTL)},
		{s.q.cleanupRequests, now.Add(-s.recordTTL)},
		// The limiters keep unix nanoseconds.
		{s.q.limits.rateCleanup, now.UnixNano()},
		{s.q.limits.windowCleanup, now.UnixNano()},
	} {
		for {
			var tag pgconn.CommandTag
			err := s.do(ctx, repeatable, func() (err error) {
				tag, err = s.pool.Exec(ctx, c.query, c.now, cleanupBatch)
				return err
			})
			if err != nil {
				return removed, s.fail(ctx, "cleanup", err)
			}
			removed += tag.RowsAffected()
			if tag.RowsAffected() < cleanupBatch {
				break
			}
		}
	}
	return removed, nil
}

// receiptJSON is the stored form of a notify.Receipt. Its own tags keep
// stored receipts readable when Go field names change.
type receiptJSON struct {
	MessageID         string         `json:"message_id"`
	Account           string         `json:"account"`
	Kind              string         `json:"kind"`
	To                string         `json:"to,omitempty"`
	Status            string         `json:"status"`
	Provider          string         `json:"provider,omitempty"`
	ProviderMessageID string         `json:"provider_message_id,omitempty"`
	Gateway           string         `json:"gateway,omitempty"`
	Note              string         `json:"note,omitempty"`
	Units             int            `json:"units"`
	Cost              moneyJSON      `json:"cost"`
	Balance           moneyJSON      `json:"balance"`
	Metered           bool           `json:"metered"`
	Attempts          int            `json:"attempts"`
	ErrorCode         string         `json:"error_code,omitempty"`
	Error             string         `json:"error,omitempty"`
	Domain            string         `json:"domain,omitempty"`
	IdempotencyKey    string         `json:"idempotency_key,omitempty"`
	CreatedAt         time.Time      `json:"created_at"`
	Legs              []*receiptJSON `json:"legs,omitempty"`
}

type moneyJSON struct {
	Minor    int64  `json:"minor"`
	Code     string `json:"code"`
	Symbol   string `json:"symbol"`
	Exponent int    `json:"exponent"`
}

func toMoneyJSON(m notify.Money) moneyJSON {
	return moneyJSON{Minor: m.Minor, Code: m.Currency.Code, Symbol: m.Currency.Symbol, Exponent: m.Currency.Exponent}
}

func (m moneyJSON) money() notify.Money {
	return notify.Money{Minor: m.Minor, Currency: notify.Currency{Code: m.Code, Symbol: m.Symbol, Exponent: m.Exponent}}
}

func toReceiptJSON(r *notify.Receipt) *receiptJSON {
	if r == nil {
		return nil
	}
	j := &receiptJSON{
		MessageID: r.MessageID, Account: r.Account, Kind: string(r.Kind), To: r.To,
		Status: string(r.Status), Provider: r.Provider, ProviderMessageID: r.ProviderMessageID,
		Gateway: string(r.Gateway), Note: r.Note, Units: r.Units, Cost: toMoneyJSON(r.Cost),
		Balance: toMoneyJSON(r.Balance), Metered: r.Metered, Attempts: r.Attempts,
		ErrorCode: string(r.ErrorCode), Error: r.Error, Domain: r.Domain,
		IdempotencyKey: r.IdempotencyKey, CreatedAt: r.CreatedAt,
	}
	for _, leg := range r.Legs {
		j.Legs = append(j.Legs, toReceiptJSON(leg))
	}
	return j
}

func (j *receiptJSON) receipt() *notify.Receipt {
	if j == nil {
		return nil
	}
	r := &notify.Receipt{
		MessageID: j.MessageID, Account: j.Account, Kind: notify.Kind(j.Kind), To: j.To,
		Status: notify.MessageState(j.Status), Provider: j.Provider, ProviderMessageID: j.ProviderMessageID,
		Gateway: j.Gateway, Note: j.Note, Units: j.Units, Cost: j.Cost.money(),
		Balance: j.Balance.money(), Metered: j.Metered, Attempts: j.Attempts,
		ErrorCode: notify.Code(j.ErrorCode), Error: j.Error, Domain: j.Domain,
		IdempotencyKey: j.IdempotencyKey, CreatedAt: j.CreatedAt,
	}
	for _, leg := range j.Legs {
		r.Legs = append(r.Legs, leg.receipt())
	}
	return r
}

func encodeReceipt(r *notify.Receipt) ([]byte, error) { return json.Marshal(toReceiptJSON(r)) }

func decodeReceipt(body []byte) (*notify.Receipt, error) {
	var j receiptJSON
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, err
	}
	return j.receipt(), nil
}
