package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify/verifystore"
)

// verificationKeep is how long after it ended (its expiry or its last
// change, whichever is later) ExpireVerifications keeps a verification
// before deleting it: the contract asks for a day at least.
const verificationKeep = 7 * 24 * time.Hour

// verificationColumns lists a verification's columns in the order
// scanVerification reads them.
const verificationColumns = `id, account, recipient, purpose, channels, code_hash, length, status,
	checks, max_checks, sends, max_sends, prefix, country, created_at, expires_at, last_sent_at, updated_at`

// verificationQueries are the statements of verifystore.Verifications; see
// buildVerificationQueries.
type verificationQueries struct {
	create, read, pending, takeCheck, takeSend, finish, expire string
}

func buildVerificationQueries(x func(string) string) verificationQueries {
	return verificationQueries{
		create: x(`INSERT INTO {{s}}{{p}}verifications (` + verificationColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`),

		read: x(`SELECT ` + verificationColumns + ` FROM {{s}}{{p}}verifications
WHERE id = $2 AND account = $1`),

		// pending reads the partial index of the pending verifications by
		// account, recipient and purpose, newest first; the expiry and the
		// checks are the rest of StatusAt.
		pending: x(`SELECT ` + verificationColumns + ` FROM {{s}}{{p}}verifications
WHERE account = $1 AND recipient = $2 AND purpose = $3 AND status = 'pending'
  AND expires_at > $4 AND checks < max_checks
ORDER BY created_at DESC, id DESC LIMIT 1`),

		// The counting statements decide and count in one conditional
		// UPDATE: concurrent calls on one verification queue for its row
		// lock and each re-checks the WHERE on the row the one before it
		// left, so no more are counted than the verification allows. They
		// change no indexed column, so PostgreSQL can update the row in
		// place (a HOT update).
		takeCheck: x(`UPDATE {{s}}{{p}}verifications SET checks = checks + 1, updated_at = $3
WHERE id = $2 AND account = $1 AND status = 'pending' AND expires_at > $3 AND checks < max_checks
RETURNING ` + verificationColumns),

		// takeSend's $4 is the latest last send the cooldown allows: now
		// less the cooldown.
		takeSend: x(`UPDATE {{s}}{{p}}verifications
SET sends = sends + 1, last_sent_at = $3, updated_at = $3
WHERE id = $2 AND account = $1 AND status = 'pending' AND expires_at > $3 AND checks < max_checks
  AND sends < max_sends AND (last_sent_at IS NULL OR last_sent_at <= $4)
RETURNING ` + verificationColumns),

		finish: x(`UPDATE {{s}}{{p}}verifications SET status = $3, updated_at = $4
WHERE id = $2 AND account = $1 AND status = 'pending'
RETURNING ` + verificationColumns),

		// expire marks up to $2 pending verifications expired by $1, and
		// deletes up to $2 that ended by $3 (a week before $1). Both skip
		// rows another call holds locked (a check being counted, say)
		// rather than wait for them: the next sweep finds them. A row that
		// changed since the statement's snapshot is re-checked when
		// locked, so a verification just approved is not marked expired.
		expire: x(`WITH due AS (
	SELECT id FROM {{s}}{{p}}verifications
	WHERE status = 'pending' AND expires_at <= $1
	ORDER BY expires_at LIMIT $2
	FOR UPDATE SKIP LOCKED
), expired AS (
	UPDATE {{s}}{{p}}verifications AS v SET status = 'expired', updated_at = $1
	FROM due WHERE v.id = due.id
	RETURNING 1
), ended AS (
	SELECT id FROM {{s}}{{p}}verifications
	WHERE status <> 'pending' AND expires_at <= $3 AND updated_at <= $3
	LIMIT $2
	FOR UPDATE SKIP LOCKED
), deleted AS (
	DELETE FROM {{s}}{{p}}verifications AS v USING ended WHERE v.id = ended.id
	RETURNING 1
)
SELECT (SELECT count(*) FROM expired), (SELECT count(*) FROM deleted)`),
	}
}

// storable reports whether a text column can hold s as it is: UTF-8
// without the NUL character.
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// microUTC is t as the table keeps it: UTC, truncated to the
// microsecond. Truncation keeps the order against any kept time, so a
// comparison in SQL answers as one of the caller's times would.
func microUTC(t time.Time) time.Time {
	return t.Truncate(time.Microsecond).UTC()
}

// CreateVerification keeps v, as verifystore.Verifications documents: its
// fields as given (an empty Status is pending; Checks and Sends are
// zero for a new verification), its times in UTC truncated to the
// microsecond, a zero LastSentAt as none. An ID in use, by any account,
// is store.ErrConflict. An empty ID, Account or CodeHash, a text field
// that is not UTF-8 or holds the NUL character, or a Status other than
// pending, approved, canceled or expired is store.ErrInvalid (a
// record.FieldErrors naming the fields). It is one INSERT, not repeated
// after a lost connection (a repeat of one that committed would answer
// store.ErrConflict): store.ErrUnavailable leaves the outcome unknown,
// and Verification tells it. CreateVerification does not retain v.
func (s *Store) CreateVerification(ctx context.Context, v *verifystore.Verification) error {
	if v == nil {
		return fmt.Errorf("pgstore: create verification: %w: nil verification", store.ErrInvalid)
	}
	var fe record.FieldErrors
	text := func(field, value string, required bool) {
		switch {
		case required && value == "":
			fe.Add(field, "is required")
		case !storable(value):
			fe.Add(field, "must be UTF-8 without the NUL character")
		}
	}
	text("id", v.ID, true)
	text("account", v.Account, true)
	if len(v.CodeHash) == 0 {
		fe.Add("code_hash", "is required")
	}
	text("to", v.To, false)
	text("purpose", v.Purpose, false)
	for _, c := range v.Channels {
		text("channels", c, false)
	}
	text("prefix", v.Prefix, false)
	text("country", v.Country, false)
	status := v.Status
	switch status {
	case "":
		status = verifystore.VerificationPending
	case verifystore.VerificationPending, verifystore.VerificationApproved, verifystore.VerificationCanceled, verifystore.VerificationExpired:
	default:
		fe.Add("status", "must be pending, approved, canceled or expired")
	}
	if err := store.InvalidFields(fe); err != nil {
		return fmt.Errorf("pgstore: create verification: %w", err)
	}
	channels := v.Channels
	if channels == nil {
		channels = []string{}
	}
	var lastSent *time.Time
	if !v.LastSentAt.IsZero() {
		t := microUTC(v.LastSentAt)
		lastSent = &t
	}
	err := s.do(ctx, onceOnly, func() error {
		_, err := s.pool.Exec(ctx, s.q.verifications.create, v.ID, v.Account, v.To, v.Purpose, channels,
			v.CodeHash, v.Length, string(status), v.Checks, v.MaxChecks, v.Sends, v.MaxSends, v.Prefix,
			v.Country, microUTC(v.CreatedAt), microUTC(v.ExpiresAt), lastSent, microUTC(v.UpdatedAt))
		return err
	})
	switch {
	case pgCode(err) == stateUniqueViolation:
		return fmt.Errorf("pgstore: create verification: %w: verification %q exists already", store.ErrConflict, v.ID)
	case err != nil:
		return s.fail(ctx, "create verification", err)
	}
	return nil
}

// Verification returns the account's verification id, or
// store.ErrNotFound (also for one of another account). It is one read of
// the primary key.
func (s *Store) Verification(ctx context.Context, account, id string) (*verifystore.Verification, error) {
	return s.readVerification(ctx, "verification", account, id)
}

// readVerification reads the account's verification id for the operation
// what: a lookup, or the answer of a counting call that counted nothing.
func (s *Store) readVerification(ctx context.Context, what, account, id string) (*verifystore.Verification, error) {
	if !storable(account) || !storable(id) {
		return nil, notFoundVerification(id)
	}
	var v *verifystore.Verification
	err := s.do(ctx, repeatable, func() (err error) {
		v, err = scanVerification(s.pool.QueryRow(ctx, s.q.verifications.read, account, id))
		return err
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, notFoundVerification(id)
	case err != nil:
		return nil, s.fail(ctx, what, err)
	}
	return v, nil
}

func notFoundVerification(id string) error {
	return fmt.Errorf("pgstore: verification %q: %w", id, store.ErrNotFound)
}

// PendingVerification returns the account's newest verification of to
// and purpose that is pending at now (verifystore.Verification.StatusAt: not
// ended, not expired, checks left), or store.ErrNotFound. Of two created
// at the same time the greater ID is the newer. It reads an index of the
// pending verifications by account, recipient and purpose.
func (s *Store) PendingVerification(ctx context.Context, account, to, purpose string, now time.Time) (*verifystore.Verification, error) {
	if !storable(account) || !storable(to) || !storable(purpose) {
		return nil, fmt.Errorf("pgstore: pending verification: %w", store.ErrNotFound)
	}
	var v *verifystore.Verification
	err := s.do(ctx, repeatable, func() (err error) {
		v, err = scanVerification(s.pool.QueryRow(ctx, s.q.verifications.pending, account, to, purpose, microUTC(now)))
		return err
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("pgstore: pending verification: %w", store.ErrNotFound)
	case err != nil:
		return nil, s.fail(ctx, "pending verification", err)
	}
	return v, nil
}

// TakeCheck counts one check of the account's verification id when it
// is pending at now, and answers it with the check counted and true; else
// it counts nothing and answers it as it is and false; an unknown
// verification, or one of another account, is store.ErrNotFound. Deciding
// and counting are one conditional UPDATE, so under any concurrency, from
// any number of instances, no more checks are counted than MaxChecks;
// that UPDATE also sets UpdatedAt to now. A refusal reads the row again,
// a second round trip. The UPDATE is not repeated after a lost connection
// (it could count twice): store.ErrUnavailable leaves unknown whether the
// check was counted.
func (s *Store) TakeCheck(ctx context.Context, account, id string, now time.Time) (*verifystore.Verification, bool, error) {
	now = microUTC(now)
	return s.takeVerification(ctx, "take check", account, id, s.q.verifications.takeCheck, account, id, now)
}

// TakeSend counts one send of the account's verification id when it is
// pending at now, has sends left (Sends < MaxSends) and its last send is
// at least cooldown before now (or it has none): it sets Sends, LastSentAt
// and UpdatedAt and answers it and true. Otherwise it counts nothing and
// answers it as it is and false; an unknown verification, or one of
// another account, is store.ErrNotFound. Like TakeCheck it is one
// conditional UPDATE, not repeated after a lost connection, and a refusal
// reads the row again.
func (s *Store) TakeSend(ctx context.Context, account, id string, now time.Time, cooldown time.Duration) (*verifystore.Verification, bool, error) {
	latest := microUTC(now.Add(-cooldown))
	now = microUTC(now)
	return s.takeVerification(ctx, "take send", account, id, s.q.verifications.takeSend, account, id, now, latest)
}

// FinishVerification moves the account's pending verification id to
// status, approved or canceled (anything else is store.ErrInvalid), at
// now (its UpdatedAt), and answers it and true. One that is not pending
// in the table, whatever its StatusAt says, is answered as it is and
// false; an unknown one, or one of another account, is store.ErrNotFound.
// It is one conditional UPDATE, so of two instances finishing one
// verification at once exactly one answers true; it is not repeated
// after a lost connection.
func (s *Store) FinishVerification(ctx context.Context, account, id string, status verifystore.VerificationStatus, now time.Time) (*verifystore.Verification, bool, error) {
	if status != verifystore.VerificationApproved && status != verifystore.VerificationCanceled {
		return nil, false, fmt.Errorf("pgstore: finish verification: %w",
			store.InvalidField("status", "must be approved or canceled"))
	}
	return s.takeVerification(ctx, "finish verification", account, id, s.q.verifications.finish,
		account, id, string(status), microUTC(now))
}

// takeVerification runs a counting UPDATE (query, with args) that
// returns the verification it changed, or nothing; then it reads the
// verification to answer it as it is, in a statement of its own, whose
// snapshot sees whatever refused the UPDATE.
func (s *Store) takeVerification(ctx context.Context, what, account, id, query string, args ...any) (*verifystore.Verification, bool, error) {
	if !storable(account) || !storable(id) {
		return nil, false, notFoundVerification(id)
	}
	var v *verifystore.Verification
	err := s.do(ctx, onceOnly, func() (err error) {
		v, err = scanVerification(s.pool.QueryRow(ctx, query, args...))
		return err
	})
	switch {
	case err == nil:
		return v, true, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, false, s.fail(ctx, what, err)
	}
	v, err = s.readVerification(ctx, what, account, id)
	if err != nil {
		return nil, false, err
	}
	return v, false, nil
}

// ExpireVerifications marks up to limit verifications still pending
// whose ExpiresAt is at or before now as expired (their UpdatedAt now),
// and answers how many it marked; the caller repeats it while it answers
// limit. A limit below 1 is store.ErrInvalid. In the same statement it
// deletes up to limit verifications that ended a week or more before now
// (not pending, and both their expiry and their last change that long
// ago), so the table holds only recent ones; the count leaves them out.
// Rows another call holds locked are skipped, not waited for, so
// concurrent sweeps from several instances share the work. It may be
// repeated after a lost connection: a repeat marks what is left.
func (s *Store) ExpireVerifications(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit < 1 {
		return 0, fmt.Errorf("pgstore: expire verifications: %w", store.InvalidField("limit", "must be at least 1"))
	}
	now = microUTC(now)
	var expired, deleted int64
	err := s.do(ctx, repeatable, func() error {
		return s.pool.QueryRow(ctx, s.q.verifications.expire, now, limit, now.Add(-verificationKeep)).
			Scan(&expired, &deleted)
	})
	if err != nil {
		return 0, s.fail(ctx, "expire verifications", err)
	}
	return int(expired), nil
}

// scanVerification reads one row of verificationColumns.
func scanVerification(row pgx.Row) (*verifystore.Verification, error) {
	var (
		v        verifystore.Verification
		status   string
		lastSent *time.Time
	)
	err := row.Scan(&v.ID, &v.Account, &v.To, &v.Purpose, &v.Channels, &v.CodeHash, &v.Length, &status,
		&v.Checks, &v.MaxChecks, &v.Sends, &v.MaxSends, &v.Prefix, &v.Country,
		&v.CreatedAt, &v.ExpiresAt, &lastSent, &v.UpdatedAt)
	if err != nil {
		return nil, err
	}
	v.Status = verifystore.VerificationStatus(status)
	if len(v.Channels) == 0 {
		v.Channels = nil
	}
	if lastSent != nil {
		v.LastSentAt = lastSent.UTC()
	}
	v.CreatedAt, v.ExpiresAt, v.UpdatedAt = v.CreatedAt.UTC(), v.ExpiresAt.UTC(), v.UpdatedAt.UTC()
	return &v, nil
}

// Interface guards
var _ verifystore.Verifications = (*Store)(nil)
