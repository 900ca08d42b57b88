package pgstoretest_test

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/record"
)

func TestSchemaAndStores(t *testing.T) {
	var schema string
	t.Run("use", func(t *testing.T) {
		schema = pgstoretest.Schema(t)
		a := pgstoretest.Store(t, schema)
		b := pgstoretest.Store(t, schema) // a second "process" on the same tables
		ctx := context.Background()
		if err := a.OpenWallet(ctx, "acme", notify.Money{Minor: 10, Currency: record.INR()}); err != nil {
			t.Fatal(err)
		}
		bal, err := b.Balance(ctx, "acme")
		if err != nil || bal.Available.Minor != 10 {
			t.Fatalf("the second store sees %+v, %v", bal, err)
		}
	})
	if t.Skipped() || schema == "" {
		return
	}
	// The subtest's cleanup dropped the schema.
	pool := pgstoretest.Pool(t, "public", 1)
	var n int
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("schema %s outlived its test", schema)
	}
}

func TestRandomName(t *testing.T) {
	a, b := pgstoretest.RandomName("x_"), pgstoretest.RandomName("x_")
	if a == b || len(a) != 14 {
		t.Fatalf("RandomName gave %q and %q", a, b)
	}
}

// Example shows a test that runs two stores on one schema, as two
// gateway processes share one database.
func Example() {
	testTwoGateways := func(t *testing.T) {
		schema := pgstoretest.Schema(t) // skips without a server
		gatewayA := pgstoretest.Store(t, schema)
		gatewayB := pgstoretest.Store(t, schema)
		_, _ = gatewayA, gatewayB // wire each into its own Notifier
	}
	_ = testTwoGateways
}
