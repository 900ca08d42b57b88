package notify

import (
	"context"
	"errors"
	"time"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
)

// send is Send's pipeline (sendRequest) for one message, in a span.
func (n *Notifier) send(ctx context.Context, op string, req Request) (*Receipt, error) {
	ctx, sp := n.startRequest(ctx, spanSend, req.AccountID(), req.Kind())
	r, err := n.sendRequest(ctx, op, req)
	sp.endReceipt(r, err)
	return r, err
}

// sendComposite is sendCompositeRequest in a span, the parent of each
// part's (notify.part).
func (n *Notifier) sendComposite(ctx context.Context, op string, req Composite) (*Receipt, error) {
	ctx, sp := n.startRequest(ctx, spanSend, req.AccountID(), req.Kind())
	r, err := n.sendCompositeRequest(ctx, op, req)
	sp.endReceipt(r, err)
	return r, err
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

// enqueue is enqueueRequest in a span; Work's span, which sends the
// message later, links to it while this process remembers it.
func (n *Notifier) enqueue(ctx context.Context, op string, tx any, req Request, at time.Time) (*Receipt, error) {
	var account string
	var kind Kind
	if !nilness.Is(req) {
		account, kind = req.AccountID(), req.Kind()
	}
	ctx, sp := n.startRequest(ctx, spanEnqueue, account, kind)
	r, err := n.enqueueRequest(ctx, op, tx, req, at)
	if r != nil && r.MessageID != "" {
		n.remember(ctx, r.Account, r.MessageID)
		for _, l := range r.Legs { // a bulk's recipients: each worker's span links here
			if l.MessageID != "" {
				n.remember(ctx, l.Account, l.MessageID)
			}
		}
	}
	sp.endReceipt(r, err)
	return r, err
}

// tracedPart is dispatchPart in a span of its own, the i-th part of a
// composite send, so that each part's steps are told apart.
func (n *Notifier) tracedPart(ctx context.Context, op string, acct *Account, pt part, i int) (*Receipt, error) {
	ctx, sp := n.start(ctx, spanPart, false)
	if sp.recording() {
		sp.s.SetAttributes(num(keyPart, i), str(keyKind, string(pt.kind)))
	}
	r, err := n.dispatchPart(ctx, op, acct, pt)
	sp.endReceipt(r, err)
	return r, err
}

// prepare is prepareRequest in a span.
func (n *Notifier) prepare(ctx context.Context, op string, acct *Account, req Request) (prepared, error) {
	ctx, sp := n.start(ctx, spanPrepare, false)
	p, err := n.prepareRequest(ctx, op, acct, req)
	if err == nil && sp.recording() {
		sp.s.SetAttributes(str(keyProvider, p.env.Provider), num(keyUnits, p.env.Units))
	}
	sp.end(err)
	return p, err
}

// charge is open, the ledger's debit and the record's opening, in a span;
// the message's span (the send's, or a part's) is remembered for the
// links of its reports once the record stands.
func (n *Notifier) charge(ctx context.Context, op string, acct *Account, p prepared, now time.Time) (Money, bool, error) {
	if n.tracing == nil {
		return n.open(ctx, op, acct, p, now)
	}
	cctx, sp := n.start(ctx, spanCharge, false)
	if sp.recording() {
		env := p.env
		sp.s.SetAttributes(str(keyMessageID, env.ID), num(keyPriceMinor, env.Price.Minor), str(keyCurrency, env.Price.Currency.Code))
	}
	b, charged, err := n.open(cctx, op, acct, p, now)
	sp.end(err)
	if err == nil {
		n.remember(ctx, acct.ID, p.env.ID)
	}
	return b, charged, err
}

// settle is settleOutcome in a span.
func (n *Notifier) settle(ctx context.Context, op string, acct *Account, env *Envelope, r *Receipt, charged bool,
	res *Result, attempts int, outcome record.State, derr error) (*Receipt, error) {
	ctx, sp := n.start(ctx, spanSettle, false)
	r, err := n.settleOutcome(ctx, op, acct, env, r, charged, res, attempts, outcome, derr)
	sp.endReceipt(r, err)
	return r, err
}

// startAttempt starts the span of one provider call: attempt number
// (from 1), or of a batch of size messages when batch is above zero.
func (n *Notifier) startAttempt(ctx context.Context, provider string, number, batch int) (context.Context, span) {
	ctx, sp := n.start(ctx, spanAttempt, false)
	switch {
	case !sp.recording():
	case batch > 0:
		sp.s.SetAttributes(str(keyProvider, provider), num(keyAttempt, number), num(keyBatch, batch))
	default:
		sp.s.SetAttributes(str(keyProvider, provider), num(keyAttempt, number))
	}
	return ctx, sp
}

// endAttempt ends an attempt's span with its outcome: accepted, refused
// (certainly not accepted) or unknown, and the code of a failure. A bare
// error is an unknown outcome, as OutcomeOf reads it.
func (sp span) endAttempt(err error) {
	if !sp.recording() {
		sp.end(nil)
		return
	}
	outcome := "accepted"
	switch OutcomeOf(err) {
	case record.StateFailed:
		outcome = "refused"
	case record.StateUnknown:
		outcome = "unknown"
	}
	if err == nil {
		sp.s.SetAttributes(str(keyOutcome, outcome))
		sp.s.End()
		return
	}
	code := CodeOutcomeUnknown
	if e := (*Error)(nil); errors.As(err, &e) {
		code = orInternal(e.Code)
	} else if c := CodeOf(err); c == CodeCanceled || c == CodeDeadlineExceeded {
		code = c
	}
	sp.s.SetAttributes(str(keyOutcome, outcome), str(keyErrorCode, string(code)))
	sp.s.Fail(code)
	sp.s.End()
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

// startReport starts the span of a delivery report: its provider, state
// and vendor's code and ID, none of which is content or a recipient.
func (n *Notifier) startReport(ctx context.Context, r *DeliveryReport) (context.Context, span) {
	ctx, sp := n.start(ctx, spanReport, true)
	if sp.recording() && r != nil {
		kv := make([]SpanAttr, 0, 6)
		kv = append(kv, str(keyProvider, r.Provider), str(keyReportState, string(r.State)))
		if r.ProviderMessageID != "" {
			kv = append(kv, str(keyVendorID, r.ProviderMessageID))
		}
		if r.MessageID != "" {
			kv = append(kv, str(keyMessageID, r.MessageID), str(keyAccountID, r.Account))
		}
		if r.VendorCode != "" {
			kv = append(kv, str(keyVendorCode, r.VendorCode))
		}
		sp.s.SetAttributes(kv...)
	}
	return ctx, sp
}

// linkSends links a report's span to the span of each send it names
// that this process remembers (sendSpans), and counts them.
func (sp span) linkSends(n *Notifier, recs []*Message) {
	if !sp.recording() {
		return
	}
	sp.s.SetAttributes(num(keyReportMatched, len(recs)))
	for _, m := range recs {
		if link, ok := n.tracing.sends.get(m.Account, m.ID); ok {
			sp.s.AddLink(link, str(keyMessageID, m.ID))
		}
	}
}

// endReport ends a report's span with what it moved, or its error.
func (sp span) endReport(res *ReportResult, err error) {
	if res != nil && sp.recording() {
		if len(res.Messages) == 1 {
			m := res.Messages[0]
			sp.s.SetAttributes(num(keyReportMoved, res.Moved), str(keyMessageID, m.ID), str(keyAccountID, m.Account), str(keyState, string(m.State)))
		} else {
			sp.s.SetAttributes(num(keyReportMoved, res.Moved))
		}
	}
	sp.end(err)
}
