package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// statementCounter is a pgx tracer that counts what the database is
// asked, split between notify's statements and River's (those that name
// River's tables or functions), which a queued send's path shares with
// every job of the queue.
type statementCounter struct {
	mu    sync.Mutex
	inTx  map[*pgx.Conn]*txCount // the connections inside an explicit transaction
	ours  pathCount
	river int
	log   []string // each statement's first words, for -v
}

// pathCount is what one path made of notify's own.
type pathCount struct {
	statements int // SQL statements, BEGIN and COMMIT aside
	roundTrips int // exchanges with the server: each statement, BEGIN, COMMIT, each batch once
	commits    int // transactions that wrote, each a WAL flush
}

// txCount is an explicit transaction under way: whether it wrote, and
// whether it ran one of notify's statements.
type txCount struct{ wrote, ours bool }

func newStatementCounter() *statementCounter {
	return &statementCounter{inTx: make(map[*pgx.Conn]*txCount)}
}

// writes reports whether sql writes (or locks) rows: its transaction's
// commit flushes the WAL.
func writes(sql string) bool {
	u := strings.ToUpper(sql)
	return strings.Contains(u, "INSERT ") || strings.Contains(u, "UPDATE ") || strings.Contains(u, "DELETE ")
}

func isRiver(sql string) bool {
	return strings.Contains(sql, "river_") || strings.Contains(sql, "pg_notify") || strings.HasPrefix(sql, "listen ") || strings.HasPrefix(sql, "unlisten ")
}

// statement counts one statement of conn; inBatch: within a batch, whose
// round trip and implicit transaction TraceBatchStart counted.
func (c *statementCounter) statement(conn *pgx.Conn, sql string, inBatch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.TrimSpace(strings.ToLower(sql))
	mark := "  "
	if inBatch {
		mark = "  batch: "
	}
	c.log = append(c.log, fmt.Sprintf("%s%.100s", mark, strings.Join(strings.Fields(s), " ")))
	switch {
	case strings.HasPrefix(s, "begin"):
		c.inTx[conn] = &txCount{}
		return
	case s == "commit" || s == "rollback":
		// BEGIN and COMMIT are notify's when the transaction ran one of
		// notify's statements, else River's.
		if tx := c.inTx[conn]; tx != nil && tx.ours {
			c.ours.roundTrips += 2
			if tx.wrote && s == "commit" {
				c.ours.commits++
			}
		}
		delete(c.inTx, conn)
		return
	}
	w, river := writes(sql), isRiver(s)
	tx := c.inTx[conn]
	if tx != nil {
		tx.wrote = tx.wrote || w
		tx.ours = tx.ours || !river
	}
	if river {
		c.river++
		return
	}
	c.ours.statements++
	if !inBatch {
		c.ours.roundTrips++
		if tx == nil && w {
			c.ours.commits++
		}
	}
}

// TraceQueryStart implements pgx.QueryTracer.
func (c *statementCounter) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.statement(conn, data.SQL, false)
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements pgx.BatchTracer: a batch is one round trip,
// and one implicit transaction.
func (c *statementCounter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	river, wrote := false, false
	for _, q := range data.Batch.QueuedQueries {
		river = river || isRiver(q.SQL)
		wrote = wrote || writes(q.SQL)
	}
	if river {
		return ctx
	}
	c.ours.roundTrips++
	if tx := c.inTx[conn]; tx != nil {
		tx.wrote = tx.wrote || wrote
		tx.ours = true
	} else if wrote {
		c.ours.commits++
	}
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (c *statementCounter) TraceBatchQuery(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	c.statement(conn, data.SQL, true)
}

// TraceBatchEnd implements pgx.BatchTracer.
func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// take returns the counts since the last take, and starts again.
func (c *statementCounter) take() (pathCount, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ours, river := c.ours, c.river
	if testing.Verbose() && len(c.log) > 0 {
		fmt.Println(strings.Join(c.log, "\n")) // what go test -v shows of each path
		fmt.Println("  --")
	}
	c.ours, c.river, c.log = pathCount{}, 0, nil
	return ours, river
}

// roundTripPath is one path of a send through the database.
type roundTripPath struct {
	name string
	// per is how many messages one run of the path makes.
	per int
	run func(t *testing.T, k *queueKit)
}

// TestStatementsPerSend counts the statements, round trips and commits
// each path of a message makes on pgstore (and pgqueue), with the account
// read through an accountcache.Cache, and checks them against
// docs/performance.md's table, which it prints.
func TestStatementsPerSend(t *testing.T) {
	counter := newStatementCounter()
	k := newQueueKitWith(t, kitSetup{conns: 4, workers: 1, accounts: 1, cacheTTL: time.Hour,
		tweak: func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter }})
	k.run(t)
	ctx := context.Background()
	send := func(t *testing.T, req notify.Request) *notify.Receipt {
		t.Helper()
		r, err := k.n.Send(ctx, req)
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		return r
	}
	// queuedSend enqueues with enqueue and waits (bounded) until the
	// worker has settled it: the observer's event of its move to sent.
	settled := make(chan string, 16)
	observe := func(e notify.Event) {
		if e.Type == record.StateSent && e.Receipt != nil {
			select {
			case settled <- e.Receipt.MessageID:
			default: // a send of another path, which nobody waits for
			}
		}
	}
	k.settled.Store(&observe)
	queuedSend := func(t *testing.T, enqueue func() (*notify.Receipt, error)) {
		t.Helper()
		r, err := enqueue()
		if err != nil {
			t.Fatal(err)
		}
		timeout := time.After(30 * time.Second)
		for {
			select {
			case id := <-settled:
				if id == r.MessageID {
					return
				}
			case <-timeout:
				t.Fatalf("message %s was not settled in 30 s", r.MessageID)
			}
		}
	}
	paths := []roundTripPath{
		{name: "immediate (Send)", per: 1,
			run: func(t *testing.T, k *queueKit) { send(t, queueRequest(0)) }},
		{name: "refused, refunded (Send)", per: 1,
			run: func(t *testing.T, k *queueKit) {
				k.p.FailNext(1, notify.CodeInvalidArgument)
				if _, err := k.n.Send(ctx, queueRequest(0)); notify.CodeOf(err) != notify.CodeInvalidArgument {
					t.Fatalf("a refused send: %v", err)
				}
			}},
		{name: "report (Report, delivered)", per: 1,
			run: func(t *testing.T, k *queueKit) {
				r := send(t, queueRequest(0))
				counter.take() // the send's own
				_, err := k.n.Report(ctx, &notify.DeliveryReport{Provider: r.Provider, ProviderMessageID: r.ProviderMessageID,
					State: record.StateDelivered})
				if err != nil {
					t.Fatalf("Report: %v", err)
				}
			}},
		{name: "bulk leg (Send of a BulkRequest to 10)", per: 10,
			run: func(t *testing.T, k *queueKit) {
				to := make([]string, 10)
				for i := range to {
					to[i] = fmt.Sprintf("98765432%02d", i)
				}
				send(t, &sms.BulkRequest{Message: sms.Request{Account: queueAccount(0), Message: "Your order has shipped."}, To: to})
			}},
		{name: "queued (Enqueue, then the worker)", per: 1,
			run: func(t *testing.T, k *queueKit) {
				queuedSend(t, func() (*notify.Receipt, error) { return k.s.Enqueue(ctx, queueRequest(0)) })
			}},
		{name: "scheduled (SendAt, then the worker)", per: 1,
			run: func(t *testing.T, k *queueKit) {
				queuedSend(t, func() (*notify.Receipt, error) {
					return k.s.SendAt(ctx, queueRequest(0), time.Now().Add(20*time.Millisecond))
				})
			}},
	}
	doc, err := os.ReadFile("../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	for _, p := range paths {
		p.run(t, k) // warm: statements prepared, the account cached
		const runs = 5
		var got pathCount
		var river int
		for range runs {
			counter.take()
			p.run(t, k)
			c, r := counter.take()
			got.statements += c.statements
			got.roundTrips += c.roundTrips
			got.commits += c.commits
			river += r
		}
		per := float64(runs * p.per)
		row := fmt.Sprintf("| %s | %s | %s | %s |", p.name, perMessage(got.statements, per),
			perMessage(got.roundTrips, per), perMessage(got.commits, per))
		fmt.Fprintf(&table, "%s %s |\n", row, perMessage(river, per))
		if !strings.Contains(string(doc), "\n"+row) {
			t.Errorf("docs/performance.md's table of statements per send has no row\n%s", row)
		}
	}
	t.Logf("notify's statements, round trips and commits per message, and River's statements (which vary with the queue's load):\n%s", table.String())
}

// perMessage is n over per, to one decimal.
func perMessage(n int, per float64) string {
	return strconv.FormatFloat(math.Round(float64(n)/per*10)/10, 'f', -1, 64)
}
