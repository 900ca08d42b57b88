package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// wantAccount fails t unless got has want's fields and the same settings:
// the same kinds, each the same JSON value (jsonb re-renders it).
func wantAccount(t testing.TB, what string, got, want *notify.Account) {
	t.Helper()
	g, w := *got, *want
	g.Settings, w.Settings = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %+v, want %+v", what, g, w)
	}
	wantSettings(t, what, got.Settings, want.Settings)
}

// wantSettings fails t unless got holds exactly want's kinds, each the
// same JSON value.
func wantSettings(t testing.TB, what string, got, want map[notify.Kind]json.RawMessage) {
	t.Helper()
	gk, wk := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))
	if !slices.Equal(gk, wk) {
		t.Fatalf("%s: settings of kinds %q (%q), want %q", what, gk, got, wk)
	}
	for k, w := range want {
		var gv, wv any
		if err := json.Unmarshal(got[k], &gv); err != nil {
			t.Fatalf("%s: settings of %s %q are no JSON: %v", what, k, got[k], err)
		}
		must(t, json.Unmarshal(w, &wv))
		if !reflect.DeepEqual(gv, wv) {
			t.Fatalf("%s: settings of %s = %s, want %s", what, k, got[k], w)
		}
	}
}

// wantFields fails t unless err is store.ErrInvalid naming exactly the
// fields.
func wantFields(t testing.TB, what string, err error, fields ...string) {
	t.Helper()
	wantErr(t, err, store.ErrInvalid)
	var fe record.FieldErrors
	if !errors.As(err, &fe) {
		t.Fatalf("%s: error %v is no record.FieldErrors", what, err)
	}
	var got []string
	for _, f := range fe {
		got = append(got, f.Field)
	}
	if !slices.Equal(got, fields) {
		t.Fatalf("%s: error %v names %q, want %q", what, err, got, fields)
	}
}

// TestAccountSettings: each kind's settings must be a JSON object that
// jsonb can hold, together at most 16 MiB; PutAccount, CreateAccount and
// UpdateAccount refuse others as ErrInvalid naming the kind, and write
// nothing.
func TestAccountSettings(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	good := json.RawMessage(`{"sender_id":"ACMEIN"}`)
	must(t, s.CreateAccount(ctx, &notify.Account{ID: "acme", Currency: record.INR(),
		Settings: map[notify.Kind]json.RawMessage{"sms": good}}, "acme-key", inr(0)))

	big := func(n int) json.RawMessage { return json.RawMessage(`{"x":"` + strings.Repeat("a", n) + `"}`) }
	for _, tc := range []struct {
		name     string
		settings map[notify.Kind]json.RawMessage
		fields   []string
	}{
		{"array", map[notify.Kind]json.RawMessage{"sms": json.RawMessage(`[1]`)}, []string{"settings.sms"}},
		{"string", map[notify.Kind]json.RawMessage{"sms": json.RawMessage(`"ACMEIN"`)}, []string{"settings.sms"}},
		{"null", map[notify.Kind]json.RawMessage{"chat": json.RawMessage(`null`)}, []string{"settings.chat"}},
		{"nil", map[notify.Kind]json.RawMessage{"chat": nil}, []string{"settings.chat"}},
		{"not JSON", map[notify.Kind]json.RawMessage{"chat": json.RawMessage(`{"a":`)}, []string{"settings.chat"}},
		{"two bad", map[notify.Kind]json.RawMessage{"sms": json.RawMessage(`1`), "chat": json.RawMessage(`{} {}`),
			"email": good}, []string{"settings.chat", "settings.sms"}},
		{"no kind", map[notify.Kind]json.RawMessage{"": good}, []string{"settings"}},
		{"not UTF-8", map[notify.Kind]json.RawMessage{"sms": json.RawMessage("{\"a\":\"\xff\"}")}, []string{"settings.sms"}},
		{"NUL", map[notify.Kind]json.RawMessage{"sms": json.RawMessage(`{"a":"x\u0000"}`)}, []string{"settings.sms"}},
		{"NUL in a key", map[notify.Kind]json.RawMessage{"sms": json.RawMessage(`{"\u0000":1}`)}, []string{"settings.sms"}},
		{"lone surrogate", map[notify.Kind]json.RawMessage{"sms": json.RawMessage(`{"a":"\ud800"}`)}, []string{"settings"}},
		{"too big", map[notify.Kind]json.RawMessage{"sms": big(9 << 20), "chat": big(8 << 20)}, []string{"settings"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acct := &notify.Account{ID: "acme", Name: "changed", Currency: record.INR(), Settings: tc.settings}
			wantFields(t, "PutAccount", s.PutAccount(ctx, acct), tc.fields...)
			id := "new-" + strings.ReplaceAll(tc.name, " ", "-")
			err := s.CreateAccount(ctx, &notify.Account{ID: id, Currency: record.INR(), Settings: tc.settings},
				id+"-key", inr(0))
			wantFields(t, "CreateAccount", err, tc.fields...)
			_, err = s.Account(ctx, id)
			wantErr(t, err, store.ErrNotFound)
			_, err = s.UpdateAccount(ctx, "acme", func(a *notify.Account) error {
				a.Name, a.Settings = "changed", tc.settings
				return nil
			})
			wantFields(t, "UpdateAccount", err, tc.fields...)
			got, err := s.Account(ctx, "acme")
			must(t, err)
			wantAccount(t, "after refused writes", got, &notify.Account{ID: "acme", Currency: record.INR(),
				Settings: map[notify.Kind]json.RawMessage{"sms": good}})
		})
	}

	// Fine: a big object within the limit, odd spacing, an escaped NUL
	// that is text, an empty object, many kinds; they come back compact
	// or as jsonb renders them, the same JSON.
	settings := map[notify.Kind]json.RawMessage{
		"sms":   big(1 << 20), // 500 DLT templates of 2,000 characters
		"chat":  json.RawMessage(" {\n\t\"primary_gateway\" : \"qr\" } "),
		"email": json.RawMessage(`{"note":"a \\u0000 is six characters here","n":1.5e3,"e":"\u00e9<&>"}`),
		"push":  json.RawMessage(`{}`),
	}
	acct := &notify.Account{ID: "acme", Currency: record.INR(), Settings: settings}
	must(t, s.PutAccount(ctx, acct))
	got, err := s.Account(ctx, "acme")
	must(t, err)
	wantAccount(t, "Account", got, acct)
	got, err = s.UpdateAccount(ctx, "acme", func(a *notify.Account) error {
		delete(a.Settings, "sms")
		return nil
	})
	must(t, err)
	delete(settings, "sms")
	wantAccount(t, "UpdateAccount", got, acct)
	var kinds []string
	must(t, pool.QueryRow(ctx, `SELECT array_agg(k ORDER BY k) FROM notify_accounts, jsonb_object_keys(settings) k
		WHERE id = 'acme'`).Scan(&kinds))
	if !slices.Equal(kinds, []string{"chat", "email", "push"}) {
		t.Fatalf("stored kinds %q", kinds)
	}
	// The returned account's bytes are its own.
	got.Settings["chat"][3] = 'X'
	again, err := s.Account(ctx, "acme")
	must(t, err)
	wantAccount(t, "Account after the caller changed a returned one", again, acct)
}

// TestAccountsBeforeMigration0011: accounts that a store wrote in the SMS
// and chat columns of migrations 1 to 10 read back after 0011 with the
// same settings, as the channels decode them: vendor_id, sender_ids and
// dlt_templates under "sms" (sender_id, sender_ids, dlt_templates),
// primary_gateway under "chat", leaving out what was empty.
func TestAccountsBeforeMigration0011(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	pool := pgstoretest.Pool(t, schema, 1)
	// The schema of 0010, as Migrate left it before 0011 was written.
	migrateThrough(t, pool, 10)

	// Rows as PutAccount wrote them then: dlt_templates NULL for none, the
	// JSON of the templates otherwise ('[]' for an empty, non-nil list).
	dlt := `[{"id": "1107", "entity_id": "1201", "content": "Your code is {#var#}"},
		{"id": "1108", "entity_id": "1201", "content": "Order {#var#} shipped", "message_id": "164725"}]`
	_, err := pool.Exec(ctx, `INSERT INTO notify_accounts
	(id, name, vendor_id, currency_code, currency_symbol, currency_exponent,
	 primary_gateway, dlt_templates, price_plan, disabled, sender_ids) VALUES
	('full', 'Acme', 'ACMEIN', 'INR', '₹', 2, 'qr', $1, 'gold', true, '{ACMEIN,ACMEST}'),
	('bare', '', '', '', '', 0, '', NULL, '', false, NULL),
	('empties', 'E', '', 'INR', '₹', 2, '', '[]', '', false, '{}'),
	('json-null', 'N', '', 'INR', '₹', 2, '', 'null', '', false, NULL),
	('chat-only', 'C', '', 'INR', '₹', 2, 'cloud', NULL, '', false, NULL),
	('vendor-only', 'V', 'ACMEVN', 'INR', '₹', 2, '', NULL, '', false, NULL),
	('senders-only', 'S', '', 'INR', '₹', 2, '', '[]', '', false, '{ACMEA,ACMEB}'),
	('dlt-only', 'D', '', 'INR', '₹', 2, '', $1, 'silver', false, '{}')`, dlt)
	must(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO notify_api_keys (key_hash, account) VALUES (sha256('full-key'::bytea), 'full')`)
	must(t, err)

	s := pgstoretest.Store(t, schema) // runs 0011
	applied, latest, err := s.SchemaVersion(ctx)
	must(t, err)
	if applied != latest || latest < 11 {
		t.Fatalf("SchemaVersion = %d of %d", applied, latest)
	}

	inr := record.INR()
	raw := func(m map[notify.Kind]string) map[notify.Kind]json.RawMessage {
		if m == nil {
			return nil
		}
		out := make(map[notify.Kind]json.RawMessage, len(m))
		for k, v := range m {
			out[k] = json.RawMessage(v)
		}
		return out
	}
	for _, want := range []*notify.Account{
		{ID: "full", Name: "Acme", Currency: inr, PricePlan: "gold", Disabled: true, Settings: raw(map[notify.Kind]string{
			"sms":  `{"sender_id": "ACMEIN", "sender_ids": ["ACMEIN", "ACMEST"], "dlt_templates": ` + dlt + `}`,
			"chat": `{"primary_gateway": "qr"}`,
		})},
		{ID: "bare"},
		{ID: "empties", Name: "E", Currency: inr},
		{ID: "json-null", Name: "N", Currency: inr},
		{ID: "chat-only", Name: "C", Currency: inr, Settings: raw(map[notify.Kind]string{
			"chat": `{"primary_gateway": "cloud"}`})},
		{ID: "vendor-only", Name: "V", Currency: inr, Settings: raw(map[notify.Kind]string{
			"sms": `{"sender_id": "ACMEVN"}`})},
		{ID: "senders-only", Name: "S", Currency: inr, Settings: raw(map[notify.Kind]string{
			"sms": `{"sender_ids": ["ACMEA", "ACMEB"]}`})},
		{ID: "dlt-only", Name: "D", Currency: inr, PricePlan: "silver", Settings: raw(map[notify.Kind]string{
			"sms": `{"dlt_templates": ` + dlt + `}`})},
	} {
		got, err := s.Account(ctx, want.ID)
		must(t, err)
		wantAccount(t, "Account("+want.ID+") after 0011", got, want)
	}

	// The channels decode what the columns held.
	got, err := s.AccountByKey(ctx, "full-key")
	must(t, err)
	smsSet, err := sms.SettingsOf(got)
	must(t, err)
	wantSMS := sms.Settings{SenderID: "ACMEIN", SenderIDs: []string{"ACMEIN", "ACMEST"}, DLTTemplates: []sms.DLTTemplate{
		{ID: "1107", EntityID: "1201", Content: "Your code is {#var#}"},
		{ID: "1108", EntityID: "1201", Content: "Order {#var#} shipped", MessageID: "164725"},
	}}
	if !reflect.DeepEqual(smsSet, wantSMS) {
		t.Fatalf("SMS settings after 0011 = %+v, want %+v", smsSet, wantSMS)
	}
	chatSet, err := chat.SettingsOf(got)
	must(t, err)
	if chatSet.PrimaryGateway != chat.GatewayQR {
		t.Fatalf("chat settings after 0011 = %+v", chatSet)
	}

	// The old columns are gone; the new one is a NOT NULL object (and
	// 0014's region and countries and 0022's locale follow, since Store
	// migrates to the end).
	var columns []string
	must(t, pool.QueryRow(ctx, `SELECT array_agg(column_name::text ORDER BY column_name) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'notify_accounts'`).Scan(&columns))
	wantColumns := []string{"countries", "created_at", "currency_code", "currency_exponent", "currency_symbol", "disabled",
		"id", "locale", "name", "price_plan", "region", "settings", "updated_at"}
	if !slices.Equal(columns, wantColumns) {
		t.Fatalf("accounts columns after 0011 and 0014 = %q, want %q", columns, wantColumns)
	}
	_, err = pool.Exec(ctx, `UPDATE notify_accounts SET settings = '[]' WHERE id = 'bare'`)
	if err == nil {
		t.Fatal("the settings column took an array")
	}
	_, err = pool.Exec(ctx, `INSERT INTO notify_accounts (id) VALUES ('defaults')`)
	must(t, err)
	got, err = s.Account(ctx, "defaults")
	must(t, err)
	if got.Settings != nil {
		t.Fatalf("an account inserted without settings has %q", got.Settings)
	}

	// And the store writes the new column.
	must(t, chat.SetSettings(got, chat.Settings{PrimaryGateway: chat.GatewayCloud}))
	must(t, s.PutAccount(ctx, got))
	again, err := s.Account(ctx, "defaults")
	must(t, err)
	wantAccount(t, "Account after PutAccount", again, got)
}
