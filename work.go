package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// work is queued.Sender.Work: it claims job's record (moving it to
// attempting, which one worker wins) and delivers it as Send does, with
// the charge taken when it was queued.
func (n *Notifier) work(ctx context.Context, job queue.Job) (_ time.Time, err error) {
	const op = "queued.Work"
	ctx, sp := n.startWork(ctx, job)
	defer func() { sp.end(err) }()
	m, err := n.ledger.Message(ctx, job.Account, job.Message)
	switch {
	case CodeOf(err) == CodeNotFound:
		return time.Time{}, nil // never committed, or long settled and forgotten
	case err != nil:
		return time.Time{}, storeFailure(op, "ledger", err)
	case !m.State.Waiting():
		return time.Time{}, nil // taken, canceled or settled already
	case m.State == record.StateScheduled && n.now().Before(m.SendAt):
		return m.SendAt, nil // run early: wait for its time
	}
	p, acct, perr := n.prepareQueued(ctx, op, m)
	if perr != nil {
		switch CodeOf(perr) {
		case CodeUnavailable, CodeDeadlineExceeded, CodeCanceled:
			return time.Time{}, perr // nothing moved, and it may pass: the job runs again
		}
		return time.Time{}, n.failQueued(ctx, op, m, perr)
	}
	env := p.env
	// The list and the preferences again: the recipient may have opted
	// out or declined the category since the send was queued, or the
	// account removed the category (InvalidArgument, which no run can
	// mend). Refunded, never sent; a list or preferences that cannot be
	// read leave the job to run again.
	if err := n.refusedFor(ctx, op, acct, []*Envelope{env}); err != nil {
		if !recipientRefused(err) && CodeOf(err) != CodeInvalidArgument {
			return time.Time{}, err
		}
		return time.Time{}, n.failQueued(ctx, op, m, err)
	}
	if until := n.heldUntil(env, n.now()); !until.IsZero() {
		return until, nil // taken after its send window closed: it waits for the next opening
	}
	if m.Follows != "" {
		// A timed fallback: not when the message it follows was
		// confirmed. Asked before the claim, to refund an unneeded step
		// without taking it, and again after, since a report may land
		// in between.
		why, err := n.unneeded(ctx, m)
		if err != nil {
			return time.Time{}, storeFailure(op, "ledger", err)
		}
		if why != "" {
			n.cancelSteps(ctx, m.Account, m.ID, m.State, why)
			return time.Time{}, nil
		}
	}
	// The claim: one worker wins it, and a cancel after it conflicts. A
	// claim whose answer was lost is tried again, and found to have
	// landed (n.move): the record is then this worker's to send, where
	// giving up would leave it attempting for the reconciler to charge
	// as unknown.
	// A send slot of the queue's is held from the claim to the vendor's
	// answer only: the reads above and the outcome's write below run
	// beside other jobs' vendor calls.
	if err := job.Slots.Take(ctx); err != nil {
		return time.Time{}, wrap(op, "", CodeCanceled, err)
	}
	slot := sync.OnceFunc(job.Slots.Give)
	defer slot()
	if err := ctx.Err(); err != nil {
		return time.Time{}, wrap(op, "", CodeCanceled, err)
	}
	claim := store.Update{State: record.StateAttempting, From: m.State, At: n.now(), Provider: env.Provider}
	if _, err := n.move(ctx, m.Account, m.ID, claim); err != nil {
		if CodeOf(err) == CodeConflict {
			return time.Time{}, nil
		}
		return time.Time{}, storeFailure(op, "ledger", err)
	}
	if m.Follows != "" {
		switch why, err := n.unneeded(ctx, m); {
		case err != nil:
			// Unsure whether it is needed: never a fallback that may not
			// be. It waits, and asks again.
			u := store.Update{State: record.StateQueued, From: record.StateAttempting, At: n.now()}
			if _, merr := n.move(ctx, m.Account, m.ID, u); merr == nil {
				return n.now().Add(30 * time.Second), nil
			}
			why = "not sent: whether it was needed could not be read: " + err.Error()
			fallthrough
		case why != "":
			n.cancelSteps(ctx, m.Account, m.ID, record.StateAttempting, why)
			return time.Time{}, nil
		}
	}
	r := n.receiptOf(acct, env, m.CreatedAt)
	r.Tried = m.Tried
	res, attempts, outcome, derr := n.deliver(ctx, p.ch, env, &r.Tried)
	slot()
	attempts += m.Attempts
	if outcome == record.StateFailed && IsRetryable(derr) && takes(m) < queueTries {
		if at, ok := n.requeue(ctx, m, r, attempts, derr); ok {
			return at, nil
		}
	}
	_, _ = n.settle(ctx, op, acct, env, r, env.Price.Minor > 0, res, attempts, outcome, derr)
	n.worked(ctx, sp, r)
	return time.Time{}, nil
}

// prepareQueued prepares the request m keeps, as its channel decodes it,
// for the account as it stands now; the price stays what was charged.
func (n *Notifier) prepareQueued(ctx context.Context, op string, m *record.Message) (prepared, *Account, error) {
	acct, err := n.account(ctx, op, m.Account)
	if err != nil {
		return prepared{}, nil, err
	}
	ch := n.channels[m.Kind]
	codec, ok := ch.(RequestCodec)
	if !ok {
		return prepared{}, nil, &Error{Code: CodeUnavailable, Op: op, Err: fmt.Errorf("no %s channel that can decode queued requests is configured", m.Kind)}
	}
	req, err := codec.DecodeRequest(m.Payload)
	if err != nil {
		return prepared{}, nil, &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("decoding the queued request: %w", err)}
	}
	p, err := n.prepareAsIs(ctx, op, acct, req) // localized when it was queued
	if err != nil {
		return prepared{}, nil, err
	}
	p.env.ID, p.env.Price, p.env.IdempotencyKey = m.ID, m.Charge, m.IdempotencyKey
	p.env.Localized = nil // not read: the payload is in the locale charged for
	return p, acct, nil
}

// failQueued fails m, still queued or scheduled, refunded, for the reason
// err: its request no longer prepares. A record moved meanwhile (a
// cancel, another worker) is left as it stands.
func (n *Notifier) failQueued(ctx context.Context, op string, m *record.Message, err error) error {
	_, merr := n.failWaiting(ctx, nil, m, m.State, CodeOf(err), "not sent: "+err.Error(), err)
	if merr != nil && CodeOf(merr) != CodeConflict {
		return storeFailure(op, "ledger", merr) // the job runs again, and tries again
	}
	return nil
}

// takes counts how often workers took m: the queued steps of its history
// (the first included) and the scheduled one.
func takes(m *record.Message) int {
	n := 0
	for _, c := range m.History {
		if c.State.Waiting() {
			n++
		}
	}
	return n
}

// requeue moves m, refused for a reason that may pass, back to queued,
// its charge held, and returns when the queue should run it again. It
// reports false when the move failed: the caller settles the refusal.
func (n *Notifier) requeue(ctx context.Context, m *record.Message, r *Receipt, attempts int, derr error) (time.Time, bool) {
	at := n.now().Add(queue.Backoff(takes(m)) * 30) // 30 s, 1 min, 2 min, 4 min
	if e := (*Error)(nil); errors.As(derr, &e) && n.now().Add(e.RetryAfter).After(at) {
		at = n.now().Add(e.RetryAfter)
	}
	u := store.Update{State: record.StateQueued, From: record.StateAttempting, At: n.now(), Attempts: attempts, Tried: r.Tried,
		ErrorCode: string(CodeOf(derr)), Error: "retried later: " + derr.Error()}
	if _, err := n.move(ctx, m.Account, m.ID, u); err != nil {
		return time.Time{}, false
	}
	return at, true
}

// startWork starts the span of a worker's run of job.
func (n *Notifier) startWork(ctx context.Context, job queue.Job) (context.Context, span) {
	ctx, sp := n.start(ctx, spanWork, true)
	if sp.recording() {
		sp.s.SetAttributes(str(keyMessageID, job.Message), str(keyAccountID, job.Account))
		if link, ok := n.tracing.sends.get(job.Account, job.Message); ok {
			sp.s.AddLink(link) // the enqueue's
		}
	}
	return ctx, sp
}

// worked records, on sp, a worker's span, which ctx carries, the receipt
// of the send it made, and remembers the span for the message's reports.
func (n *Notifier) worked(ctx context.Context, sp span, r *Receipt) {
	if n.tracing == nil || r == nil {
		return
	}
	n.remember(ctx, r.Account, r.MessageID)
	if sp.recording() {
		sp.s.SetAttributes(str(keyKind, string(r.Kind)))
	}
	sp.receipt(r)
}
