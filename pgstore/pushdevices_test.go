package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/store"
)

var pushT0 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

// pushDevice returns a device of recipient with an FCM-like token named
// by name, registered n seconds after pushT0.
func pushDevice(recipient, name string, n int) pushstore.Device {
	return pushstore.Device{Recipient: recipient, To: "token-" + name + strings.Repeat("x", 40),
		RegisteredAt: pushT0.Add(time.Duration(n) * time.Second)}
}

// wantTos fails t unless the recipient's devices are those of tos, in
// that order.
func wantTos(t *testing.T, p *pgstore.PushDevices, account, recipient string, tos []string) {
	t.Helper()
	got, err := p.Devices(context.Background(), account, []string{recipient})
	must(t, err)
	var have []string
	for _, d := range got {
		have = append(have, d.To)
	}
	if strings.Join(have, " ") != strings.Join(tos, " ") {
		t.Fatalf("Devices(%s) = %d devices %v,\nwant %d %v", recipient, len(have), have, len(tos), tos)
	}
}

// TestPushDevicesConcurrentInstances: registrations of one recipient from
// two instances at once leave its MaxDevices newest devices; and devices
// moved between two full recipients at once, each to the other, all
// land where they were last registered, every recipient keeping at most
// MaxDevices, though the moves cross (and may deadlock, which a
// registration repeats).
func TestPushDevicesConcurrentInstances(t *testing.T) {
	schema := pgstoretest.Schema(t)
	stores := []*pgstore.PushDevices{pgstoretest.Store(t, schema).PushDevices(), pgstoretest.Store(t, schema).PushDevices()}
	ctx := context.Background()
	const n = 120
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			// Times spread, so that the newest are not the last started.
			d := pushDevice("ann", fmt.Sprintf("%03d", i), i*7%n)
			if err := stores[i%2].RegisterDevice(ctx, "acme", d); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	var want []string
	for k := n - 1; len(want) < pushstore.MaxDevices; k-- {
		for i := range n {
			if i*7%n == k {
				want = append(want, pushDevice("ann", fmt.Sprintf("%03d", i), 0).To)
			}
		}
	}
	wantTos(t, stores[0], "acme", "ann", want)

	// Two full recipients swap their devices, each move registered at
	// once with the others.
	for i := range pushstore.MaxDevices {
		must(t, stores[0].RegisterDevice(ctx, "swap", pushDevice("ann", fmt.Sprintf("a%02d", i), i)))
		must(t, stores[0].RegisterDevice(ctx, "swap", pushDevice("bob", fmt.Sprintf("b%02d", i), i)))
	}
	start = make(chan struct{})
	for i := range pushstore.MaxDevices {
		for j, move := range []pushstore.Device{
			pushDevice("bob", fmt.Sprintf("a%02d", i), 100+i),
			pushDevice("ann", fmt.Sprintf("b%02d", i), 100+i),
		} {
			wg.Go(func() {
				<-start
				if err := stores[(i+j)%2].RegisterDevice(ctx, "swap", move); err != nil {
					t.Error(err)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for _, c := range []struct{ recipient, from string }{{"ann", "b"}, {"bob", "a"}} {
		var want []string
		for i := pushstore.MaxDevices - 1; i >= 0; i-- {
			want = append(want, pushDevice("", fmt.Sprintf("%s%02d", c.from, i), 0).To)
		}
		wantTos(t, stores[1], "swap", c.recipient, want)
	}
}

// roundTrips counts a pool's round trips: its statements, and its
// batches, each sent at once.
type roundTrips struct{ n, batched atomic.Int64 }

func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.batched.Add(1)
}
func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestPushDevicesRoundTrips: a registration, its recipient's lock and
// its eviction included, is one round trip (a batch of two statements);
// Devices, of one name or of 10,000, and UnregisterDevice one statement
// each; Devices of no name none.
func TestPushDevicesRoundTrips(t *testing.T) {
	counter := &roundTrips{}
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 4, func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter })
	s, err := pgstore.New(pool)
	must(t, err)
	ctx := context.Background()
	must(t, s.Migrate(ctx))
	p := s.PushDevices()
	counted := func(what string, trips, batched int64, call func() error) {
		t.Helper()
		n, b := counter.n.Load(), counter.batched.Load()
		must(t, call())
		if n, b := counter.n.Load()-n, counter.batched.Load()-b; n != trips || b != batched {
			t.Errorf("%s: %d round trips, %d statements batched; want %d and %d", what, n, b, trips, batched)
		}
	}
	for i := range pushstore.MaxDevices + 1 { // the last one evicts
		counted("RegisterDevice", 1, 2, func() error {
			return p.RegisterDevice(ctx, "acme", pushDevice("ann", fmt.Sprint(i), i))
		})
	}
	counted("Devices", 1, 0, func() error {
		l, err := p.Devices(ctx, "acme", []string{"ann"})
		if err == nil && len(l) != pushstore.MaxDevices {
			err = fmt.Errorf("%d devices", len(l))
		}
		return err
	})
	// Many names, as a bulk push to 10,000 recipients reads them, are
	// one statement too: 2,500 recipients of one device each, ann, and
	// names without devices, given in an order of their own.
	const many = 2500
	names := make([]string, 0, 10000)
	for i := range many {
		must(t, p.RegisterDevice(ctx, "acme", pushDevice(fmt.Sprintf("user-%04d", i), fmt.Sprintf("u%04d", i), i)))
	}
	for i := range many {
		names = append(names, fmt.Sprintf("user-%04d", (i*7)%many), fmt.Sprintf("nobody-%04d", i))
	}
	names = append(names, "ann")
	for len(names) < cap(names) {
		names = append(names, fmt.Sprintf("user-%04d", len(names)%many)) // repeats: each at its first place only
	}
	counted(fmt.Sprintf("Devices of %d names", len(names)), 1, 0, func() error {
		l, err := p.Devices(ctx, "acme", names)
		if err != nil {
			return err
		}
		if len(l) != many+pushstore.MaxDevices {
			return fmt.Errorf("%d devices, want %d", len(l), many+pushstore.MaxDevices)
		}
		for i := range many {
			if want := fmt.Sprintf("user-%04d", (i*7)%many); l[i].Recipient != want {
				return fmt.Errorf("[%d] is %s's, want %s's", i, l[i].Recipient, want)
			}
		}
		for _, d := range l[many:] {
			if d.Recipient != "ann" {
				return fmt.Errorf("a device of %s after ann's", d.Recipient)
			}
		}
		return nil
	})
	counted("Devices of no name", 0, 0, func() error {
		l, err := p.Devices(ctx, "acme", nil)
		if err == nil && (l == nil || len(l) != 0) {
			err = fmt.Errorf("%v, want an empty slice", l)
		}
		return err
	})
	counted("UnregisterDevice", 1, 0, func() error {
		return p.UnregisterDevice(ctx, "acme", pushDevice("ann", "5", 0).To)
	})
}

// TestPushDevicesUnstorable: text the table cannot keep (not UTF-8, the
// NUL character) is refused where it would be written, and where it is
// only read answers as for an account or recipient without devices.
func TestPushDevicesUnstorable(t *testing.T) {
	s, _ := newStore(t)
	p := s.PushDevices()
	ctx := context.Background()
	good := pushDevice("ann", "1", 1)
	for name, c := range map[string]struct {
		account string
		mod     func(*pushstore.Device)
	}{
		"account":   {"acme\x00", func(*pushstore.Device) {}},
		"recipient": {"acme", func(d *pushstore.Device) { d.Recipient = "ann\xff" }},
		"to":        {"acme", func(d *pushstore.Device) { d.To += "\x00" }},
		"p256dh":    {"acme", func(d *pushstore.Device) { d.P256dh = "\xff" }},
		"auth":      {"acme", func(d *pushstore.Device) { d.Auth = "a\x00" }},
	} {
		d := good
		c.mod(&d)
		err := p.RegisterDevice(ctx, c.account, d)
		wantErr(t, err, store.ErrInvalid)
		if !strings.Contains(err.Error(), name) {
			t.Errorf("RegisterDevice with a bad %s: %v does not name it", name, err)
		}
	}
	wantTos(t, p, "acme", "ann", nil)
	must(t, p.RegisterDevice(ctx, "acme", good))
	for _, c := range [][2]string{{"acme\x00", "ann"}, {"acme", "ann\xff"}, {"acme", "ann\x00"}} {
		if got, err := p.Devices(ctx, c[0], []string{c[1]}); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("Devices(%q, %q) = %v, %v; want an empty slice", c[0], c[1], got, err)
		}
	}
	// Among other names, such a name has none, and the others theirs.
	got, err := p.Devices(ctx, "acme", []string{"ann\xff", "bob\x00", "ann", "\xff"})
	must(t, err)
	if len(got) != 1 || got[0].To != good.To || got[0].Recipient != "ann" {
		t.Fatalf("Devices of unstorable names and ann = %v; want ann's device", got)
	}
	wantErr(t, p.UnregisterDevice(ctx, "acme\xff", good.To), store.ErrNotFound)
	wantErr(t, p.UnregisterDevice(ctx, "acme", good.To+"\x00"), store.ErrNotFound)
	wantTos(t, p, "acme", "ann", []string{good.To})
}

// TestPushDevicesEndedContext: a call on an ended context answers the
// context's error, and changes nothing.
func TestPushDevicesEndedContext(t *testing.T) {
	s, _ := newStore(t)
	p := s.PushDevices()
	must(t, p.RegisterDevice(context.Background(), "acme", pushDevice("ann", "1", 1)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantErr(t, p.RegisterDevice(ctx, "acme", pushDevice("ann", "2", 2)), context.Canceled)
	_, err := p.Devices(ctx, "acme", []string{"ann"})
	wantErr(t, err, context.Canceled)
	wantErr(t, p.UnregisterDevice(ctx, "acme", pushDevice("ann", "1", 1).To), context.Canceled)
	wantTos(t, p, "acme", "ann", []string{pushDevice("ann", "1", 1).To})
}

// TestPushDevicesWithSchemaAndPrefix: the statements find their table
// under another schema and prefix, and stores of two prefixes keep their
// devices apart.
func TestPushDevicesWithSchemaAndPrefix(t *testing.T) {
	pool := pgstoretest.Pool(t, pgstoretest.Schema(t), 2)
	schema := pgstoretest.RandomName("notify_p_")
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+schema+` CASCADE`) })
	ctx := context.Background()
	var ps []*pgstore.PushDevices
	for _, prefix := range []string{"x_", "y_"} {
		s, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithTablePrefix(prefix))
		must(t, err)
		must(t, s.Migrate(ctx))
		ps = append(ps, s.PushDevices())
	}
	d := pushDevice("ann", "1", 1)
	must(t, ps[0].RegisterDevice(ctx, "acme", d))
	wantTos(t, ps[0], "acme", "ann", []string{d.To})
	wantTos(t, ps[1], "acme", "ann", nil)
	wantErr(t, ps[1].UnregisterDevice(ctx, "acme", d.To), store.ErrNotFound)
	must(t, ps[0].UnregisterDevice(ctx, "acme", d.To))
}

// TestPushDevicesDatabaseDown: every method is store.ErrUnavailable,
// promptly, when no server listens.
func TestPushDevicesDatabaseDown(t *testing.T) {
	pgstoretest.URL(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/notify?sslmode=disable&connect_timeout=2", closedPort(t))
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url) // connects lazily
	must(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.New(pool)
	must(t, err)
	p := s.PushDevices()
	for name, call := range map[string]func() error{
		"RegisterDevice":   func() error { return p.RegisterDevice(ctx, "acme", pushDevice("ann", "1", 1)) },
		"Devices":          func() error { _, err := p.Devices(ctx, "acme", []string{"ann"}); return err },
		"UnregisterDevice": func() error { return p.UnregisterDevice(ctx, "acme", "token") },
	} {
		start := time.Now()
		wantErr(t, call(), store.ErrUnavailable)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s took %v", name, d)
		}
	}
}

// TestPushDevicesCrossedMoves: two registrations that each move the
// oldest device of one full recipient to the other, released together,
// each lock the row the other deletes and wait for it: the server ends
// the deadlock by failing one, which RegisterDevice repeats. Both
// succeed, and each recipient keeps its MaxDevices newest devices, the
// moved one among them.
func TestPushDevicesCrossedMoves(t *testing.T) {
	schema := pgstoretest.Schema(t)
	app := pgstoretest.RandomName("push_")
	pool := pgstoretest.Pool(t, schema, 4, withApp(app))
	s, err := pgstore.New(pool)
	must(t, err)
	ctx := context.Background()
	must(t, s.Migrate(ctx))
	p := s.PushDevices()
	var ann, bob []string // newest first
	for i := range pushstore.MaxDevices {
		a, b := pushDevice("ann", fmt.Sprintf("a%02d", i), i), pushDevice("bob", fmt.Sprintf("b%02d", i), i)
		must(t, p.RegisterDevice(ctx, "acme", a))
		must(t, p.RegisterDevice(ctx, "acme", b))
		ann, bob = append([]string{a.To}, ann...), append([]string{b.To}, bob...)
	}
	x, y := pushDevice("ann", "b00", 100), pushDevice("bob", "a00", 100) // bob's oldest to ann, ann's to bob
	// Hold both rows, so that both registrations wait for them and go on
	// at once.
	tx, err := pool.Begin(ctx)
	must(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SELECT 1 FROM notify_push_devices WHERE account = 'acme' AND device_to = ANY($1) FOR UPDATE`,
		[]string{x.To, y.To})
	must(t, err)
	before := deadlocks(t, pool)
	errs := make(chan error, 2)
	for _, d := range []pushstore.Device{x, y} {
		go func() { errs <- p.RegisterDevice(ctx, "acme", d) }()
	}
	waitFor(t, 10*time.Second, "both registrations to wait for the rows", func() (bool, error) {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n)
		return n == 2, err
	})
	must(t, tx.Commit(ctx))
	for range 2 {
		must(t, <-errs)
	}
	t.Logf("deadlocks the server counted meanwhile (its statistics may lag): %d", deadlocks(t, pool)-before)
	wantTos(t, p, "acme", "ann", append([]string{x.To}, ann[:pushstore.MaxDevices-1]...))
	wantTos(t, p, "acme", "bob", append([]string{y.To}, bob[:pushstore.MaxDevices-1]...))
}

// deadlocks reads the server's count of deadlocks in the database.
func deadlocks(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	// From PostgreSQL 15 on, the statistics of this backend can be
	// flushed at once; an older server's error is of no matter here.
	_, _ = pool.Exec(context.Background(), `SELECT pg_stat_force_next_flush()`)
	must(t, pool.QueryRow(context.Background(),
		`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n))
	return n
}
