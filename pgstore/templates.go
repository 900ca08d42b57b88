package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/store"
)

// Template returns the account's custom template with the slug, or
// store.ErrNotFound. Each call returns a fresh *store.Template.
func (s *Store) Template(ctx context.Context, account, slug string) (*store.Template, error) {
	var t *store.Template
	err := s.do(ctx, repeatable, func() (err error) {
		t, err = scanTemplate(s.pool.QueryRow(ctx, s.q.template, account, slug))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.ErrNotFound, "pgstore: template %q of account %q", slug, account)
	}
	if err != nil {
		return nil, s.fail(ctx, "template", err)
	}
	return t, nil
}

// PutTemplate creates or replaces the account's template t.Slug. An empty
// account or slug, or a nil t, is store.ErrInvalid. PutTemplate does not
// retain t.
func (s *Store) PutTemplate(ctx context.Context, account string, t *store.Template) error {
	var fe store.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if t == nil || t.Slug == "" {
		fe.Add("slug", "is required")
	}
	if err := fe.Err(); err != nil {
		return err
	}
	err := s.do(ctx, repeatable, func() error {
		_, err := s.pool.Exec(ctx, s.q.putTemplate, account, t.Slug, t.Variables, string(t.Class),
			t.Chat, t.SMS, t.EmailSubject, t.EmailHTML, t.EmailText)
		return err
	})
	return s.fail(ctx, "put template", err)
}

// DeleteTemplate removes the account's template; a missing one is
// store.ErrNotFound.
func (s *Store) DeleteTemplate(ctx context.Context, account, slug string) error {
	var tag pgconn.CommandTag
	err := s.do(ctx, onceOnly, func() (err error) {
		tag, err = s.pool.Exec(ctx, s.q.deleteTemplate, account, slug)
		return err
	})
	if err != nil {
		return s.fail(ctx, "delete template", err)
	}
	if tag.RowsAffected() == 0 {
		return store.Errorf(store.ErrNotFound, "pgstore: template %q of account %q", slug, account)
	}
	return nil
}

// Templates lists the account's templates ordered by slug (byte order);
// an account without templates gives an empty list, not an error.
func (s *Store) Templates(ctx context.Context, account string) ([]*store.Template, error) {
	var ts []*store.Template
	err := s.do(ctx, repeatable, func() error {
		rows, err := s.pool.Query(ctx, s.q.templates, account)
		if err != nil {
			return err
		}
		ts, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Template, error) {
			return scanTemplate(row)
		})
		return err
	})
	if err != nil {
		return nil, s.fail(ctx, "templates", err)
	}
	return ts, nil
}

func scanTemplate(row pgx.Row) (*store.Template, error) {
	var t store.Template
	var class string
	if err := row.Scan(&t.Slug, &t.Variables, &class, &t.Chat, &t.SMS,
		&t.EmailSubject, &t.EmailHTML, &t.EmailText); err != nil {
		return nil, err
	}
	t.Class = store.PriceClass(class)
	return &t, nil
}
