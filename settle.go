package notify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// The settle step: the outcome moves the record (sent, failed and
// refunded, or unknown and charged), a hard bounce joins the suppression
// list, the observers hear of it, and a refund the store could not write
// is retried in the background (below).

// settleTimeout bounds each refund, record and idempotency write. They run
// detached from the caller's context, because a caller that gives up must
// not leave a charge without its refund or a send without its record.
const settleTimeout = 5 * time.Second

// settle is settleOutcome in a span.
func (n *Notifier) settle(ctx context.Context, op string, acct *Account, env *Envelope, r *Receipt, charged bool,
	res *Result, attempts int, outcome record.State, derr error) (*Receipt, error) {
	ctx, sp := n.start(ctx, spanSettle, false)
	r, err := n.settleOutcome(ctx, op, acct, env, r, charged, res, attempts, outcome, derr)
	sp.endReceipt(r, err)
	return r, err
}

// settleOutcome finishes r, the receipt of env, by the outcome of its
// delivery: sent (the charge stands, less what a cheaper failover saves),
// unknown (the charge stands, nothing retries it) or not accepted
// (refunded once). settle traces it.
func (n *Notifier) settleOutcome(ctx context.Context, op string, acct *Account, env *Envelope, r *Receipt, charged bool,
	res *Result, attempts int, outcome record.State, derr error) (*Receipt, error) {
	r.Attempts = attempts
	switch outcome {
	case record.StateSent:
		r.Status = record.StateSent
		if res.Provider != "" {
			r.Provider = res.Provider
		}
		r.ProviderMessageID = res.ProviderMessageID
		r.Gateway = res.Route
		r.Note = res.Note
		r.Cost = env.Price
		var reprice *Money
		if charged && (res.Route != "" && res.Route != env.Route || r.Provider != env.Provider) {
			reprice = n.cheaperPrice(acct, env, res.Route, r.Provider)
		}
		moved, ok := n.finish(ctx, env, r, record.StateSent, reprice)
		if ok && reprice != nil && moved.Charge.Minor == reprice.Minor {
			// The move into sent lowered the charge and credited the
			// difference back, in one step.
			r.Cost = *reprice
			n.balanceAfter(ctx, acct, r, moved)
		}
		n.report(ctx, env, r, nil)
		return r, nil

	case record.StateUnknown:
		// The vendor may have it: the charge stands and nothing retries it.
		e := unknownError(op, env.Provider, derr)
		r.Status = record.StateUnknown
		r.Cost = env.Price
		r.ErrorCode, r.Error = CodeOf(e), e.Error()
		var pe *Error
		if errors.As(derr, &pe) && pe.Provider != "" {
			// The provider that may have it, not the one Prepare chose:
			// its reports must find the record (a chat failover).
			r.Provider = pe.Provider
		}
		n.finish(ctx, env, r, record.StateUnknown, nil)
		n.report(ctx, env, r, e)
		return r, e
	}
	// Not accepted, for certain.
	return n.fail(ctx, acct, env, r, charged, wrap(op, env.Provider, CodeUnavailable, derr))
}

// fail settles a message the vendor certainly did not accept: its charge
// is refunded, exactly once, and its record marked failed, in one step.
// When the ledger fails that step for a reason that may pass, the step is
// retried in the background (moveLater) and the error says so: the
// refund follows once the store answers again.
func (n *Notifier) fail(ctx context.Context, acct *Account, env *Envelope, r *Receipt, charged bool, e *Error) (*Receipt, error) {
	n.noteBounce(ctx, acct, env, e)
	r.Status = record.StateFailed
	r.Provider = e.Provider
	r.Cost = Money{Currency: env.Price.Currency}
	r.ErrorCode, r.Error = CodeOf(e), e.Error()
	var late *lateMove
	// First, the light step that says the vendor does not have it: back
	// to pending (nothing is in flight). Should the refund's heavier step
	// below fail and the process die before it lands, the reconciler
	// finds a pending record and refunds it, where an attempting one
	// would keep its charge.
	_ = n.markAll(ctx, []*Envelope{env}, record.StatePending)
	u := store.Update{State: record.StateFailed, At: n.now(),
		Provider: r.Provider, Attempts: r.Attempts, ErrorCode: string(r.ErrorCode), Error: r.Error, Tried: r.Tried}
	moved, err := n.move(ctx, acct.ID, env.ID, u)
	switch {
	case err == nil:
		if charged {
			n.balanceAfter(ctx, acct, r, moved)
		}
	case CodeOf(err) == CodeConflict && moved.State == record.StateFailed:
		// Failed already, by a report or the reconciler: what stands is
		// what that step left (a report may have kept the charge).
		r.Cost = costOf(moved)
	case passing(err):
		// The store is failing now (unreachable, timing out): the record
		// stays pending (or attempting, if that step failed too) and the
		// charge stands, for now.
		r.Cost = env.Price
		refusal := *e
		late = &lateMove{account: acct.ID, id: env.ID, u: u, refusal: &refusal}
		e.Err = fmt.Errorf("%w; %s is not written yet (%w) and is retried until the store takes it",
			e.Err, refundOf(env, charged), &StoreError{Store: "ledger", Err: err})
		r.Error = e.Error()
	default:
		r.Cost = env.Price
		e.Err = fmt.Errorf("%w; %s could not be written (%w)", e.Err, refundOf(env, charged), &StoreError{Store: "ledger", Err: err})
		r.Error = e.Error()
	}
	n.report(ctx, env, r, e)
	if late != nil {
		late.receipt = *r // a copy: the caller owns r from here on
		n.moveLater(ctx, late)
	}
	return r, e
}

// refundOf names the step that refunds env's charge: the move of its
// record into failed, which refunds when charged is set.
func refundOf(env *Envelope, charged bool) string {
	if charged {
		return "its refund of " + env.Price.String()
	}
	return "its record's move to failed"
}

// balanceAfter sets r.Balance to the account's balance after moved, a
// move that refunded or cut the price: as the move answered it, or read
// when the store did not say.
func (n *Notifier) balanceAfter(ctx context.Context, acct *Account, r *Receipt, moved store.Moved) {
	if moved.Balance.Currency.Code != "" {
		r.Balance = moved.Balance
		return
	}
	n.readBalance(ctx, acct, r)
}

// readBalance sets r.Balance to the account's balance after a refund or
// a price cut that the ledger made.
func (n *Notifier) readBalance(ctx context.Context, acct *Account, r *Receipt) {
	sctx := detached(ctx)
	defer sctx.release()
	if b, err := n.ledger.Balance(sctx, acct.ID); err == nil {
		r.Balance = b.Available
	}
}

// report finishes r with err, if any, and tells the observers, with the
// event of r's status. env is nil for a dual
// OTP's combined receipt.
func (n *Notifier) report(ctx context.Context, env *Envelope, r *Receipt, err error) {
	if err != nil {
		r.ErrorCode = CodeOf(err)
		r.Error = err.Error()
	}
	e := Event{Type: r.Status, Envelope: env, Receipt: r, Err: err}
	if env != nil && env.Price.Minor > r.Cost.Minor {
		// What was charged and no longer is: a refund, a failover's price cut.
		e.Refund = Money{Minor: env.Price.Minor - r.Cost.Minor, Currency: env.Price.Currency}
	}
	n.observe(ctx, e)
}

// finish moves the record of an accepted or unknown message to its final
// state, and reports whether it is there. A move the store fails for a
// reason that may pass (the database unreachable) is retried in the
// background until it lands (moveLater), so that a message the caller
// was told was sent is recorded sent, not left attempting for the
// reconciler to take for unknown (it moves from unknown to sent all the
// same, with a cheaper failover's credit). The charge stands meanwhile,
// which is right for both outcomes.
func (n *Notifier) finish(ctx context.Context, env *Envelope, r *Receipt, to record.State, reprice *Money) (store.Moved, bool) {
	u := store.Update{State: to, At: n.now(),
		Provider: r.Provider, ProviderMessageID: r.ProviderMessageID, Gateway: r.Gateway,
		Attempts: r.Attempts, ErrorCode: string(r.ErrorCode), Error: r.Error, Note: r.Note, Reprice: reprice,
		Tried: r.Tried}
	moved, err := n.move(ctx, env.Account.ID, env.ID, u)
	if err != nil && moved.State != to {
		if passing(err) {
			u.Tried = slices.Clone(u.Tried) // the caller owns r's
			n.moveLater(ctx, &lateMove{account: env.Account.ID, id: env.ID, u: u})
			r.Note = joinNote(r.Note, "message record: not written yet ("+err.Error()+"); retried until the store takes it")
		} else {
			r.Note = joinNote(r.Note, "message record: "+err.Error())
		}
		return moved, false
	}
	return moved, true
}

// move applies u to the record, detached from the caller's context, and
// tries again while the store fails for a reason that may pass. A
// Conflict answers where the record stands.
func (n *Notifier) move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	var m store.Moved
	tried := false
	err := settleRetry(ctx, func(sctx context.Context) (err error) {
		m, err = n.ledger.Move(sctx, account, id, u)
		if tried && CodeOf(err) == CodeConflict && m.State == u.State && sameInstant(m.UpdatedAt, u.At) {
			return nil // the try whose answer was lost did move it
		}
		tried = true
		return err
	})
	return m, err
}

// sameInstant reports whether a and b are one time as a store keeps it:
// PostgreSQL keeps microseconds.
func sameInstant(a, b time.Time) bool {
	return a.Sub(b).Abs() < time.Microsecond
}

// detached returns the context of a store call that must complete even
// when the caller has gone: ctx's values without its cancellation, bounded
// by settleTimeout from when the store first waits on it (Done) or asks
// its deadline; a store that only asks Err (memstore) runs in
// microseconds and is not bounded, so the send does not read the clock
// for it. An attemptCtx, which pays for a timer only when a store waits on
// Done (a database does), and which ignores ctx's end itself rather than
// through context.WithoutCancel, which would cost each store call of a
// send an allocation. The caller releases it.
func detached(ctx context.Context) *attemptCtx {
	return &attemptCtx{Context: ctx, detached: true}
}

// settleRetry runs fn, each time under a context of its own (detached),
// up to three times while it fails with a code that may pass
// (Unavailable, DeadlineExceeded, Internal). fn must be idempotent.
func settleRetry(ctx context.Context, fn func(context.Context) error) error {
	var err error
	for try := 0; try < 3; try++ {
		sctx := detached(ctx)
		err = fn(sctx)
		sctx.release()
		if err == nil {
			return nil
		}
		if !passing(err) {
			return err
		}
	}
	return err
}

// passing reports whether a store's error may pass if the call is made
// again: Unavailable, DeadlineExceeded or Internal.
func passing(err error) bool {
	c := CodeOf(err)
	return c == CodeUnavailable || c == CodeDeadlineExceeded || c == CodeInternal
}

// cheaperPrice returns the price of env through the route and provider
// used, when the channel delivered it through a route (a chat failover to
// the other gateway) or a provider (a failover to the next) cheaper than
// the one it was priced and charged for; nil otherwise. A dearer one is
// not charged extra: the caller agreed to the first price, and asking for
// more after delivery could fail for want of funds.
func (n *Notifier) cheaperPrice(acct *Account, env *Envelope, route, provider string) *Money {
	alt := *env
	if route != "" {
		alt.Route = route
	}
	alt.Provider = provider
	price, err := n.pricer.Price(acct, &alt)
	if err != nil || price.Minor < 0 || price.Minor >= env.Price.Minor || !price.Currency.Same(env.Price.Currency) {
		return nil // no cheaper price in the currency charged: the charge stands
	}
	return &price
}

func (n *Notifier) observe(ctx context.Context, e Event) {
	for _, o := range n.observers {
		safeObserve(ctx, o, e)
	}
}

func safeObserve(ctx context.Context, o Observer, e Event) {
	defer func() { _ = recover() }() // an observer's bug must not break a send
	o.Observe(ctx, e)
}

// joinNote joins two notes, either of which may be empty.
func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// noteBounce adds the recipient of env to the account's list when err,
// a certain refusal, carries a store.Bounce (a mail server's 5.1.1 "no
// such user"), so that later sends to it are refused before they are
// charged. It is best effort, on a context detached from the caller's
// and bounded like a refund: a list that fails to take it leaves the
// next send to bounce again, which costs a refund, not a wrong charge.
func (n *Notifier) noteBounce(ctx context.Context, acct *Account, env *Envelope, err error) {
	var b store.Bounce
	if env == nil || !store.SuppressibleKind(env.Kind) || !errors.As(err, &b) {
		return
	}
	reason, to := b.BounceReason() // one the list does not know it refuses (ErrInvalid), as any failure
	if to == "" {
		to = env.To
	}
	key, ok := n.listKey(env.Kind, to)
	if !ok {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	_, _ = n.ledger.AddSuppression(wctx, store.Suppression{Account: acct.ID, Kind: env.Kind, To: key, Reason: reason, At: n.now()})
}

// The backoff of a late move's tries: the first waits about
// lateMoveFirst, each later one twice as long, up to lateMoveMax.
const (
	lateMoveFirst = 100 * time.Millisecond
	lateMoveMax   = 5 * time.Second
)

// A refusal's refund when the store fails at that moment.
//
// A message its vendor certainly refused is refunded by one Ledger
// step, the move of its record into failed. When that step fails for a
// reason that may pass (the database unreachable or timing out), even
// after the pipeline's immediate retries, the record stays attempting and
// the charge stands.
//
// So the move is retried in the background (moveLater), detached from
// the caller, with backoff, until the store takes it, however long it is
// down: a database failover longer than the settle threshold must not
// turn a refusal into a kept charge. In the usual case, a store back
// within the threshold, the refund lands before the reconciler would take
// the record. After a longer outage the reconciler may take it first, for
// a send whose holder died while its vendor may have had the message, and
// settle it unknown with its charge; the late move into failed from there
// refunds it all the same (record.CanMove allows unknown -> failed), and
// the ledger moves a record into failed once, so the refund is paid once
// whichever lands first. The caller's error says that the refund is not
// written yet and is retried.
//
// The durable mark that the vendor does not have the message is the
// record's state pending: before the move into failed, the pipeline moves
// the record back to pending, a light step without money, which a store
// that fails the refund's transaction (a lock timeout, a serialization
// failure) usually takes. A record left pending is refunded by the
// reconciler, so a process that dies before the move into failed lands
// still leaves the refusal refunded. Nothing is written before the
// refusal is certain (no mark ahead of the vendor's answer), so no step
// can refund a message the vendor may have: the moves follow the refusal
// of the last attempt, after which no attempt follows.
//
// A record whose opening's answer was lost (the store wrote it, or not,
// and the vendor was not called) is settled by the same two steps and the
// same late retry (unopened, in charge.go).
//
// What stays open: a store unreachable for both steps and a process that
// dies before the store comes back. Nothing durable then says the vendor
// refused the message (or never had it); the record stays attempting and
// the reconciler settles it unknown, keeping its charge, the safe side,
// until the vendor's failure report (Notifier.Report) or an operator
// settles it. That holds of one write per send: before records opened
// attempting, the step that marked an open record attempting was that
// write.

// lateMove is a move that settles a send, which the ledger failed when
// the outcome came: into failed, refunding a certainly refused message;
// into sent (or unknown), recording what the caller was told.
type lateMove struct {
	account, id string
	// u is the move as the pipeline tried it; its At is kept, so that a
	// try whose answer was lost is recognised by a later one (Conflict,
	// in u.State at the same instant).
	u store.Update
	// refusal, for a move into failed, is the vendor's refusal, as the
	// record keeps it, and receipt the send's receipt as its caller got it
	// (charge standing): the observers hear of the refund when it lands
	// (refundedLate). Nil for a move whose outcome they heard of already.
	refusal *Error
	receipt Receipt
}

// moveLater retries l's move on a goroutine of its own, detached from
// ctx's cancellation, until it lands or the store answers that it cannot
// (Conflict: the record was settled otherwise, say a reconciler's refund
// of a pending record; NotFound, InvalidArgument). It does not give up
// while the store fails for a reason that may pass, so it lives as long as
// the outage, one goroutine and one try every lateMoveMax per send. A
// record the reconciler took for unknown meanwhile still moves: unknown
// goes to failed (refunded) and to sent (record.CanMove).
func (n *Notifier) moveLater(ctx context.Context, l *lateMove) {
	go n.retryMove(context.WithoutCancel(ctx), l)
}

func (n *Notifier) retryMove(ctx context.Context, l *lateMove) {
	delay := lateMoveFirst
	for {
		t := time.NewTimer(delay/2 + rand.N(delay/2+1))
		<-t.C
		sctx := newAttemptCtx(ctx, time.Now().Add(settleTimeout))
		m, err := n.ledger.Move(sctx, l.account, l.id, l.u)
		sctx.release()
		switch {
		case err == nil:
			n.movedLate(ctx, l, m)
			return
		case CodeOf(err) == CodeConflict:
			if m.State == l.u.State && sameInstant(m.UpdatedAt, l.u.At) {
				n.movedLate(ctx, l, m) // a try whose answer was lost did move it
			}
			return // else settled otherwise (a reconciler's refund of a pending record)
		case !passing(err):
			return
		}
		delay = min(2*delay, lateMoveMax)
	}
}

// costOf is what stays charged for a record after move m, as
// record.Message.Cost says: zero once refunded, the charge otherwise.
func costOf(m store.Moved) Money {
	if m.Refunded {
		return Money{Currency: m.Charge.Currency}
	}
	return m.Charge
}

// movedLate tells the observers of a late refund once it landed; a
// late move into sent or unknown they heard of when the send answered.
func (n *Notifier) movedLate(ctx context.Context, l *lateMove, m store.Moved) {
	if l.refusal != nil {
		n.refundedLate(ctx, l, m)
	}
}

// refundedLate tells the observers of l's move into failed, m, once it
// landed: StateFailed with the refund, and the receipt as it stands now.
func (n *Notifier) refundedLate(ctx context.Context, l *lateMove, m store.Moved) {
	r := l.receipt
	r.Cost = costOf(m)
	e := *l.refusal
	what := "its record was marked failed"
	if m.Refunded {
		what = "its refund of " + m.Charge.String() + " was written"
	}
	e.Err = fmt.Errorf("%w; %s once the ledger answered again", e.Err, what)
	r.ErrorCode, r.Error = e.Code, e.Error()
	if m.Refunded {
		sctx := detached(ctx)
		if b, err := n.ledger.Balance(sctx, l.account); err == nil {
			r.Balance = b.Available
		}
		sctx.release()
	}
	ev := Event{Type: record.StateFailed, Receipt: &r, Err: &e}
	if m.Refunded {
		ev.Refund = m.Charge
	}
	n.observe(ctx, ev)
}
