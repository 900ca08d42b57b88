package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/notifykit/notify/record"
)

// MaxBulkRecipients is the most recipients one Bulk request may name.
const MaxBulkRecipients = 10000

// BatchDeliverer is an optional interface of channels that send one
// message to several recipients in one vendor call (channel/sms does,
// through a provider that is an sms.BatchSender): a Bulk request then
// makes one vendor call per batch instead of one per recipient.
//
// DeliverBatch sends envs, which differ only in To and ID, in one call,
// and makes one attempt (the Notifier retries). Its outcome is one for all
// of them: on success one Result per envelope, in order, each with the
// vendor's ID (which several may share: reports tell them apart by
// number); an error is the outcome of every envelope, classified as for
// Deliver. MaxBatch is the most envelopes DeliverBatch takes at once, at
// least 1. Both must be safe for concurrent use.
type BatchDeliverer interface {
	MaxBatch() int
	DeliverBatch(ctx context.Context, envs []*Envelope) ([]*Result, error)
}

// sendBulkRequest sends a Bulk request to every recipient, in as few vendor
// calls as its channel allows (BatchDeliverer; one call per recipient
// otherwise), charging and recording each recipient as its own
// message.
//
// Every recipient is prepared first: bad input (a bad number is named
// "to.<i>", its index among the recipients; a number repeated, the same) is one
// InvalidArgument error with nothing sent or charged. The request counts
// once against the account's rate limit. Then, batch by batch, each
// recipient is charged and recorded, in order, right before its batch
// goes; one that cannot be (the balance ran out) gets a failed receipt
// and is not sent. A caller that hangs up stops the batches not yet sent
// (nothing of them is charged); a process that dies leaves only the
// batch on its way to the reconciler. Each batch's outcome settles each
// of its recipients as Send would: accepted (sent), certainly not
// accepted (retried while temporary, then refunded) or unknown (charged,
// never retried). Delivery reports then move each recipient's record on
// its own.
//
// The receipt (Kind req.Kind(), To empty) has one leg per recipient, in the
// order of To, each passed to observers
// as a single send's would be; the bulk receipt itself is returned and kept for
// its idempotency key, not logged. Its Cost and Units are the legs' sums,
// its record.State StateSent when any leg was accepted, else StateUnknown when
// any leg's outcome is unknown, else StateFailed. Without an accepted
// leg, sendBulk returns the receipt and the first unknown leg's error,
// else the first failed one's. A repeat of the idempotency key returns
// the first receipt: recipients that failed are sent again only under a
// new key. If the process died mid-way, a repeat after the key's lease
// settles what it left and answers with the record of one recipient that
// went out or may have (never a second send); the other recipients'
// records are read with Notifier.Message.
func (n *Notifier) sendBulkRequest(ctx context.Context, op string, req Bulk) (*Receipt, error) {
	acct, err := n.account(ctx, op, req.AccountID())
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		ps, err := n.prepareBulk(ctx, op, acct, req)
		if err != nil {
			return nil, err // no receipt: the key is released
		}
		if err := n.bulkWindow(op, ps); err != nil {
			return nil, err
		}
		id, undo, err := n.admitBulk(ctx, op, acct, req, ps)
		if err != nil {
			return nil, err
		}
		r, err := n.dispatchBulk(ctx, op, acct, id, req.Kind(), ps)
		undo.unless(r)
		return r, err
	}
	return n.keyed(ctx, op, acct, req.Key(), req, run)
}

// admitBulk admits ps, the prepared recipients of req, before anything
// is charged: it checks them against the suppression list, counts req
// once against the limits and gives each recipient its message ID
// (openRequest, which writes the request record of a keyed request). It
// returns the request's ID and the admission, whose units the caller
// gives back (undo.unless) once it knows what went out.
func (n *Notifier) admitBulk(ctx context.Context, op string, acct *Account, req Bulk, ps []prepared) (string, *admission, error) {
	if err := n.suppressedBulk(ctx, op, acct, ps); err != nil {
		return "", nil, err
	}
	undo, err := n.admit(ctx, op, acct, req.Kind())
	if err != nil {
		return "", nil, err
	}
	envs := make([]*Envelope, len(ps))
	for i := range ps {
		envs[i] = ps[i].env
	}
	id, err := n.openRequest(ctx, op, acct, req, true, envs)
	if err != nil {
		undo.unless(nil)
		return "", nil, err
	}
	return id, undo, nil
}

// prepareBulk prepares one message per recipient (req.Recipients), each
// in its recipient's locale (localize: one read for all). Bad recipients
// are reported together, by index; any other bad field is the message's
// and is reported once.
func (n *Notifier) prepareBulk(ctx context.Context, op string, acct *Account, req Bulk) ([]prepared, error) {
	reqs, err := req.Recipients()
	switch {
	case err != nil:
		return nil, wrap(op, "", CodeInvalidArgument, err)
	case len(reqs) == 0:
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "to", Message: "at least one recipient is required"}}}
	case len(reqs) > MaxBulkRecipients:
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "to",
			Message: fmt.Sprintf("at most %d recipients, got %d", MaxBulkRecipients, len(reqs))}}}
	}
	ps := make([]prepared, len(reqs))
	var bad record.FieldErrors
	seen := make(map[string]int, len(reqs))
	for i, r := range reqs {
		p, err := n.prepareAsIs(ctx, op, acct, r)
		if err != nil {
			if f, ok := onlyField(err, "to"); ok {
				bad.Addf("to."+strconv.Itoa(i), "%s", f.Message)
				continue
			}
			return nil, err
		}
		if p.env.CarriesOTP {
			return nil, &Error{Code: CodeInvalidArgument, Op: op,
				Err: errors.New("the message carries a one-time code, which goes to one recipient; send it alone")}
		}
		if j, dup := seen[p.env.To]; dup {
			bad.Addf("to."+strconv.Itoa(i), "repeats to.%d", j)
			continue
		}
		seen[p.env.To] = i
		ps[i] = p
	}
	if err := InvalidFields(bad); err != nil {
		return nil, wrap(op, "", CodeInvalidArgument, err)
	}
	if err := n.localize(ctx, op, func(int) *Account { return acct }, offered(ps)); err != nil {
		return nil, err
	}
	return ps, nil
}

// onlyField returns the one field error of an InvalidArgument err when
// every field it names is field.
func onlyField(err error, field string) (record.FieldError, bool) {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArgument || len(e.Fields) == 0 {
		return record.FieldError{}, false
	}
	for _, f := range e.Fields {
		if f.Field != field {
			return record.FieldError{}, false
		}
	}
	return e.Fields[0], true
}

// bulkLeg is one recipient of a bulk send on its way.
type bulkLeg struct {
	env     *Envelope
	r       *Receipt
	charged bool
}

// dispatchBulk sends the recipients batch by batch. Each recipient is
// charged and recorded attempting just before its batch goes, so
// that a record waits in pending or attempting only while its own batch
// is on its way: a crash between batches leaves the rest unopened, not
// unknown, and no record outlives the settle threshold waiting for a
// batch of its own.
func (n *Notifier) dispatchBulk(ctx context.Context, op string, acct *Account, id string, kind Kind, ps []prepared) (*Receipt, error) {
	size := 1
	bd, batches := ps[0].ch.(BatchDeliverer)
	if batches {
		size = max(1, bd.MaxBatch())
	}
	receipts := make([]*Receipt, len(ps))
	legs := make([]bulkLeg, 0, min(size, len(ps)))
	envs := make([]*Envelope, 0, min(size, len(ps)))
	for start := 0; start < len(ps); start += size {
		legs, envs = legs[:0], envs[:0]
		for i := start; i < min(start+size, len(ps)); i++ {
			p := ps[i]
			r, charged, err := n.begin(ctx, op, acct, p)
			switch {
			case r == nil: // nothing charged (no funds, the caller gone), or a lost store answer the reconciler settles
				r = skippedLeg(acct, kind, err)
				r.To = p.env.To
			case err == nil:
				legs = append(legs, bulkLeg{env: p.env, r: r, charged: charged})
				envs = append(envs, p.env)
			}
			receipts[i] = r
		}
		if len(legs) == 0 {
			continue
		}
		if !batches {
			// One message: deliver it as a single send is, failover and
			// breakers included.
			l := legs[0]
			res, attempts, outcome, derr := n.deliver(ctx, ps[0].ch, l.env, &l.r.Tried)
			_, _ = n.settle(ctx, op, acct, l.env, l.r, l.charged, res, attempts, outcome, derr)
			continue
		}
		var results []*Result
		tries := 0
		attempts, outcome, derr := n.retrying(ctx, envs, func(ctx context.Context, timeout time.Duration) (err error) {
			tries++
			ctx, sp := n.startAttempt(ctx, envs[0].Provider, tries, len(envs))
			defer func() { sp.endAttempt(err) }()
			results, err = attemptBatch(ctx, bd, envs, timeout)
			return err
		})
		for i, l := range legs {
			res, calls, state, err := (*Result)(nil), attempts, outcome, derr
			switch outcome {
			case record.StateSent:
				res = results[i]
			case record.StateFailed:
				res, calls, state, err = n.failBatchOver(ctx, ps[0].ch, l, attempts, derr)
			}
			// settle fills l.r, which receipts holds, and reports it.
			_, _ = n.settle(ctx, op, acct, l.env, l.r, l.charged, res, calls, state, err)
		}
	}
	r, err := combineBulk(op, id, acct, kind, receipts)
	if n.pricer != nil {
		n.readBalance(ctx, acct, r)
	}
	return r, err
}

// failBatchOver offers one recipient of a batch its provider certainly
// refused, for a reason that may pass (derr), to the providers after that
// one (Envelope.Providers), each recipient on its own, as a single send
// fails over (deliver's walk hands the record over to each before its
// call): the batch's refusal says nothing of the next provider, and each
// recipient may have others. The batch's call is the first entry of the
// record's tried list. Without a next provider, after a refusal for good,
// or once the caller has left, it returns the batch's outcome.
func (n *Notifier) failBatchOver(ctx context.Context, ch Channel, l bulkLeg, attempts int, derr error) (*Result, int, record.State, error) {
	env := l.env
	at := slices.Index(env.Providers, env.Provider)
	if at < 0 || at == len(env.Providers)-1 || !CodeOf(derr).temporary() || ctx.Err() != nil {
		return nil, attempts, record.StateFailed, derr
	}
	l.r.Tried = append(l.r.Tried, record.Attempt{Provider: env.Provider, Outcome: record.StateFailed,
		ErrorCode: string(CodeOf(derr)), At: n.now()})
	next := *env // an envelope never changes once delivered: the next providers' copy
	next.Providers = env.Providers[at+1:]
	res, calls, state, err := n.deliver(ctx, ch, &next, &l.r.Tried)
	return res, attempts + calls, state, err
}

// attemptBatch makes one batch attempt under the attempt timeout, as
// attemptDeliver does for one message: a success must name every
// envelope's message.
func attemptBatch(ctx context.Context, bd BatchDeliverer, envs []*Envelope, timeout time.Duration) ([]*Result, error) {
	res, err := attempt(ctx, timeout, func(ctx context.Context) ([]*Result, error) { return bd.DeliverBatch(ctx, envs) })
	if err != nil {
		return nil, err
	}
	if len(res) != len(envs) {
		return nil, &Error{Code: CodeInternal, Err: fmt.Errorf("provider reported %d results for a batch of %d", len(res), len(envs))}
	}
	for _, r := range res {
		if r == nil || r.ProviderMessageID == "" {
			return nil, &Error{Code: CodeInternal, Err: errors.New("provider reported success without a message ID")}
		}
	}
	return res, nil
}

// combineBulk makes the receipt of a bulk send from its legs: StateSent
// when any leg was accepted; else, for a queued bulk (Enqueue, SendAt),
// StateQueued when any leg is queued, or StateScheduled, with the
// earliest leg's SendAt, when any is scheduled; else StateUnknown with
// the first unknown leg's error, or StateFailed with the first failed
// one's.
func combineBulk(op, id string, acct *Account, kind Kind, legs []*Receipt) (*Receipt, error) {
	r := &Receipt{MessageID: id, Account: acct.ID, Kind: kind, Status: record.StateFailed, Legs: legs,
		Cost: Money{Currency: acct.Currency}}
	var firstUnknown, firstFailed *Receipt
	var queued, scheduled bool
	for _, l := range legs {
		r.Units += l.Units
		r.Attempts += l.Attempts
		r.Cost.Minor += l.Cost.Minor
		r.Metered = r.Metered || l.Metered
		if l.CreatedAt.After(r.CreatedAt) {
			r.CreatedAt = l.CreatedAt
		}
		switch l.Status {
		case record.StateSent:
			r.Status = record.StateSent
		case record.StateQueued:
			queued = true
		case record.StateScheduled:
			scheduled = true
			if r.SendAt.IsZero() || l.SendAt.Before(r.SendAt) {
				r.SendAt = l.SendAt
			}
		case record.StateUnknown:
			if firstUnknown == nil {
				firstUnknown = l
			}
		default:
			if firstFailed == nil {
				firstFailed = l
			}
		}
	}
	switch {
	case r.Status == record.StateSent:
		r.SendAt = time.Time{}
		return r, nil
	case queued:
		r.Status, r.SendAt = record.StateQueued, time.Time{}
		return r, nil
	case scheduled:
		r.Status = record.StateScheduled
		return r, nil
	}
	first := firstFailed
	if firstUnknown != nil {
		r.Status, first = record.StateUnknown, firstUnknown
	}
	r.ErrorCode, r.Error = first.ErrorCode, first.Error
	return r, &Error{Code: first.ErrorCode, Op: op,
		Err: fmt.Errorf("no recipient was sent: the first %s: %s", first.Status, first.Error)}
}

// bulkWindow refuses a bulk send a recipient's send window holds
// (Envelope.Window): the caller sends it again when the window opens
// (CodeRateLimited, RetryAfter the longest wait), or queues it
// (Enqueue), which holds each recipient until its window opens.
func (n *Notifier) bulkWindow(op string, ps []prepared) error {
	now := n.now()
	var latest time.Time
	for _, p := range ps {
		if until := n.heldUntil(p.env, now); until.After(latest) {
			latest = until
		}
	}
	if latest.IsZero() {
		return nil
	}
	return n.windowError(op, latest, "queue it (Enqueue) to have each recipient held")
}

// sendBulk is sendBulkRequest in a span. Its recipients have no span of
// their own: their charge and settle spans, which name each message, are
// its children, as is each batch's attempt.
func (n *Notifier) sendBulk(ctx context.Context, op string, req Bulk) (*Receipt, error) {
	ctx, sp := n.startRequest(ctx, spanSend, req.AccountID(), req.Kind())
	r, err := n.sendBulkRequest(ctx, op, req)
	sp.endReceipt(r, err)
	return r, err
}
