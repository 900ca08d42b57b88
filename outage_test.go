package notify_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// A database outage around a certain refusal, in the order that kept the
// charge before: the store goes away during the vendor call, stays away
// for several settle thresholds, and comes back to the reconciler before
// the refusal's own retries reach it.
const (
	outageSettle  = 50 * time.Millisecond // the settle threshold of these tests
	outageTimeout = 20 * time.Millisecond // the attempt timeout, below it
)

// outageLedger is a Ledger whose moves fail as a database that cannot be
// reached fails them: every move while down is set, and the moves that
// settle a send (into failed by the vendor's refusal, into sent) while
// settlesDown is set. Each refused settling move is told on refused,
// with when it came; landed is closed by the first that gets through.
type outageLedger struct {
	store.Ledger
	down, settlesDown atomic.Bool
	refused           chan time.Time
	landed            chan struct{}
	landedOnce        atomic.Bool
}

func newOutageLedger() *outageLedger {
	return &outageLedger{refused: make(chan time.Time, 1024), landed: make(chan struct{})}
}

func (s *outageLedger) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	settles := u.State == record.StateFailed && notify.Code(u.ErrorCode) == notify.CodeRejected || u.State == record.StateSent
	if s.down.Load() || settles && s.settlesDown.Load() {
		if settles {
			select {
			case s.refused <- time.Now():
			default:
			}
		}
		return store.Moved{}, notify.Errorf(notify.CodeUnavailable, "dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	m, err := s.Ledger.Move(ctx, account, id, u)
	if err == nil && settles && s.landedOnce.CompareAndSwap(false, true) {
		close(s.landed)
	}
	return m, err
}

// goDown makes the store unreachable, for every move.
func (s *outageLedger) goDown() {
	s.settlesDown.Store(true)
	s.down.Store(true)
}

// lastFor waits until the refusal's retries have met the outage for d,
// by the times of their refused tries: the outage has lasted that long
// for them.
func (s *outageLedger) lastFor(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d + 10*time.Second)
	var first time.Time
	for {
		select {
		case at := <-s.refused:
			if first.IsZero() {
				first = at
			}
			if at.Sub(first) >= d {
				return
			}
		case <-deadline:
			t.Fatalf("the settling move was not tried again for %v of outage", d)
		}
	}
}

// backForAllButSettles brings the store back for every move but the one
// that settles the send: the reconciler gets there first.
func (s *outageLedger) backForAllButSettles() { s.down.Store(false) }

// backForAll brings the store back for every move.
func (s *outageLedger) backForAll() { s.settlesDown.Store(false) }

// waitLanded waits for the move that settles the send to get through.
func (s *outageLedger) waitLanded(t *testing.T) {
	t.Helper()
	select {
	case <-s.landed:
	case <-time.After(30 * time.Second):
		t.Fatal("the settling move was not written within 30s of the store coming back")
	}
}

// TestRefusalIsRefundedAfterAnOutageOfAnyLength (D1): the vendor
// certainly refuses while the database is away, for 1.5 and for 10
// settle thresholds; the reconciler, back first, settles the record
// unknown with its charge; the refusal's own retry still moves it to
// failed, refunded once, and the record counts the one vendor call.
func TestRefusalIsRefundedAfterAnOutageOfAnyLength(t *testing.T) {
	for _, settles := range []float64{1.5, 10} {
		t.Run(time.Duration(settles*float64(outageSettle)).String(), func(t *testing.T) {
			out := newOutageLedger()
			r := newRecordRig(t, func(s store.Ledger) store.Ledger {
				out.Ledger = s
				return out
			})
			refunds := make(chan int64, 16)
			r.options = []notify.Option{notify.WithSettleAfter(outageSettle), notify.WithTimeout(outageTimeout),
				notify.WithObserver(refundsTo(refunds))}
			r.n = r.instance(t)
			r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
				out.goDown() // during the vendor call, which refuses for good
				return nil, notify.Errorf(notify.CodeRejected, "411 Invalid Numbers")
			})
			rc, err := r.n.Send(context.Background(), smsReq("hello"))
			if notify.CodeOf(err) != notify.CodeRejected || rc == nil || rc.Status != record.StateFailed || r.balance(t) != opening-25 {
				t.Fatalf("send = %+v, %v, balance %d; want refused, its refund not written yet", rc, err, r.balance(t))
			}
			out.lastFor(t, time.Duration(settles*float64(outageSettle)))
			out.backForAllButSettles()
			r.clock.Advance(time.Duration(settles*float64(outageSettle)) + time.Second)
			if res, err := r.instance(t).Reconcile(context.Background()); err != nil || res != (notify.ReconcileResult{Unknown: 1}) {
				t.Fatalf("Reconcile = %+v, %v; want the record taken for unknown", res, err)
			}
			if m := r.message(t, rc.MessageID); m.Attempts != 1 {
				t.Errorf("the reconciler's record counts %d attempts; the vendor was called once", m.Attempts)
			}
			out.backForAll()
			out.waitLanded(t)
			m := r.message(t, rc.MessageID)
			wantStates(t, m, record.StatePending, record.StateAttempting, record.StateUnknown, record.StateFailed)
			if !m.Refunded || m.Attempts != 1 || notify.Code(m.ErrorCode) != notify.CodeRejected || r.balance(t) != opening {
				t.Fatalf("record %+v, balance %d; want failed by the vendor's refusal, refunded, one attempt", m, r.balance(t))
			}
			waitRefunds(t, refunds, 25)
		})
	}
}

// TestQueuedRefusalIsRefundedAfterAnOutageOfAnyLength is the queued send
// of the same outage (D1): its worker's refusal is refunded once the
// store is back, after the reconciler settled it unknown.
func TestQueuedRefusalIsRefundedAfterAnOutageOfAnyLength(t *testing.T) {
	r := newQueueRig(t)
	out := newOutageLedger()
	out.Ledger = r.ledger
	refunds := make(chan int64, 16)
	n := r.notifierOn(t, out, notify.WithSettleAfter(outageSettle), notify.WithTimeout(outageTimeout),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}), notify.WithObserver(refundsTo(refunds)))
	rc, err := queued.New(n).Enqueue(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	r.vendor.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		out.goDown()
		return nil, notify.Errorf(notify.CodeRejected, "411 Invalid Numbers")
	})
	if r.q.RunDue(context.Background(), queued.New(n)) != 1 {
		t.Fatal("the job did not run")
	}
	out.lastFor(t, 10*outageSettle)
	out.backForAllButSettles()
	r.clock.Advance(10*outageSettle + time.Second)
	if res, err := n.Reconcile(context.Background()); err != nil || res != (notify.ReconcileResult{Unknown: 1}) {
		t.Fatalf("Reconcile = %+v, %v; want the record taken for unknown", res, err)
	}
	out.backForAll()
	out.waitLanded(t)
	m := r.message(t, rc.MessageID)
	if m.State != record.StateFailed || !m.Refunded || m.Attempts != 1 || r.balance(t) != opening {
		t.Fatalf("record %s (refunded %v, %d attempts), balance %d; want failed, refunded, one attempt",
			m.State, m.Refunded, m.Attempts, r.balance(t))
	}
	waitRefunds(t, refunds, smsPrice)
}

// TestSentIsRecordedSentAfterAnOutage (D10 a): the vendor accepts while
// the database is away; the caller is told sent; the reconciler, back
// first, takes the record for unknown; the send's own retry still records
// it sent, with the vendor's ID, and the charge stands once.
func TestSentIsRecordedSentAfterAnOutage(t *testing.T) {
	out := newOutageLedger()
	r := newRecordRig(t, func(s store.Ledger) store.Ledger {
		out.Ledger = s
		return out
	})
	r.options = []notify.Option{notify.WithSettleAfter(outageSettle), notify.WithTimeout(outageTimeout)}
	r.n = r.instance(t)
	r.sms.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		out.goDown()
		return &notify.Result{ProviderMessageID: "vendor-1"}, nil
	})
	rc, err := r.n.Send(context.Background(), smsReq("hello"))
	if err != nil || rc.Status != record.StateSent || !strings.Contains(rc.Note, "retried") {
		t.Fatalf("send = %+v, %v; want sent, its record said to be retried", rc, err)
	}
	out.lastFor(t, 10*outageSettle)
	out.backForAllButSettles()
	r.clock.Advance(10*outageSettle + time.Second)
	if res, err := r.instance(t).Reconcile(context.Background()); err != nil || res != (notify.ReconcileResult{Unknown: 1}) {
		t.Fatalf("Reconcile = %+v, %v; want the record taken for unknown", res, err)
	}
	out.backForAll()
	out.waitLanded(t)
	m := r.message(t, rc.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateUnknown, record.StateSent)
	if m.ProviderMessageID != "vendor-1" || m.Attempts != 1 || r.balance(t) != opening-25 {
		t.Fatalf("record %+v, balance %d; want sent as vendor-1, charged once", m, r.balance(t))
	}
}

// refundsTo is an observer that tells each refund it hears of on c.
func refundsTo(c chan<- int64) notify.Observer {
	return observerFunc(func(_ context.Context, e notify.Event) {
		if e.Refund.Minor != 0 {
			c <- e.Refund.Minor
		}
	})
}

// waitRefunds waits for the observers to have heard of want refunded in
// all (the late refund tells them after the store took it), and of no
// more.
func waitRefunds(t *testing.T, refunds <-chan int64, want int64) {
	t.Helper()
	var got int64
	for got < want {
		select {
		case m := <-refunds:
			got += m
		case <-time.After(10 * time.Second):
			t.Fatalf("the observers heard of %d refunded, want %d", got, want)
		}
	}
	if got != want || len(refunds) != 0 {
		t.Fatalf("the observers heard of %d refunded and %d more refunds, want %d", got, len(refunds), want)
	}
}
