package pgstore_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/store"
)

// queryCounter counts the statements a pool sends, one per round trip
// (the store's preference methods send no batches).
type queryCounter struct{ n atomic.Int64 }

func (c *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestLookupChoicesIsOneStatement: the Notifier calls LookupChoices on
// the send path, so it reads the category and every recipient's choice in
// one round trip, whether the category is there or not; SetChoice finds
// the category and upserts the choice in one too.
func TestLookupChoicesIsOneStatement(t *testing.T) {
	counter := &queryCounter{}
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 4, func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter })
	s, err := pgstore.New(pool)
	must(t, err)
	ctx := context.Background()
	must(t, s.Migrate(ctx))
	_, err = s.PutCategory(ctx, store.Category{Account: "acme", Name: "marketing", OptIn: true})
	must(t, err)
	must(t, s.SetChoice(ctx, "acme", "sms", "+919876543210", "marketing", true))
	must(t, s.SetChoice(ctx, "acme", "sms", "+14155550100", "marketing", false))

	counted := func(what string, call func() error) error {
		t.Helper()
		before := counter.n.Load()
		err := call()
		if n := counter.n.Load() - before; n != 1 {
			t.Errorf("%s sent %d statements, want 1", what, n)
		}
		return err
	}
	tos := []string{"+919876543210", "+14155550100", "+447700900123", "not a number"}
	var c store.Category
	var choices map[string]bool
	must(t, counted("LookupChoices", func() (err error) {
		c, choices, err = s.LookupChoices(ctx, "acme", "marketing", "sms", tos)
		return err
	}))
	if !c.OptIn || len(choices) != 2 || !choices["+919876543210"] || choices["+14155550100"] {
		t.Fatalf("LookupChoices = %+v, %v", c, choices)
	}
	wantErr(t, counted("LookupChoices of an undefined category", func() error {
		_, _, err := s.LookupChoices(ctx, "acme", "order", "sms", tos)
		return err
	}), store.ErrNotFound)
	wantErr(t, counted("SetChoice of an undefined category", func() error {
		return s.SetChoice(ctx, "acme", "sms", "+919876543210", "order", true)
	}), store.ErrNotFound)
}

// TestSetChoiceRacesRemoveCategory: a choice of a category that a
// concurrent RemoveCategory takes, after the choice's statement has read
// the category, is ErrNotFound and leaves no row (the foreign key), and
// RemoveCategory leaves none of the category's choices in the table.
func TestSetChoiceRacesRemoveCategory(t *testing.T) {
	schema := pgstoretest.Schema(t)
	app := pgstoretest.RandomName("pgstore_choice_")
	pool := pgstoretest.Pool(t, schema, 4, withApp(app))
	s, err := pgstore.New(pool)
	must(t, err)
	ctx := context.Background()
	must(t, s.Migrate(ctx))
	for _, name := range []string{"order", "news"} {
		_, err = s.PutCategory(ctx, store.Category{Account: "acme", Name: name})
		must(t, err)
	}
	must(t, s.SetChoice(ctx, "acme", "email", "ann@example.com", "order", false))
	must(t, s.SetChoice(ctx, "acme", "email", "ann@example.com", "news", false))

	// A removal of "order" not yet committed: the choice below reads the
	// category in its snapshot, then waits on the row's lock.
	cfg, err := pgx.ParseConfig(pgstoretest.URL(t))
	must(t, err)
	cfg.RuntimeParams["search_path"] = schema
	conn, err := pgx.ConnectConfig(ctx, cfg)
	must(t, err)
	defer func() { _ = conn.Close(ctx) }()
	tx, err := conn.Begin(ctx)
	must(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `DELETE FROM notify_categories WHERE account = 'acme' AND name = 'order'`)
	must(t, err)

	done := make(chan error, 1)
	go func() { done <- s.SetChoice(ctx, "acme", "email", "bob@example.com", "order", true) }()
	waitingBackend(t, app)
	must(t, tx.Commit(ctx))
	wantErr(t, await(t, done), store.ErrNotFound)

	var left int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_choices WHERE account = 'acme' AND category = 'order'`).Scan(&left))
	if left != 0 {
		t.Fatalf("%d choices of the removed category are left", left)
	}
	got, err := s.Choices(ctx, "acme", "email", "ann@example.com")
	must(t, err)
	if len(got) != 1 || got["news"] {
		t.Fatalf("Choices after the removal = %v, want news declined alone", got)
	}
}

// TestPreferencesUnstorable: text the tables cannot keep (not UTF-8, the
// NUL character) is refused where it would be written, and where it is
// only read, answers as for an account or recipient with nothing kept.
func TestPreferencesUnstorable(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	_, err := s.PutCategory(ctx, store.Category{Account: "acme\x00", Name: "order"})
	wantErr(t, err, store.ErrInvalid)
	_, err = s.PutCategory(ctx, store.Category{Account: "acme", Name: "order"})
	must(t, err)
	wantErr(t, s.SetChoice(ctx, "acme", "email", "ann@\xffexample.com", "order", true), store.ErrInvalid)
	wantErr(t, s.SetChoice(ctx, "\xff", "email", "ann@example.com", "order", true), store.ErrNotFound)
	wantErr(t, s.RemoveCategory(ctx, "\xff", "order"), store.ErrNotFound)
	_, _, err = s.LookupChoices(ctx, "\xff", "order", "email", nil)
	wantErr(t, err, store.ErrNotFound)
	if cs, err := s.Categories(ctx, "\xff"); err != nil || cs != nil {
		t.Fatalf("Categories of an unstorable account = %v, %v", cs, err)
	}
	if got, err := s.Choices(ctx, "acme", "email", "ann@\xffexample.com"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Choices of an unstorable recipient = %v, %v; want an empty map", got, err)
	}
	c, got, err := s.LookupChoices(ctx, "acme", "order", "email", []string{"ann@\xffexample.com"})
	if err != nil || c.Name != "order" || len(got) != 0 {
		t.Fatalf("LookupChoices of an unstorable recipient = %+v, %v, %v", c, got, err)
	}
}

// TestPreferencesEndedContext: a call on an ended context answers the
// context's error, and changes nothing.
func TestPreferencesEndedContext(t *testing.T) {
	s, _ := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.PutCategory(ctx, store.Category{Account: "acme", Name: "order"})
	wantErr(t, err, context.Canceled)
	_, err = s.Categories(ctx, "acme")
	wantErr(t, err, context.Canceled)
	wantErr(t, s.SetChoice(ctx, "acme", "sms", "+919876543210", "order", true), context.Canceled)
	_, err = s.Choices(ctx, "acme", "sms", "+919876543210")
	wantErr(t, err, context.Canceled)
	_, _, err = s.LookupChoices(ctx, "acme", "order", "sms", nil)
	wantErr(t, err, context.Canceled)
	wantErr(t, s.RemoveCategory(ctx, "acme", "order"), context.Canceled)
	if cs, err := s.Categories(context.Background(), "acme"); err != nil || len(cs) != 0 {
		t.Fatalf("Categories after the ended calls = %v, %v; want none", cs, err)
	}
}
