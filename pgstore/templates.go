package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/notifykit/notify/record"
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
		return nil, fmt.Errorf("pgstore: template %q of account %q: %w", slug, account, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.fail(ctx, "template", err)
	}
	return t, nil
}

// PutTemplate creates or replaces the account's template t.Slug, its
// variants (Locales) included: a t without them leaves the template
// none. An empty account or slug, or a nil t, is store.ErrInvalid. The
// bodies and the variants are kept opaque, of any kind and under any
// tag, each part exactly as given (the template package checks them); a
// tag, kind or part that a jsonb column cannot hold unchanged, one that
// is not UTF-8 or holds the NUL character, is store.ErrInvalid (field
// "bodies.<kind>.<part>", or "locales.<tag>.<kind>.<part>"). PutTemplate
// does not retain t.
func (s *Store) PutTemplate(ctx context.Context, account string, t *store.Template) error {
	var fe record.FieldErrors
	if account == "" {
		fe.Add("account", "is required")
	}
	if t == nil || t.Slug == "" {
		fe.Add("slug", "is required")
	}
	var bodies, locales []byte
	if t != nil {
		bodies = bodiesColumn(t.Bodies, &fe)
		locales = localesColumn(t.Locales, &fe)
	}
	if err := store.InvalidFields(fe); err != nil {
		return err
	}
	err := s.do(ctx, repeatable, func() error {
		_, err := s.pool.Exec(ctx, s.q.putTemplate, account, t.Slug, t.Variables, string(t.Class), bodies, locales)
		return err
	})
	return s.fail(ctx, "put template", err)
}

// storedBody is the stored form of a store.Body: its JSON names are the
// table's format (migration 0012), whatever store.Body's fields are
// called, and an empty part is left out.
type storedBody struct {
	Subject string `json:"subject,omitempty"`
	Text    string `json:"text,omitempty"`
	HTML    string `json:"html,omitempty"`
}

// bodiesColumn is the stored form of a template's bodies: one JSON object
// holding each kind's body under the kind's name ("{}" for none). Bodies
// that jsonb cannot hold as they are, invalid UTF-8 (which encoding/json
// would replace) or a NUL character (which jsonb refuses), are added to
// fe and give nil.
func bodiesColumn(bodies map[record.Kind]store.Body, fe *record.FieldErrors) []byte {
	bad := len(*fe)
	stored := storedBodies(bodies, "bodies", fe)
	if len(*fe) > bad {
		return nil
	}
	return encodeColumn("bodies", stored, fe)
}

// localesColumn is the stored form of a template's variants: one JSON
// object holding, under each tag as given, the variant's bodies as the
// bodies column holds a template's ("{}" for none; a variant without
// bodies is an empty object). What jsonb cannot hold unchanged is added
// to fe, as bodiesColumn does, and gives nil.
func localesColumn(locales map[string]map[record.Kind]store.Body, fe *record.FieldErrors) []byte {
	bad := len(*fe)
	stored := make(map[string]map[record.Kind]storedBody, len(locales))
	for _, tag := range slices.Sorted(maps.Keys(locales)) {
		checkStored(fe, "locales", "a tag ", tag)
		stored[tag] = storedBodies(locales[tag], "locales."+tag, fe)
	}
	if len(*fe) > bad {
		return nil
	}
	return encodeColumn("locales", stored, fe)
}

// storedBodies is bodies in their stored form (never nil), checking each
// kind and part as field ("bodies", "locales.hi") and the kind's and
// part's names: a problem is added to fe.
func storedBodies(bodies map[record.Kind]store.Body, field string, fe *record.FieldErrors) map[record.Kind]storedBody {
	stored := make(map[record.Kind]storedBody, len(bodies))
	for _, k := range slices.Sorted(maps.Keys(bodies)) {
		b := bodies[k]
		at := field + "." + string(k)
		checkStored(fe, field, "a kind ", string(k))
		checkStored(fe, at+".subject", "", b.Subject)
		checkStored(fe, at+".text", "", b.Text)
		checkStored(fe, at+".html", "", b.HTML)
		stored[k] = storedBody(b)
	}
	return stored
}

// checkStored adds to fe that field's value v (what, if not "", names
// it: "a kind ") cannot go into a jsonb column unchanged: invalid UTF-8,
// which encoding/json would replace, or a NUL character, which jsonb
// refuses.
func checkStored(fe *record.FieldErrors, field, what, v string) {
	switch {
	case !utf8.ValidString(v):
		fe.Add(field, what+"must be UTF-8")
	case strings.ContainsRune(v, 0):
		fe.Add(field, what+"must not contain the NUL character")
	}
}

// encodeColumn encodes a checked column's value, its keys sorted.
func encodeColumn(field string, v any, fe *record.FieldErrors) []byte {
	col, err := json.Marshal(v)
	if err != nil { // strings and maps of strings cannot fail
		fe.Add(field, "cannot be encoded: "+err.Error())
		return nil
	}
	return col
}

// decodeBodies reads the bodies column; an empty object gives nil.
func decodeBodies(col []byte) (map[record.Kind]store.Body, error) {
	var stored map[record.Kind]storedBody
	if err := json.Unmarshal(col, &stored); err != nil {
		return nil, fmt.Errorf("pgstore: template bodies: %w", err)
	}
	return bodiesOf(stored), nil
}

// decodeLocales reads the locales column; an empty object gives nil, a
// variant without bodies an empty map.
func decodeLocales(col []byte) (map[string]map[record.Kind]store.Body, error) {
	var stored map[string]map[record.Kind]storedBody
	if err := json.Unmarshal(col, &stored); err != nil {
		return nil, fmt.Errorf("pgstore: template locales: %w", err)
	}
	if len(stored) == 0 {
		return nil, nil
	}
	locales := make(map[string]map[record.Kind]store.Body, len(stored))
	for tag, bodies := range stored {
		locales[tag] = bodiesOf(bodies)
		if locales[tag] == nil {
			locales[tag] = map[record.Kind]store.Body{}
		}
	}
	return locales, nil
}

// bodiesOf is stored as store.Body values; none gives nil.
func bodiesOf(stored map[record.Kind]storedBody) map[record.Kind]store.Body {
	if len(stored) == 0 {
		return nil
	}
	bodies := make(map[record.Kind]store.Body, len(stored))
	for k, b := range stored {
		bodies[k] = store.Body(b)
	}
	return bodies
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
		return fmt.Errorf("pgstore: template %q of account %q: %w", slug, account, store.ErrNotFound)
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
	var bodies, locales []byte
	if err := row.Scan(&t.Slug, &t.Variables, &class, &bodies, &locales); err != nil {
		return nil, err
	}
	t.Class = record.PriceClass(class)
	var err error
	if t.Bodies, err = decodeBodies(bodies); err != nil {
		return nil, err
	}
	if t.Locales, err = decodeLocales(locales); err != nil {
		return nil, err
	}
	return &t, nil
}
