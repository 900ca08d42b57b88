package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// OpenRequest writes r, as store.Ledger documents: one INSERT.
// Cleanup removes request records with the message records (their
// retention, WithRecordTTL, counted from when they were opened).
func (s *Store) OpenRequest(ctx context.Context, r *store.RequestRecord) error {
	if r == nil || r.ID == "" || r.Account == "" || r.IdempotencyKey == "" {
		return fmt.Errorf("pgstore: open request: %w: a request record needs an ID, an account and a key", store.ErrInvalid)
	}
	parts := r.Parts
	if parts == nil {
		parts = []string{}
	}
	// Not repeated after a lost connection: a repeat of a run that
	// committed would answer ErrConflict.
	err := s.do(ctx, onceOnly, func() error {
		_, err := s.pool.Exec(ctx, s.q.openRequest, r.ID, r.Account, string(r.Kind), r.Bulk, r.IdempotencyKey, parts, r.CreatedAt)
		return err
	})
	switch {
	case pgCode(err) == stateUniqueViolation:
		return fmt.Errorf("pgstore: open request: %w: request %q is recorded already", store.ErrConflict, r.ID)
	case err != nil:
		return s.fail(ctx, "open request", err)
	}
	return nil
}

// RequestByKey returns the account's newest request record with key
// opened at or after since, or store.ErrNotFound.
func (s *Store) RequestByKey(ctx context.Context, account, key string, since time.Time) (*store.RequestRecord, error) {
	var r store.RequestRecord
	var kind string
	err := s.do(ctx, repeatable, func() error {
		return s.pool.QueryRow(ctx, s.q.requestByKey, account, key, since).
			Scan(&r.ID, &r.Account, &kind, &r.Bulk, &r.IdempotencyKey, &r.Parts, &r.CreatedAt)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("pgstore: request record of the key: %w", store.ErrNotFound)
	case err != nil:
		return nil, s.fail(ctx, "request by key", err)
	}
	r.Kind = record.Kind(kind)
	return &r, nil
}
