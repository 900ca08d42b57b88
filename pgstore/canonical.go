package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/notifykit/notify/channel/email"
)

// codeSteps are the parts of migrations that SQL cannot express, by
// version: each runs in the migration's transaction, right after its
// file, and only when the file runs.
var codeSteps = map[int]func(ctx context.Context, tx pgx.Tx, s *Store) error{
	19: canonicalEmailSuppressions,
}

// canonicalEmailSuppressions rewrites the e-mail entries of every
// suppression list whose recipient is not in email.Recipient's form (an
// internationalised domain kept in Unicode, an A-label in upper case)
// into that form. An entry that meets one already there merges into it
// by the add statement's rule: the stronger reason stays, with its time.
// An entry email.Recipient refuses (a domain IDNA does not allow, which no
// send could have used) is left as it is.
func canonicalEmailSuppressions(ctx context.Context, tx pgx.Tx, s *Store) error {
	rows, err := tx.Query(ctx, expand(`SELECT account, recipient, reason, at FROM {{s}}{{p}}suppressions
WHERE kind = $1 AND (recipient !~ '^[[:ascii:]]*$' OR recipient ~ '[A-Z]')`, s.qualifier(), s.prefix), string(email.Kind))
	if err != nil {
		return err
	}
	type entry struct {
		account, to, reason string
		at                  time.Time
	}
	entries, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (entry, error) {
		var e entry
		return e, r.Scan(&e.account, &e.to, &e.reason, &e.at)
	})
	if err != nil {
		return err
	}
	for _, e := range entries {
		to, err := email.Recipient(e.to)
		if err != nil || to == e.to {
			continue
		}
		if _, err := tx.Exec(ctx, s.q.suppressions.remove, e.account, string(email.Kind), e.to); err != nil {
			return fmt.Errorf("removing an entry's old spelling: %w", err)
		}
		if _, err := tx.Exec(ctx, s.q.suppressions.add, e.account, string(email.Kind), to, e.reason, e.at); err != nil {
			return fmt.Errorf("writing an entry in its canonical form: %w", err)
		}
	}
	return nil
}
