package pgstore_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/pgstore"
	"github.com/notifykit/notify/pgstore/pgstoretest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// smsChannel is the smallest SMS channel there is: no validation or
// rendering, one provider. It is enough to drive the Notifier's charge,
// refund and record steps; channel/sms is the real one.
type smsChannel struct{ p notify.Provider }

func (c smsChannel) Kind() notify.Kind { return sms.Kind }

func (c smsChannel) Recipient(to string) (string, error) { return strings.TrimSpace(to), nil }

func (c smsChannel) Prepare(_ context.Context, _ *notify.Account, req notify.Request) (*notify.Envelope, error) {
	r, ok := req.(*sms.Request)
	if !ok {
		return nil, notify.Errorf(notify.CodeInternal, "smsChannel: %T is not an SMS request", req)
	}
	return &notify.Envelope{Kind: sms.Kind, To: r.To, Provider: c.p.Name(), Units: 1,
		Class:   record.Transactional,
		Content: &sms.Message{Route: sms.RouteSMS, Text: r.Message, Encoding: sms.GSM7, Segments: 1}}, nil
}

func (c smsChannel) Deliver(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
	return c.p.Send(ctx, env)
}

// instance is one process of a multi-instance deployment: its own pool,
// Store, provider and Notifier, sharing only the database.
type instance struct {
	store *pgstore.Store
	prov  *memprovider.Provider
	n     *notify.Notifier
}

const smsPrice = 100

func newInstance(t *testing.T, schema, name string, rejectEvery int64) instance {
	t.Helper()
	s := pgstoretest.Store(t, schema) // its own pool, migrated, as a process on start
	prov := memprovider.New(name)
	if rejectEvery > 0 {
		var sends atomic.Int64
		prov.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
			if sends.Add(1)%rejectEvery == 0 {
				return nil, notify.Errorf(notify.CodeRejected, "%s: number blocked", name)
			}
			return &notify.Result{}, nil
		})
	}
	prices := &wallet.PriceList{Currency: record.INR(), SMS: wallet.SMSPrices{Plain: smsPrice}}
	n, err := notify.New(s, s,
		notify.WithPrices(prices),
		notify.WithIdempotency(s),
		notify.WithChannel(smsChannel{prov}),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}))
	must(t, err)
	return instance{store: s, prov: prov, n: n}
}

type outcome struct {
	r   *notify.Receipt
	err error
}

// TestTwoNotifiers runs two Notifiers, each with its own pool and Store on
// one database, and fires concurrent sends at both that together ask for
// more than the wallet holds; some sends are rejected by the provider and
// refunded. The shared wallet must never pay more than it holds, every
// message must be charged at most once, and the ledger must add up.
func TestTwoNotifiers(t *testing.T) {
	schema := pgstoretest.Schema(t)
	a := newInstance(t, schema, "gw-a", 5)
	b := newInstance(t, schema, "gw-b", 7)
	ctx := context.Background()
	const opening = 50 * smsPrice
	must(t, a.store.PutAccount(ctx, &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}))
	must(t, a.store.OpenWallet(ctx, "acme", inr(opening)))

	const perInstance, workers = 45, 8 // 90 sends for 50 paid slots
	var mu sync.Mutex
	var outcomes []outcome
	var wg sync.WaitGroup
	for _, inst := range []instance{a, b} {
		jobs := make(chan int)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					r, err := inst.n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210",
						Message: fmt.Sprintf("hello %d", i)})
					mu.Lock()
					outcomes = append(outcomes, outcome{r, err})
					mu.Unlock()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(jobs)
			for i := range perInstance {
				jobs <- i
			}
		}()
	}
	wg.Wait()

	var sent, rejected, short []*notify.Receipt
	for _, o := range outcomes {
		switch code := notify.CodeOf(o.err); {
		case o.err == nil && o.r.Status == record.StateSent:
			sent = append(sent, o.r)
		case code == notify.CodeRejected && o.r != nil:
			rejected = append(rejected, o.r)
		case code == notify.CodeInsufficientFunds && o.r == nil:
			short = append(short, nil)
		default:
			t.Fatalf("unexpected outcome %+v, %v", o.r, o.err)
		}
	}
	t.Logf("%d sent, %d rejected and refunded, %d refused for funds", len(sent), len(rejected), len(short))
	if len(short) == 0 {
		t.Fatal("the sends never exceeded the balance; the test proves nothing")
	}

	var charged int64
	for _, r := range sent {
		if r.Cost.Minor != smsPrice {
			t.Fatalf("sent receipt cost %d", r.Cost.Minor)
		}
		charged += r.Cost.Minor
	}
	if charged > opening {
		t.Fatalf("charged %d from an opening balance of %d", charged, opening)
	}
	for _, inst := range []instance{a, b} {
		wantBalance(t, inst.store, "acme", opening-charged)
		checkLedger(t, inst.store, "acme")
	}

	// The ledger, row by row: a debit for every delivered or rejected
	// message, a refund for every rejected one, nothing else, no ref twice.
	rows, err := a.store.Ledger(ctx, "acme", 0, 0)
	must(t, err)
	ledger := map[string]int64{}
	for _, e := range rows {
		if _, dup := ledger[e.Ref]; dup {
			t.Fatalf("ref %s charged twice", e.Ref)
		}
		ledger[e.Ref] = e.Amount.Minor
	}
	for _, r := range sent {
		if ledger[r.MessageID] != -smsPrice {
			t.Fatalf("sent %s: ledger has %d", r.MessageID, ledger[r.MessageID])
		}
		if _, ok := ledger["refund:"+r.MessageID]; ok {
			t.Fatalf("sent %s was refunded", r.MessageID)
		}
	}
	for _, r := range rejected {
		if ledger[r.MessageID] != -smsPrice || ledger["refund:"+r.MessageID] != smsPrice {
			t.Fatalf("rejected %s: debit %d, refund %d", r.MessageID, ledger[r.MessageID], ledger["refund:"+r.MessageID])
		}
	}
	if want := len(sent) + 2*len(rejected); len(rows) != want {
		t.Fatalf("%d ledger rows, want %d", len(rows), want)
	}
	if got := a.prov.Len() + b.prov.Len(); got != len(sent) {
		t.Fatalf("providers accepted %d messages, %d receipts say sent", got, len(sent))
	}

	// Each instance finds every record, whichever instance wrote it, and
	// it says what the send's receipt said.
	for _, r := range append(sent, rejected...) {
		for _, inst := range []instance{a, b} {
			m, err := inst.store.Message(ctx, "acme", r.MessageID)
			must(t, err)
			if m.State != r.Status || m.Cost() != r.Cost {
				t.Fatalf("recorded %s costing %s, returned %+v", m.State, m.Cost(), r)
			}
		}
	}
}

// TestTwoNotifiersIdempotency sends one request with one idempotency key
// to both instances at once: one message is sent and charged, every other
// caller gets its receipt or a Conflict while it is in flight.
func TestTwoNotifiersIdempotency(t *testing.T) {
	schema := pgstoretest.Schema(t)
	a := newInstance(t, schema, "gw-a", 0)
	b := newInstance(t, schema, "gw-b", 0)
	ctx := context.Background()
	must(t, a.store.PutAccount(ctx, &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}))
	must(t, a.store.OpenWallet(ctx, "acme", inr(1000)))

	req := func() *sms.Request {
		return &sms.Request{Account: "acme", To: "9876543210", Message: "once", IdempotencyKey: "order-42"}
	}
	const callers = 16
	results := make([]outcome, callers)
	var wg sync.WaitGroup
	for i := range callers {
		inst := []instance{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := inst.n.Send(ctx, req())
			results[i] = outcome{r, err}
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, o := range results {
		switch {
		case o.err == nil:
			ids[o.r.MessageID] = true
		case notify.CodeOf(o.err) != notify.CodeConflict:
			t.Fatalf("SendSMS: %v", o.err)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%d different messages for one key: %v", len(ids), ids)
	}
	// Afterwards both instances answer with the first receipt.
	for _, inst := range []instance{a, b} {
		r, err := inst.n.Send(ctx, req())
		must(t, err)
		if !ids[r.MessageID] {
			t.Fatalf("repeat got message %s", r.MessageID)
		}
	}
	wantBalance(t, a.store, "acme", 1000-smsPrice)
	checkLedger(t, a.store, "acme")
	if got := a.prov.Len() + b.prov.Len(); got != 1 {
		t.Fatalf("%d messages went out", got)
	}
}

// TestReconcilersShareTheWork has three instances reconcile one database
// at once, over records that dead senders left pending and attempting:
// each record is settled by exactly one of them, pending ones refunded
// once, and the books balance.
func TestReconcilersShareTheWork(t *testing.T) {
	schema := pgstoretest.Schema(t)
	ctx := context.Background()
	seed := pgstoretest.Store(t, schema)
	must(t, seed.PutAccount(ctx, &notify.Account{ID: "acme", Currency: record.INR()}))
	const records = 60
	opening := inr(records * smsPrice)
	must(t, seed.OpenWallet(ctx, "acme", opening))
	dead := time.Now().Add(-time.Hour)
	for i := range records {
		m := &record.Message{ID: fmt.Sprintf("dead-%d", i), Account: "acme", Kind: sms.Kind, Request: sms.Kind,
			To: "9876543210", Metered: true, Charge: inr(smsPrice), CreatedAt: dead}
		if _, err := seed.Open(ctx, m); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 { // the vendor was being called when its sender died
			if _, err := seed.Move(ctx, "acme", m.ID, store.Update{State: record.StateAttempting, At: dead}); err != nil {
				t.Fatal(err)
			}
		}
	}

	var mu sync.Mutex
	var total notify.ReconcileResult
	var wg sync.WaitGroup
	for i := range 3 {
		s := pgstoretest.Store(t, schema)
		n, err := notify.New(s, s, notify.WithPrices(wallet.DefaultINR()))
		must(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := n.Reconcile(ctx)
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
			mu.Lock()
			total.Refunded += res.Refunded
			total.Unknown += res.Unknown
			mu.Unlock()
		}()
	}
	wg.Wait()
	if want := (notify.ReconcileResult{Refunded: records / 2, Unknown: records / 2}); total != want {
		t.Errorf("the instances settled %+v together, want %+v", total, want)
	}
	wantBalance(t, seed, "acme", records/2*smsPrice) // the pending half refunded, once
	if err := seed.CheckLedger(ctx, "acme"); err != nil {
		t.Error(err)
	}
	if open, err := seed.Stale(ctx, time.Now().Add(time.Hour), records); err != nil || len(open) != 0 {
		t.Errorf("open records left: %d, %v", len(open), err)
	}
}

// TestReportAnswersTheRecordAsStored: on PostgreSQL too, a report's
// answer carries each record as the ledger then holds it (the report's
// step at the database's precision), though the Notifier reads it from
// no store once its move applied from the state the report read.
func TestReportAnswersTheRecordAsStored(t *testing.T) {
	schema := pgstoretest.Schema(t)
	a := newInstance(t, schema, "mem", 0)
	ctx := context.Background()
	must(t, a.store.OpenWallet(ctx, "acme", notify.Money{Minor: 10_000, Currency: record.INR()}))
	must(t, a.store.PutAccount(ctx, &notify.Account{ID: "acme", Currency: record.INR()}))
	sent, err := a.n.Send(ctx, &sms.Request{Account: "acme", To: "+919876543210", Message: "hello"})
	must(t, err)
	for _, rep := range []*notify.DeliveryReport{
		{State: record.StateDelivered}, // now, at the Notifier's nanoseconds
		{State: record.StateFailed, VendorCode: "30008", Error: "unknown error", At: time.Now().Add(time.Second)},
	} {
		rep.Provider, rep.ProviderMessageID = sent.Provider, sent.ProviderMessageID
		res, err := a.n.Report(ctx, rep)
		must(t, err)
		stored, err := a.store.Message(ctx, "acme", sent.MessageID)
		must(t, err)
		if len(res.Messages) != 1 || !reflect.DeepEqual(res.Messages[0], stored) {
			t.Fatalf("report %s answered\n%+v\nthe database holds\n%+v", rep.State, *res.Messages[0], stored)
		}
	}
}
