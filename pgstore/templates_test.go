package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TestTemplatesBeforeMigration0012: templates that a store wrote in the
// chat, SMS and email columns of migrations 1 to 11 read back after 0012
// with the same bodies: chat as "chat"'s Text, sms as "sms"'s Text, the
// three email columns as "email"'s Subject, HTML and Text, leaving out
// a kind whose columns were all empty.
func TestTemplatesBeforeMigration0012(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	pool := pgstoretest.Pool(t, schema, 1)
	migrateThrough(t, pool, 11)

	// Rows as PutTemplate wrote them then: '' for a part not given.
	_, err := pool.Exec(ctx, `INSERT INTO notify_templates
	(account, slug, variables, class, chat, sms, email_subject, email_html, email_text) VALUES
	('acme', 'full', '{NAME,ORDER}', 'transactional', 'Hi {{NAME}}', 'Order {{ORDER}} shipped',
	 'Order {{ORDER}}', '<p>Hi {{NAME}} &amp; "you"</p>', E'Hi {{NAME}},\n\nbye '),
	('acme', 'bare', NULL, '', '', '', '', '', ''),
	('acme', 'sms-only', '{}', 'promotional', '', 'Sale -Acme', '', '', ''),
	('acme', 'chat-only', NULL, '', E'  \\u {"x": 1}', '', '', '', ''),
	('acme', 'email-subject-only', NULL, '', '', '', 'Hello', '', ''),
	('acme', 'email-html-text', NULL, '', '', '', '', '<b>x</b>', 'x'),
	('beta', 'full', '{OTP}', 'transactional', '', 'Code {{OTP}}', '', '', '')`)
	must(t, err)

	s := pgstoretest.Store(t, schema) // runs 0012
	applied, latest, err := s.SchemaVersion(ctx)
	must(t, err)
	if applied != latest || latest < 12 {
		t.Fatalf("SchemaVersion = %d of %d", applied, latest)
	}

	type bodies = map[record.Kind]store.Body
	want := []*store.Template{
		{Slug: "bare"},
		{Slug: "chat-only", Bodies: bodies{"chat": {Text: `  \u {"x": 1}`}}},
		{Slug: "email-html-text", Bodies: bodies{"email": {HTML: "<b>x</b>", Text: "x"}}},
		{Slug: "email-subject-only", Bodies: bodies{"email": {Subject: "Hello"}}},
		{Slug: "full", Variables: []string{"NAME", "ORDER"}, Class: "transactional", Bodies: bodies{
			"chat":  {Text: "Hi {{NAME}}"},
			"sms":   {Text: "Order {{ORDER}} shipped"},
			"email": {Subject: "Order {{ORDER}}", HTML: `<p>Hi {{NAME}} &amp; "you"</p>`, Text: "Hi {{NAME}},\n\nbye "},
		}},
		{Slug: "sms-only", Variables: []string{}, Class: "promotional", Bodies: bodies{"sms": {Text: "Sale -Acme"}}},
	}
	list, err := s.Templates(ctx, "acme")
	must(t, err)
	if len(list) != len(want) {
		t.Fatalf("Templates after 0012: %d, want %d", len(list), len(want))
	}
	for i, w := range want {
		if !reflect.DeepEqual(list[i], w) {
			t.Errorf("Templates[%d] after 0012 = %+v, want %+v", i, list[i], w)
		}
		got, err := s.Template(ctx, "acme", w.Slug)
		must(t, err)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("Template(%s) after 0012 = %+v, want %+v", w.Slug, got, w)
		}
	}
	got, err := s.Template(ctx, "beta", "full")
	must(t, err)
	if w := (&store.Template{Slug: "full", Variables: []string{"OTP"}, Class: "transactional",
		Bodies: bodies{"sms": {Text: "Code {{OTP}}"}}}); !reflect.DeepEqual(got, w) {
		t.Errorf("beta's template after 0012 = %+v, want %+v", got, w)
	}

	// The stored form: kind -> {"subject", "text", "html"}, empty parts
	// and empty kinds left out.
	var raw []byte
	must(t, pool.QueryRow(ctx, `SELECT bodies FROM notify_templates WHERE account = 'acme' AND slug = 'full'`).Scan(&raw))
	wantJSON(t, "bodies of full after 0012", raw, `{
		"chat": {"text": "Hi {{NAME}}"},
		"sms": {"text": "Order {{ORDER}} shipped"},
		"email": {"subject": "Order {{ORDER}}", "html": "<p>Hi {{NAME}} &amp; \"you\"</p>", "text": "Hi {{NAME}},\n\nbye "}}`)
	must(t, pool.QueryRow(ctx, `SELECT bodies FROM notify_templates WHERE account = 'acme' AND slug = 'bare'`).Scan(&raw))
	wantJSON(t, "bodies of bare after 0012", raw, `{}`)

	// The old columns are gone; the new one is a NOT NULL object.
	var columns []string
	must(t, pool.QueryRow(ctx, `SELECT array_agg(column_name::text ORDER BY column_name) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'notify_templates'`).Scan(&columns))
	// locales: migration 0021, which the store ran too.
	wantColumns := []string{"account", "bodies", "class", "locales", "slug", "updated_at", "variables"}
	if !slices.Equal(columns, wantColumns) {
		t.Fatalf("templates columns after 0012 = %q, want %q", columns, wantColumns)
	}
	if _, err := pool.Exec(ctx, `UPDATE notify_templates SET bodies = '[]' WHERE slug = 'bare'`); err == nil {
		t.Fatal("the bodies column took an array")
	}
	if _, err := pool.Exec(ctx, `UPDATE notify_templates SET bodies = NULL WHERE slug = 'bare'`); err == nil {
		t.Fatal("the bodies column took NULL")
	}
	_, err = pool.Exec(ctx, `INSERT INTO notify_templates (account, slug) VALUES ('acme', 'defaults')`)
	must(t, err)
	got, err = s.Template(ctx, "acme", "defaults")
	must(t, err)
	if got.Bodies != nil {
		t.Fatalf("a template inserted without bodies has %+v", got.Bodies)
	}

	// And the store writes the new column.
	next := &store.Template{Slug: "full", Class: "promotional", Bodies: bodies{"push": {Subject: "Hi", Text: "there"}}}
	must(t, s.PutTemplate(ctx, "acme", next))
	got, err = s.Template(ctx, "acme", "full")
	must(t, err)
	if !reflect.DeepEqual(got, next) {
		t.Fatalf("Template after PutTemplate = %+v, want %+v", got, next)
	}
}

// TestTemplateBodiesStored: the bodies column holds, by kind, the JSON
// names subject, text and html (not store.Body's field names), leaving
// out empty parts, and a body with no part stays a kind of the template.
func TestTemplateBodiesStored(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	tpl := &store.Template{Slug: "s", Bodies: map[record.Kind]store.Body{
		"email": {Subject: "S", Text: "T", HTML: "<i>H</i>"},
		"sms":   {Text: "only text"},
		"push":  {Subject: "P"},
		"none":  {},
		"":      {Text: "a kind the store does not judge"},
	}}
	must(t, s.PutTemplate(ctx, "acme", tpl))
	var raw []byte
	must(t, pool.QueryRow(ctx, `SELECT bodies FROM notify_templates WHERE account = 'acme' AND slug = 's'`).Scan(&raw))
	wantJSON(t, "stored bodies", raw, `{
		"email": {"subject": "S", "text": "T", "html": "<i>H</i>"},
		"sms": {"text": "only text"},
		"push": {"subject": "P"},
		"none": {},
		"": {"text": "a kind the store does not judge"}}`)
	got, err := s.Template(ctx, "acme", "s")
	must(t, err)
	if !reflect.DeepEqual(got, tpl) {
		t.Fatalf("Template = %+v, want %+v", got, tpl)
	}

	// An empty map is stored as no bodies and read back as nil.
	must(t, s.PutTemplate(ctx, "acme", &store.Template{Slug: "e", Bodies: map[record.Kind]store.Body{}}))
	must(t, pool.QueryRow(ctx, `SELECT bodies FROM notify_templates WHERE account = 'acme' AND slug = 'e'`).Scan(&raw))
	wantJSON(t, "stored empty bodies", raw, `{}`)
	got, err = s.Template(ctx, "acme", "e")
	must(t, err)
	if got.Bodies != nil {
		t.Fatalf("Bodies of a template stored with none = %+v", got.Bodies)
	}
}

// TestTemplateBodiesRefused: what jsonb cannot hold unchanged is
// store.ErrInvalid naming the part, and nothing is stored.
func TestTemplateBodiesRefused(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		bodies map[record.Kind]store.Body
		field  string
	}{
		{"nul-text", map[record.Kind]store.Body{"sms": {Text: "a\x00b"}}, "bodies.sms.text"},
		{"bad-utf8-html", map[record.Kind]store.Body{"email": {Subject: "ok", HTML: "\xff"}}, "bodies.email.html"},
		{"bad-utf8-subject", map[record.Kind]store.Body{"push": {Subject: "a\xc3"}}, "bodies.push.subject"},
		{"nul-kind", map[record.Kind]store.Body{"s\x00": {Text: "x"}}, "bodies"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := s.PutTemplate(ctx, "acme", &store.Template{Slug: tt.name, Bodies: tt.bodies})
			wantErr(t, err, store.ErrInvalid)
			var fe record.FieldErrors
			if !errors.As(err, &fe) || len(fe) == 0 || fe[0].Field != tt.field {
				t.Fatalf("PutTemplate = %v, want an error of field %q", err, tt.field)
			}
			_, err = s.Template(ctx, "acme", tt.name)
			wantErr(t, err, store.ErrNotFound)
		})
	}
}

// wantJSON fails t unless got and want are the same JSON value.
func wantJSON(t testing.TB, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	must(t, json.Unmarshal(got, &g))
	must(t, json.Unmarshal([]byte(want), &w))
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// TestTemplatesBeforeMigration0021: templates written before 0021 read
// back with their bodies and no variants, and the store writes the new
// column for them after.
func TestTemplatesBeforeMigration0021(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	pool := pgstoretest.Pool(t, schema, 1)
	migrateThrough(t, pool, 20)
	_, err := pool.Exec(ctx, `INSERT INTO notify_templates (account, slug, variables, class, bodies) VALUES
	('acme', 'old', '{NAME}', 'transactional', '{"sms": {"text": "Hi {{NAME}}"}}')`)
	must(t, err)

	s := pgstoretest.Store(t, schema) // runs 0021 on
	want := &store.Template{Slug: "old", Variables: []string{"NAME"}, Class: "transactional",
		Bodies: map[record.Kind]store.Body{"sms": {Text: "Hi {{NAME}}"}}}
	got, err := s.Template(ctx, "acme", "old")
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Template after 0021 = %+v, want %+v", got, want)
	}
	var raw []byte
	must(t, pool.QueryRow(ctx, `SELECT locales FROM notify_templates WHERE account = 'acme' AND slug = 'old'`).Scan(&raw))
	wantJSON(t, "locales of a template from before 0021", raw, `{}`)
	if _, err := pool.Exec(ctx, `UPDATE notify_templates SET locales = '[]' WHERE slug = 'old'`); err == nil {
		t.Fatal("the locales column took an array")
	}
	if _, err := pool.Exec(ctx, `UPDATE notify_templates SET locales = NULL WHERE slug = 'old'`); err == nil {
		t.Fatal("the locales column took NULL")
	}

	want.Locales = map[string]map[record.Kind]store.Body{"hi": {"sms": {Text: "नमस्ते {{NAME}}"}}}
	must(t, s.PutTemplate(ctx, "acme", want))
	got, err = s.Template(ctx, "acme", "old")
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Template after PutTemplate = %+v, want %+v", got, want)
	}
}

// TestTemplateLocalesStored: the locales column holds, by tag as given,
// each variant's bodies in the bodies column's form; a variant without
// bodies stays a variant (an empty map), and no variants at all read
// back as nil.
func TestTemplateLocalesStored(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	tpl := &store.Template{Slug: "s", Bodies: map[record.Kind]store.Body{"sms": {Text: "Hi"}},
		Locales: map[string]map[record.Kind]store.Body{
			"hi":    {"email": {Subject: "S", Text: "T", HTML: "<i>ह</i>"}, "sms": {Text: "नमस्ते"}, "none": {}},
			"hi_in": {"push": {Subject: "P"}},
			"mr":    {},
		}}
	must(t, s.PutTemplate(ctx, "acme", tpl))
	var raw []byte
	must(t, pool.QueryRow(ctx, `SELECT locales FROM notify_templates WHERE account = 'acme' AND slug = 's'`).Scan(&raw))
	wantJSON(t, "stored locales", raw, `{
		"hi": {"email": {"subject": "S", "text": "T", "html": "<i>ह</i>"}, "sms": {"text": "नमस्ते"}, "none": {}},
		"hi_in": {"push": {"subject": "P"}},
		"mr": {}}`)
	got, err := s.Template(ctx, "acme", "s")
	must(t, err)
	if !reflect.DeepEqual(got, tpl) {
		t.Fatalf("Template = %+v, want %+v", got, tpl)
	}

	// A replacement without variants has none, stored as an empty object.
	for _, locales := range []map[string]map[record.Kind]store.Body{nil, {}} {
		must(t, s.PutTemplate(ctx, "acme", &store.Template{Slug: "s", Bodies: tpl.Bodies, Locales: locales}))
		must(t, pool.QueryRow(ctx, `SELECT locales FROM notify_templates WHERE account = 'acme' AND slug = 's'`).Scan(&raw))
		wantJSON(t, "stored locales after a replacement without", raw, `{}`)
		got, err = s.Template(ctx, "acme", "s")
		must(t, err)
		if got.Locales != nil {
			t.Fatalf("Locales after a replacement without = %+v", got.Locales)
		}
	}
}

// TestTemplateLocalesRefused: what jsonb cannot hold unchanged in a
// variant is store.ErrInvalid naming the tag, kind and part, and nothing
// is stored or changed.
func TestTemplateLocalesRefused(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	kept := &store.Template{Slug: "kept", Bodies: map[record.Kind]store.Body{"sms": {Text: "Hi"}},
		Locales: map[string]map[record.Kind]store.Body{"hi": {"sms": {Text: "नमस्ते"}}}}
	must(t, s.PutTemplate(ctx, "acme", kept))
	type locales = map[string]map[record.Kind]store.Body
	for _, tt := range []struct {
		name    string
		locales locales
		field   string
	}{
		{"nul-text", locales{"hi": {"sms": {Text: "a\x00b"}}}, "locales.hi.sms.text"},
		{"bad-utf8-html", locales{"hi": {"email": {Subject: "ok", HTML: "\xff"}}}, "locales.hi.email.html"},
		{"bad-utf8-subject", locales{"mr": {"push": {Subject: "a\xc3"}}}, "locales.mr.push.subject"},
		{"nul-kind", locales{"hi": {"s\x00": {Text: "x"}}}, "locales.hi"},
		{"nul-tag", locales{"h\x00": {"sms": {Text: "x"}}}, "locales"},
		{"bad-utf8-tag", locales{"h\xff": {"sms": {Text: "x"}}}, "locales"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, slug := range []string{tt.name, "kept"} {
				err := s.PutTemplate(ctx, "acme", &store.Template{Slug: slug, Bodies: kept.Bodies, Locales: tt.locales})
				wantErr(t, err, store.ErrInvalid)
				var fe record.FieldErrors
				if !errors.As(err, &fe) || len(fe) == 0 || fe[0].Field != tt.field {
					t.Fatalf("PutTemplate = %v, want an error of field %q", err, tt.field)
				}
			}
			_, err := s.Template(ctx, "acme", tt.name)
			wantErr(t, err, store.ErrNotFound)
			got, err := s.Template(ctx, "acme", "kept")
			must(t, err)
			if !reflect.DeepEqual(got, kept) {
				t.Fatalf("a refused replacement changed the template: %+v", got)
			}
		})
	}
}
