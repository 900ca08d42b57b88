package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// fallback is a step of a timed fallback, as queued.Fallback documents
// it; an unnamed struct, so that package queued converts its Fallback to
// it.
type fallback = struct {
	Request Request
	After   time.Duration
	Confirm record.State
}

// longestChain bounds the walk along a chain's steps (cancelSteps): a
// guard against a corrupt chain, above queued.MaxFallbacks.
const longestChain = 8

// sendWithFallback is queued.Sender.SendWithFallback: req sent as Send
// does, its steps prepared and charged first, scheduled after it.
func (n *Notifier) sendWithFallback(ctx context.Context, op string, req Request, chain []fallback) (*Receipt, error) {
	if len(chain) == 0 {
		return n.Send(ctx, req)
	}
	if err := n.checkChain(op, req, chain); err != nil {
		return nil, err
	}
	acct, err := n.account(ctx, op, req.AccountID())
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		p, err := n.prepareAsIs(ctx, op, acct, req) // localized with the chain
		if err != nil {
			return nil, err
		}
		steps, err := n.prepareChain(ctx, op, acct, &p, chain)
		if err != nil {
			return nil, err
		}
		p, chain, steps, skipped, err := n.skipDeclined(ctx, op, acct, p, chain, steps)
		if err != nil {
			return nil, err
		}
		now := n.now()
		if until := n.heldUntil(p.env, now); !until.IsZero() {
			return nil, n.windowError(op, until, "a message with a fallback goes now or not at all")
		}
		// The preferences were read for every step (skipDeclined): the
		// list, then the limits.
		if err := n.suppressed(ctx, op, acct, []*Envelope{p.env}); err != nil {
			return nil, err
		}
		undo, err := n.take(ctx, op, acct, p.env.Kind, p.env)
		if err != nil {
			return nil, err
		}
		p.env.ID = n.newID()
		var ids []string
		if len(steps) > 0 {
			if ids, err = n.openChain(ctx, op, acct, p.env.ID, chain, steps, now); err != nil {
				undo.unless(nil)
				return nil, err
			}
			p.fallback = ids[0]
		}
		r, err := n.dispatch(ctx, op, acct, p)
		undo.unless(r)
		if r == nil {
			if len(ids) > 0 {
				n.cancelSteps(ctx, acct.ID, ids[0], record.StateScheduled, "not needed: the message it follows was not sent")
			}
			return nil, err
		}
		if len(ids) > 0 {
			r.Fallback = ids[0]
		}
		if skipped != "" {
			r.Note = joinNote(r.Note, skipped)
		}
		return r, err
	}
	return n.keyed(ctx, op, acct, req.Key(), req, run)
}

// skipDeclined drops from a chain, the message p and the steps after it,
// each one whose recipient's preferences decline it (declined), so that
// a timed fallback goes on the channels its recipient takes rather than
// failing: a declined p is replaced by the first step left, which goes
// at once; a declined step's wait is added to the next step's, so that
// the steps after it keep their times. It answers what is left and a
// note naming what was skipped ("" for nothing). When every message of
// the chain is declined, it answers p's refusal, CodeDeclined.
func (n *Notifier) skipDeclined(ctx context.Context, op string, acct *Account, p prepared, chain []fallback, steps []chainStep) (prepared, []fallback, []chainStep, string, error) {
	envs := make([]*Envelope, 1+len(steps))
	envs[0] = p.env
	for i := range steps {
		envs[i+1] = steps[i].p.env
	}
	if !anyCategory(envs) {
		return p, chain, steps, "", nil
	}
	whys, err := n.declinedEach(ctx, func(int) *Account { return acct }, envs)
	if err != nil {
		return p, nil, nil, "", preferenceFailure(op, err)
	}
	var (
		keptChain []fallback
		keptSteps []chainStep
		wait      time.Duration
		skipped   []string
	)
	head := whys[0] == ""
	if !head {
		skipped = append(skipped, string(p.env.Kind))
	}
	for i := range steps {
		switch {
		case whys[i+1] != "":
			skipped = append(skipped, string(steps[i].p.env.Kind))
			wait += chain[i].After
		case !head:
			p, head, wait = steps[i].p, true, 0 // it goes at once: nothing went before it
		default:
			s := chain[i]
			s.After += wait
			wait = 0
			keptChain, keptSteps = append(keptChain, s), append(keptSteps, steps[i])
		}
	}
	if !head {
		return p, nil, nil, "", &Error{Code: CodeDeclined, Op: op, Err: errors.New(declinedText(envs[0], whys[0]))}
	}
	note := ""
	if len(skipped) > 0 {
		note = "skipped the chain's " + strings.Join(skipped, " and ") + " message: the recipient's preferences decline it"
	}
	return p, keptChain, keptSteps, note, nil
}

// checkChain checks what can be checked of a chain without a store.
func (n *Notifier) checkChain(op string, req Request, chain []fallback) error {
	if nilness.Is(req) {
		return &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "request", Message: "is required"}}}
	}
	if n.queue == nil {
		return &Error{Code: CodeUnavailable, Op: op, Err: fmt.Errorf("a fallback needs a queue (notify.WithQueue)")}
	}
	var fe record.FieldErrors
	switch req.(type) {
	case Bulk, Composite:
		fe.Add("request", "a composite or bulk request cannot have a fallback")
	}
	for i, s := range chain {
		field := fmt.Sprintf("fallback.%d", i)
		switch {
		case nilness.Is(s.Request):
			fe.Add(field+".request", "is required")
		case s.Request.AccountID() != req.AccountID():
			fe.Add(field+".request", "must be of the same account as the request")
		case s.Request.Key() != "":
			fe.Add(field+".request", "must not have an idempotency key: the request's covers the chain")
		default:
			switch s.Request.(type) {
			case Bulk, Composite:
				fe.Add(field+".request", "must be a single request")
			}
			if _, ok := n.channels[s.Request.Kind()].(RequestCodec); !ok {
				fe.Addf(field+".request", "the %s channel is not configured or cannot queue its requests", s.Request.Kind())
			}
		}
		if s.After < time.Second || s.After > 24*time.Hour {
			fe.Add(field+".after", "must be from 1 second to 24 hours")
		}
		if s.Confirm != "" && s.Confirm != record.StateDelivered && s.Confirm != record.StateRead {
			fe.Add(field+".confirm", "must be delivered or read")
		}
	}
	if len(fe) > 0 {
		return &Error{Code: CodeInvalidArgument, Op: op, Fields: fe}
	}
	return nil
}

// chainStep is a prepared step of a chain, with its encoded request.
type chainStep struct {
	p       prepared
	payload []byte
}

// prepareChain prepares every step, as a request of its own, before
// anything is charged, and localizes them and first, the message they
// follow (prepared as it is), with one read of their recipients'
// locales.
func (n *Notifier) prepareChain(ctx context.Context, op string, acct *Account, first *prepared, chain []fallback) ([]chainStep, error) {
	steps := make([]chainStep, len(chain))
	var ps []*prepared // those offered another locale
	if first.env.Localized != nil {
		ps = append(ps, first)
	}
	for i, s := range chain {
		p, err := n.prepareAsIs(ctx, op, acct, s.Request)
		if err != nil {
			return nil, prefixFields(err, fmt.Sprintf("fallback.%d.request.", i))
		}
		if p.env.CarriesOTP {
			return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: fmt.Sprintf("fallback.%d.request", i),
				Message: "must not carry a one-time code, which must go at once: send it as a dual OTP"}}}
		}
		if steps[i].p = p; p.env.Localized != nil {
			ps = append(ps, &steps[i].p)
		}
	}
	// The recipients' locales of first and every step in one read; each
	// step queued in its recipient's.
	if err := n.localize(ctx, op, func(int) *Account { return acct }, ps); err != nil {
		return nil, err
	}
	for i := range steps {
		req := steps[i].p.req
		payload, err := n.channels[req.Kind()].(RequestCodec).EncodeRequest(req)
		if err != nil {
			return nil, &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("encoding fallback %d for the queue: %w", i, err)}
		}
		steps[i].payload = payload
	}
	return steps, nil
}

// openChain opens the steps scheduled, each charged, the first following
// first, and returns their IDs. On an error the steps opened are
// canceled, refunded.
func (n *Notifier) openChain(ctx context.Context, op string, acct *Account, first string, chain []fallback, steps []chainStep, now time.Time) ([]string, error) {
	ids := make([]string, len(steps))
	for i := range ids {
		ids[i] = n.newID()
	}
	at, follows := now, first
	for i, s := range steps {
		at = at.Add(chain[i].After)
		env := s.p.env
		env.ID = ids[i]
		confirm := chain[i].Confirm
		if confirm == "" {
			confirm = record.StateDelivered
		}
		m := &record.Message{ID: env.ID, Account: acct.ID, Kind: env.Kind, Request: env.Kind, To: env.To, Country: env.Country,
			Provider: env.Provider, Domain: env.Domain, Units: env.Units, Metered: n.pricer != nil, Charge: env.Price,
			CreatedAt: now, UpdatedAt: now, State: record.StateScheduled, SendAt: at, Payload: s.payload,
			Follows: follows, Confirm: confirm, Note: joinNote("a timed fallback of "+follows, s.p.note)}
		if i+1 < len(ids) {
			m.Fallback = ids[i+1]
		}
		if _, err := n.queue.Open(ctx, m); err != nil {
			n.cancelSteps(ctx, acct.ID, ids[0], record.StateScheduled, "not needed: its chain could not be scheduled")
			return nil, storeFailure(op, "queue", err)
		}
		n.observe(ctx, Event{Type: record.StatePending, Envelope: env})
		follows = ids[i]
	}
	return ids, nil
}

// cancelSteps cancels the step id, standing in from (any waiting state
// when from is empty), and the steps after it that still wait (they
// follow a canceled step): each failed with CodeCanceled and why,
// refunded, the observers told. It reports whether it moved id.
func (n *Notifier) cancelSteps(ctx context.Context, account, id string, from record.State, why string) bool {
	moved := false
	for i := 0; i < longestChain && id != ""; i++ {
		m, err := n.ledger.Message(ctx, account, id)
		if err != nil || from == "" && !m.State.Waiting() {
			return moved
		}
		if from == "" {
			from = m.State
		}
		if _, err := n.failWaiting(ctx, nil, m, from, CodeCanceled, why, nil); err != nil {
			return moved
		}
		moved = true
		id, from, why = m.Fallback, "", fmt.Sprintf("not needed: the step it follows, %s, was canceled", m.ID)
	}
	return moved
}

// failWaiting moves m, standing in from (queued or scheduled, or
// attempting once a worker has claimed it), to failed with code and why,
// its charge refunded in the same step, and tells the observers (with
// cause, when not nil). It answers m's receipt after the move, with the
// balance after the refund when acct is given. When m no longer stands in
// from, the move is CodeConflict and nobody is told: whoever moved it
// first did.
func (n *Notifier) failWaiting(ctx context.Context, acct *Account, m *record.Message, from record.State, code Code, why string, cause error) (*Receipt, error) {
	u := store.Update{State: record.StateFailed, From: from, At: n.now(), ErrorCode: string(code), Error: why}
	moved, err := n.move(ctx, m.Account, m.ID, u)
	if err != nil {
		return nil, err
	}
	m.State, m.Refunded, m.UpdatedAt, m.ErrorCode, m.Error = moved.State, moved.Refunded, moved.UpdatedAt, u.ErrorCode, u.Error
	r := recordReceipt(m)
	if acct != nil && m.Refunded {
		n.readBalance(ctx, acct, r)
	}
	env := &Envelope{ID: m.ID, Kind: m.Kind, To: m.To, Country: m.Country, Provider: m.Provider, Account: acct,
		Price: m.Charge, Units: m.Units}
	n.report(ctx, env, r, cause)
	return r, nil
}

// confirmed reports whether a message in state s is confirmed by the
// step that waits for want (delivered or read).
func confirmed(s, want record.State) bool {
	if want == record.StateRead {
		return s == record.StateRead
	}
	return s == record.StateDelivered || s == record.StateRead
}

// unneeded reports why the step m, taken by a worker, should not go:
// the message it follows was confirmed, or was itself a step canceled (as
// unneeded or by its sender); empty when it should go. A store error
// leaves the question open.
func (n *Notifier) unneeded(ctx context.Context, m *record.Message) (string, error) {
	prev, err := n.ledger.Message(ctx, m.Account, m.Follows)
	switch {
	case CodeOf(err) == CodeNotFound:
		return "not needed: the message it follows is not recorded", nil
	case err != nil:
		return "", err
	case confirmed(prev.State, m.Confirm):
		return fmt.Sprintf("not needed: message %s was %s in time", prev.ID, prev.State), nil
	case prev.Follows != "" && prev.State == record.StateFailed && prev.ErrorCode == string(CodeCanceled):
		return fmt.Sprintf("not needed: the step it follows, %s, was canceled", prev.ID), nil
	}
	return "", nil
}

// confirmChain cancels the step after m, which a report just moved to
// its state, when that state makes it unneeded, and the steps after it.
func (n *Notifier) confirmChain(ctx context.Context, m *record.Message) {
	step, err := n.ledger.Message(ctx, m.Account, m.Fallback)
	if err != nil || step.Follows != m.ID || !step.State.Waiting() || !confirmed(m.State, step.Confirm) {
		return
	}
	n.cancelSteps(ctx, m.Account, step.ID, step.State, fmt.Sprintf("not needed: message %s was %s in time", m.ID, m.State))
}

// prefixFields returns err with the field names of an InvalidArgument
// prefixed, so that a step's errors name the step.
func prefixFields(err error, prefix string) error {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArgument || len(e.Fields) == 0 {
		return err
	}
	c := *e
	c.Fields = make([]record.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		f.Field = prefix + f.Field
		c.Fields[i] = f
	}
	return &c
}
