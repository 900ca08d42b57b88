package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/testclock"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

func TestAccounts(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	acct := &notify.Account{ID: "acme", Name: "Acme Ltd", Currency: record.INR(), PricePlan: "gold"}
	smsSet := sms.Settings{SenderID: "ACMEIN",
		DLTTemplates: []sms.DLTTemplate{{ID: "1107", EntityID: "1201", Content: "Your code is {#var#}"}}}
	must(t, sms.SetSettings(acct, smsSet))
	must(t, chat.SetSettings(acct, chat.Settings{PrimaryGateway: chat.GatewayQR}))
	must(t, s.PutAccount(ctx, acct, "key-one-secret", "key-two-secret"))

	got, err := s.Account(ctx, "acme")
	must(t, err)
	wantAccount(t, "Account", got, acct)
	// The channels read back what they wrote.
	if set, err := sms.SettingsOf(got); err != nil || !reflect.DeepEqual(set, smsSet) {
		t.Fatalf("SMS settings = %+v, %v; want %+v", set, err, smsSet)
	}
	if set, err := chat.SettingsOf(got); err != nil || set.PrimaryGateway != chat.GatewayQR {
		t.Fatalf("chat settings = %+v, %v", set, err)
	}
	for _, key := range []string{"key-one-secret", "key-two-secret"} {
		got, err := s.AccountByKey(ctx, key)
		must(t, err)
		if got.ID != "acme" {
			t.Fatalf("AccountByKey = %q", got.ID)
		}
	}
	for _, key := range []string{"", "key-one-secreT", "key-one-secret ", "nope"} {
		_, err := s.AccountByKey(ctx, key)
		wantErr(t, err, store.ErrUnauthenticated)
		if key != "" && strings.Contains(err.Error(), key) {
			t.Fatalf("error %q repeats the key", err)
		}
	}
	_, err = s.Account(ctx, "nobody")
	wantErr(t, err, store.ErrNotFound)

	// Only digests are stored.
	var raw []byte
	must(t, pool.QueryRow(ctx, `SELECT string_agg(key_hash, '') FROM notify_api_keys`).Scan(&raw))
	if bytes.Contains(raw, []byte("secret")) || len(raw) != 64 {
		t.Fatalf("api_keys holds %d bytes, including the keys?", len(raw))
	}

	// Replacing the account keeps its keys and replaces its settings; no
	// settings read back as none (a nil map), stored as an empty object.
	acct2 := &notify.Account{ID: "acme", Name: "Acme 2", Currency: record.INR(), Disabled: true}
	must(t, s.PutAccount(ctx, acct2))
	got, err = s.AccountByKey(ctx, "key-one-secret")
	must(t, err)
	if !reflect.DeepEqual(got, acct2) {
		t.Fatalf("after replace: %+v, want %+v", got, acct2)
	}
	var stored string
	must(t, pool.QueryRow(ctx, `SELECT settings::text FROM notify_accounts WHERE id = 'acme'`).Scan(&stored))
	if stored != "{}" {
		t.Fatalf("settings column of an account without settings = %s, want {}", stored)
	}

	// Keys: idempotent for the owner, Conflict for another account, and a
	// PutAccount with a foreign key writes nothing.
	must(t, s.AddAPIKey(ctx, "acme", "key-one-secret"))
	must(t, s.PutAccount(ctx, &notify.Account{ID: "beta", Name: "Beta"}))
	wantErr(t, s.AddAPIKey(ctx, "beta", "key-one-secret"), store.ErrConflict)
	wantErr(t, s.PutAccount(ctx, &notify.Account{ID: "beta", Name: "Beta renamed"}, "beta-key", "key-two-secret"), store.ErrConflict)
	got, err = s.Account(ctx, "beta")
	must(t, err)
	if got.Name != "Beta" {
		t.Fatalf("failed PutAccount changed the name to %q", got.Name)
	}
	_, err = s.AccountByKey(ctx, "beta-key")
	wantErr(t, err, store.ErrUnauthenticated)
	wantErr(t, s.AddAPIKey(ctx, "nobody", "k"), store.ErrNotFound)
	wantErr(t, s.AddAPIKey(ctx, "beta", ""), store.ErrInvalid)
	wantErr(t, s.PutAccount(ctx, &notify.Account{}), store.ErrInvalid)
	wantErr(t, s.PutAccount(ctx, nil), store.ErrInvalid)
	wantErr(t, s.PutAccount(ctx, &notify.Account{ID: "x"}, ""), store.ErrInvalid)

	must(t, s.RevokeAPIKey(ctx, "key-two-secret"))
	_, err = s.AccountByKey(ctx, "key-two-secret")
	wantErr(t, err, store.ErrUnauthenticated)
	wantErr(t, s.RevokeAPIKey(ctx, "key-two-secret"), store.ErrNotFound)
}

// sampleReceipt returns the bytes of a receipt as the Notifier encodes
// one (its JSON, keys in its order), of message id.
func sampleReceipt(id string) []byte {
	return []byte(`{"message_id":"` + id + `","account":"acme","kind":"otp","to":"9876543210",` +
		`"status":"sent","note":"failover","units":2,` +
		`"cost":{"minor":40,"code":"INR","symbol":"₹","exponent":2},` +
		`"balance":{"minor":960,"code":"INR","symbol":"₹","exponent":2},"metered":true,"attempts":3,` +
		`"domain":"shop.example","idempotency_key":"k1","created_at":"2025-01-02T03:04:05.000000006Z",` +
		`"legs":[{"message_id":"` + id + `-chat","account":"acme","kind":"chat","status":"failed",` +
		`"gateway":"cloud","units":1,"cost":{"minor":0,"code":"INR","symbol":"₹","exponent":2},` +
		`"balance":{"minor":960,"code":"INR","symbol":"₹","exponent":2},"metered":true,"attempts":2,` +
		`"error_code":"rejected","error":"rejected","created_at":"2025-01-02T03:04:05Z"}]}`)
}

func TestIdempotency(t *testing.T) {
	clock := testclock.New(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	s, _ := newStore(t, pgstore.WithClock(clock.Now), pgstore.WithIdempotencyTTL(time.Hour))
	ctx := context.Background()

	r, err := s.Reserve(ctx, "acme", "k1", "fp1")
	if err != nil || r.Receipt != nil {
		t.Fatalf("first Reserve = %v, %v; want nil, nil", r, err)
	}
	_, err = s.Reserve(ctx, "acme", "k1", "fp1")
	wantErr(t, err, store.ErrConflict) // in flight
	_, err = s.Reserve(ctx, "acme", "k1", "fp2")
	wantErr(t, err, store.ErrConflict)
	// Keys are per account.
	if r, err := s.Reserve(ctx, "beta", "k1", "fp1"); err != nil || r.Receipt != nil {
		t.Fatalf("other account's Reserve = %v, %v", r, err)
	}

	want := sampleReceipt("m1")
	must(t, s.Complete(ctx, "acme", "k1", want))
	got, err := s.Reserve(ctx, "acme", "k1", "fp1")
	must(t, err)
	if !bytes.Equal(got.Receipt, want) {
		t.Fatalf("Reserve after Complete = %s, want %s", got.Receipt, want)
	}
	_, err = s.Reserve(ctx, "acme", "k1", "fp2")
	wantErr(t, err, store.ErrConflict)
	must(t, s.Release(ctx, "acme", "k1")) // a completed key stays
	if got, err := s.Reserve(ctx, "acme", "k1", "fp1"); err != nil || got.Receipt == nil {
		t.Fatalf("Release removed a completed key: %v, %v", got, err)
	}

	// Release frees a failed send's key for another try.
	if r, err := s.Reserve(ctx, "acme", "k2", "fp"); err != nil || r.Receipt != nil {
		t.Fatalf("Reserve k2 = %v, %v", r, err)
	}
	must(t, s.Release(ctx, "acme", "k2"))
	if r, err := s.Reserve(ctx, "acme", "k2", "other fp"); err != nil || r.Receipt != nil {
		t.Fatalf("Reserve after Release = %v, %v", r, err)
	}
	must(t, s.Release(ctx, "acme", "never reserved"))
	wantErr(t, s.Complete(ctx, "acme", "never reserved", want), store.ErrNotFound)
	wantErr(t, s.Complete(ctx, "acme", "k2", nil), store.ErrInvalid)
	_, err = s.Reserve(ctx, "acme", "", "fp")
	wantErr(t, err, store.ErrInvalid)

	// Long keys are fine: only their digest is indexed.
	long := strings.Repeat("k", 10000)
	if r, err := s.Reserve(ctx, "acme", long, "fp"); err != nil || r.Receipt != nil {
		t.Fatalf("Reserve(long key) = %v, %v", r, err)
	}

	// After the TTL every entry is free again, and Cleanup removes them.
	clock.Advance(time.Hour)
	if r, err := s.Reserve(ctx, "acme", "k1", "fp-new"); err != nil || r.Receipt != nil {
		t.Fatalf("Reserve of an expired key = %v, %v", r, err)
	}
	wantErr(t, s.Complete(ctx, "beta", "k1", want), store.ErrNotFound) // its reservation expired
	n, err := s.Cleanup(ctx)
	must(t, err)
	if n != 3 { // beta/k1, acme/k2, acme/long; acme/k1 was just taken anew
		t.Fatalf("Cleanup removed %d rows, want 3", n)
	}
	_, err = s.Reserve(ctx, "acme", "k1", "fp-new")
	wantErr(t, err, store.ErrConflict)
}

// TestReceiptsBeforeMigration0010: receipts that a store stored in the
// jsonb column of migrations 1 to 9 (and this package wrote there too,
// before it runs 0010) read back after 0010 as the same JSON, which the
// Notifier decodes as it did; a reservation stays one. Receipts completed
// after it come back byte for byte.
func TestReceiptsBeforeMigration0010(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	pgstoretest.Store(t, schema) // migrated to the latest version
	pool := pgstoretest.Pool(t, schema, 1)
	// Back to the schema of 0009: a jsonb receipt, 0010 not applied.
	_, err := pool.Exec(ctx, `ALTER TABLE notify_idempotency
		ALTER COLUMN receipt TYPE jsonb USING convert_from(receipt, 'UTF8')::jsonb`)
	must(t, err)
	_, err = pool.Exec(ctx, `DELETE FROM notify_schema_migrations WHERE version = 10`)
	must(t, err)
	// A fresh pool, as a process that starts on that schema would have.
	old, err := pgstore.New(pgstoretest.Pool(t, schema, 2))
	must(t, err)

	want := sampleReceipt("m1")
	for _, key := range []string{"done", "in flight"} {
		if r, err := old.Reserve(ctx, "acme", key, "fp"); err != nil || r.Receipt != nil {
			t.Fatalf("Reserve(%s) before 0010 = %v, %v", key, r, err)
		}
	}
	must(t, old.Complete(ctx, "acme", "done", want))
	r, err := old.Reserve(ctx, "acme", "done", "fp")
	must(t, err)
	wantSameJSON(t, "before 0010", r.Receipt, want)

	s := pgstoretest.Store(t, schema) // runs 0010
	applied, latest, err := s.SchemaVersion(ctx)
	must(t, err)
	if applied != latest || latest < 10 {
		t.Fatalf("SchemaVersion = %d of %d", applied, latest)
	}
	r, err = s.Reserve(ctx, "acme", "done", "fp")
	must(t, err)
	wantSameJSON(t, "after 0010", r.Receipt, want)
	_, err = s.Reserve(ctx, "acme", "in flight", "fp")
	wantErr(t, err, store.ErrConflict)
	odd := []byte("\x00 not JSON \xff")
	must(t, s.Complete(ctx, "acme", "in flight", odd))
	r, err = s.Reserve(ctx, "acme", "in flight", "fp")
	must(t, err)
	if !bytes.Equal(r.Receipt, odd) {
		t.Fatalf("receipt after 0010 = %q, want %q", r.Receipt, odd)
	}
}

// wantSameJSON fails t unless got and want are the same JSON value.
func wantSameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: receipt %q is no JSON: %v", what, got, err)
	}
	must(t, json.Unmarshal(want, &w))
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: receipt %s, want %s", what, got, want)
	}
}

// TestReserveRace has many callers claim one key at once: exactly one
// holds it.
func TestReserveRace(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	const callers = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners, conflicts := 0, 0
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Reserve(ctx, "acme", "hot", "fp")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && r.Receipt == nil:
				winners++
			case errors.Is(err, store.ErrConflict):
				conflicts++
			default:
				t.Errorf("Reserve = %v, %v", r, err)
			}
		}()
	}
	wg.Wait()
	if winners != 1 || conflicts != callers-1 {
		t.Fatalf("%d winners, %d conflicts; want 1 and %d", winners, conflicts, callers-1)
	}
}

// TestCleanupBatches removes more rows than one batch deletes.
func TestCleanupBatches(t *testing.T) {
	clock := testclock.New(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	s, pool := newStore(t, pgstore.WithClock(clock.Now), pgstore.WithRecordTTL(time.Minute))
	ctx := context.Background()
	const rows = 12000
	_, err := pool.Exec(ctx, `INSERT INTO notify_idempotency
		(account, key_hash, fingerprint, receipt, created_at, expires_at)
		SELECT 'acme', sha256(('k' || i)::bytea), 'fp', '{}', $1, $1 FROM generate_series(1, $2) i`,
		clock.Now().Add(-time.Hour), rows)
	must(t, err)
	n, err := s.Cleanup(ctx)
	must(t, err)
	if n != rows {
		t.Fatalf("Cleanup removed %d, want %d", n, rows)
	}
}

func TestTemplates(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	t1 := &store.Template{Slug: "welcome", Variables: []string{"NAME", "OTP"}, Class: record.Transactional,
		Bodies: map[record.Kind]store.Body{
			"chat":  {Text: "Hi {{NAME}}"},
			"sms":   {Text: "Hi {{NAME}}, {{OTP}}"},
			"email": {Subject: "Hello", HTML: "<p>Hi</p>", Text: "Hi"},
		}}
	t0 := &store.Template{Slug: "Alpha", Class: record.Promotional,
		Bodies: map[record.Kind]store.Body{"sms": {Text: "Sale"}}}
	must(t, s.PutTemplate(ctx, "acme", t1))
	must(t, s.PutTemplate(ctx, "acme", t0))

	got, err := s.Template(ctx, "acme", "welcome")
	must(t, err)
	if !reflect.DeepEqual(got, t1) {
		t.Fatalf("Template = %+v, want %+v", got, t1)
	}
	list, err := s.Templates(ctx, "acme")
	must(t, err)
	if len(list) != 2 || !reflect.DeepEqual(list[0], t0) || !reflect.DeepEqual(list[1], t1) {
		t.Fatalf("Templates = %+v", list)
	}
	list, err = s.Templates(ctx, "beta")
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("beta has %d templates", len(list))
	}
	_, err = s.Template(ctx, "beta", "welcome")
	wantErr(t, err, store.ErrNotFound)

	t1b := &store.Template{Slug: "welcome", Bodies: map[record.Kind]store.Body{"sms": {Text: "v2"}}}
	must(t, s.PutTemplate(ctx, "acme", t1b))
	got, err = s.Template(ctx, "acme", "welcome")
	must(t, err)
	if !reflect.DeepEqual(got, t1b) {
		t.Fatalf("replaced template = %+v", got)
	}
	must(t, s.DeleteTemplate(ctx, "acme", "welcome"))
	wantErr(t, s.DeleteTemplate(ctx, "acme", "welcome"), store.ErrNotFound)
	wantErr(t, s.PutTemplate(ctx, "acme", &store.Template{}), store.ErrInvalid)
	wantErr(t, s.PutTemplate(ctx, "acme", nil), store.ErrInvalid)
	wantErr(t, s.PutTemplate(ctx, "", t0), store.ErrInvalid)
}

func TestMigrate(t *testing.T) {
	schema := pgstoretest.Schema(t)
	pool := pgstoretest.Pool(t, schema, 8)
	s, err := pgstore.New(pool)
	must(t, err)
	ctx := context.Background()

	applied, latest, err := s.SchemaVersion(ctx)
	must(t, err)
	if applied != 0 || latest < 1 {
		t.Fatalf("SchemaVersion before Migrate = %d, %d", applied, latest)
	}
	// Before Migrate, calls fail with a hint, not a panic.
	_, err = s.Balance(ctx, "acme")
	wantErr(t, err, nil)
	if !strings.Contains(err.Error(), "Migrate") {
		t.Fatalf("error %q does not mention Migrate", err)
	}

	// Several processes migrating at once: one applies, all succeed.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other := pgstoretest.Pool(t, schema, 2)
			st, err := pgstore.New(other)
			if err == nil {
				err = st.Migrate(ctx)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	must(t, s.Migrate(ctx))
	applied, latest, err = s.SchemaVersion(ctx)
	must(t, err)
	if applied != latest {
		t.Fatalf("SchemaVersion = %d, latest %d", applied, latest)
	}
	var versions int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_schema_migrations`).Scan(&versions))
	if versions != latest {
		t.Fatalf("%d rows in schema_migrations, want %d", versions, latest)
	}
	// 0009 dropped the table of the delivery log.
	var deliveries bool
	must(t, pool.QueryRow(ctx, `SELECT to_regclass('notify_deliveries') IS NOT NULL`).Scan(&deliveries))
	if deliveries {
		t.Fatal("notify_deliveries is still there after Migrate")
	}
}

// TestPrefixAndSchema keeps two stores apart in one database: one by
// table prefix, one by schema.
func TestPrefixAndSchema(t *testing.T) {
	home := pgstoretest.Schema(t)
	pool := pgstoretest.Pool(t, home, 4)
	ctx := context.Background()
	target := pgstoretest.RandomName("pgstore_w_")
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+target+` CASCADE`)
	})

	a, err := pgstore.New(pool, pgstore.WithTablePrefix("app1_"))
	must(t, err)
	b, err := pgstore.New(pool, pgstore.WithSchema(target), pgstore.WithTablePrefix(""))
	must(t, err)
	must(t, a.Migrate(ctx))
	must(t, b.Migrate(ctx))
	must(t, a.OpenWallet(ctx, "acme", inr(100)))
	must(t, b.OpenWallet(ctx, "acme", inr(500)))
	_, err = a.Debit(ctx, "acme", inr(10), "r")
	must(t, err)
	wantBalance(t, a, "acme", 90)
	wantBalance(t, b, "acme", 500)

	var n int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = $1 AND table_name = 'wallets'`, target).Scan(&n))
	if n != 1 {
		t.Fatalf("schema %s has no unprefixed wallets table", target)
	}
	applied, latest, err := b.SchemaVersion(ctx)
	must(t, err)
	if applied != latest {
		t.Fatalf("schema store version %d of %d", applied, latest)
	}

	for _, bad := range []pgstore.Option{
		pgstore.WithTablePrefix("Bad"), pgstore.WithTablePrefix("a-b"), pgstore.WithTablePrefix(`x";drop`),
		pgstore.WithTablePrefix(strings.Repeat("a", 41)), pgstore.WithSchema(""), pgstore.WithSchema("9x"),
		pgstore.WithIdempotencyTTL(0), pgstore.WithRecordTTL(-time.Second), pgstore.WithClock(nil),
	} {
		_, err := pgstore.New(pool, bad)
		wantErr(t, err, store.ErrInvalid)
	}
	_, err = pgstore.New(nil)
	wantErr(t, err, store.ErrInvalid)
}

// TestOpen exercises the pool Open makes and owns.
func TestOpen(t *testing.T) {
	schema := pgstoretest.Schema(t)
	url := pgstoretest.URL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	ctx := context.Background()
	s, err := pgstore.Open(ctx, url+sep+"search_path="+schema)
	must(t, err)
	must(t, s.Migrate(ctx))
	must(t, s.CheckHealth(ctx))
	openWallet(t, s, "acme", 10)
	wantBalance(t, s, "acme", 10)
	s.Close()
	_, err = s.Balance(ctx, "acme")
	wantErr(t, err, store.ErrUnavailable) // closed pool

	_, err = pgstore.Open(ctx, "postgres://u:hunter2@[bad")
	wantErr(t, err, store.ErrInvalid)
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %q shows the password", err)
	}
}
