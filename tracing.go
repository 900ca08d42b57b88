package notify

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/record"
)

// WithTracerProvider makes the Notifier record OpenTelemetry spans through
// tp: one span per send (Send, and Work's run of a queued send), with
// children for preparing, charging, each provider attempt and settling,
// and one span per delivery report, linked to the span of the send it is
// about while this process remembers it. docs/tracing.md lists the spans
// and their attributes. No span carries message content, a recipient's
// number or address, a one-time code or a credential, and a failure's
// status holds its Code, never its text (which may quote a vendor).
//
// The default is a no-op provider (go.opentelemetry.io/otel/trace/noop),
// never otel's global one: a library does not trace unless told to. A
// noop.TracerProvider given here is the same as none, and costs a send
// nothing. A nil tp is refused.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(n *Notifier) error {
		if nilness.Is(tp) {
			return errors.New("WithTracerProvider: nil TracerProvider")
		}
		switch tp.(type) {
		case noop.TracerProvider, *noop.TracerProvider:
			n.tracing = nil
			return nil
		}
		n.tracing = &tracing{
			tracer: tp.Tracer(tracerName),
			sends:  newSendSpans(sendSpansKept),
		}
		return nil
	}
}

// tracerName is the instrumentation scope of the Notifier's spans: its
// module path, as OpenTelemetry asks of instrumentation libraries.
const tracerName = "github.com/notifykit/notify"

// The names of the spans (docs/tracing.md).
const (
	spanSend    = "notify.send"
	spanPart    = "notify.part"
	spanWork    = "notify.work"
	spanEnqueue = "notify.enqueue"
	spanPrepare = "notify.prepare"
	spanCharge  = "notify.charge"
	spanAttempt = "notify.attempt"
	spanSettle  = "notify.settle"
	spanReport  = "notify.report"
)

// The attribute keys. Each value is an identifier, a count, an amount or
// a code: never content, a recipient or a secret.
const (
	keyMessageID     = attribute.Key("notify.message.id")
	keyAccountID     = attribute.Key("notify.account.id")
	keyKind          = attribute.Key("notify.kind")
	keyProvider      = attribute.Key("notify.provider")
	keyUnits         = attribute.Key("notify.units")
	keyPriceMinor    = attribute.Key("notify.price.minor")
	keyCostMinor     = attribute.Key("notify.cost.minor")
	keyCurrency      = attribute.Key("notify.currency")
	keyState         = attribute.Key("notify.state")
	keyErrorCode     = attribute.Key("notify.error.code")
	keyAttempt       = attribute.Key("notify.attempt.number")
	keyOutcome       = attribute.Key("notify.attempt.outcome")
	keyBatch         = attribute.Key("notify.batch.size")
	keyPart          = attribute.Key("notify.part.index")
	keyVendorID      = attribute.Key("notify.provider.message.id")
	keyVendorCode    = attribute.Key("notify.vendor.code")
	keyReportState   = attribute.Key("notify.report.state")
	keyReportMatched = attribute.Key("notify.report.messages")
	keyReportMoved   = attribute.Key("notify.report.moved")
)

// sendSpansKept bounds how many sends' span contexts a Notifier keeps for
// the links of delivery reports: about 100 bytes each, so about 1 MB.
// Reports mostly come within minutes of their send, so the newest are
// the ones worth keeping.
const sendSpansKept = 10000

// tracing is a Notifier's tracer and the span contexts of its recent
// sends; a nil *tracing traces nothing, at no cost.
type tracing struct {
	tracer trace.Tracer
	sends  *sendSpans
}

// sendSpans remembers the span context of each recent send by its
// message, so that a delivery report's span can link to it. The record
// has no field a span context would fit in without a schema change, so
// this is kept in memory: best-effort, bounded (the oldest is forgotten
// first) and lost on restart, and a report handled by another process
// than the send's has no link. A trace ID is no secret, but it is not
// the message's business either.
type sendSpans struct {
	mu   sync.Mutex
	at   map[sendKey]trace.SpanContext
	ring []sendKey // insertion order, for eviction
	next int
}

type sendKey struct{ account, id string }

func newSendSpans(capacity int) *sendSpans {
	// The map grows with use: most Notifiers see far fewer sends.
	return &sendSpans{at: make(map[sendKey]trace.SpanContext), ring: make([]sendKey, capacity)}
}

// put remembers sc as the span of message id, forgetting the oldest
// message when full. A message remembered again (a queued send's worker
// after its enqueue) keeps its place and takes the newer span.
func (s *sendSpans) put(account, id string, sc trace.SpanContext) {
	k := sendKey{account, id}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.at[k]; !ok {
		if old := s.ring[s.next]; old != (sendKey{}) {
			delete(s.at, old)
		}
		s.ring[s.next] = k
		s.next = (s.next + 1) % len(s.ring)
		if s.next == 0 {
			// Once per turn of the ring, a fresh map of the live
			// entries: a Go map does not promise a steady footprint
			// under endless deletes and inserts (DESIGN §8).
			s.at = maps.Clone(s.at)
		}
	}
	s.at[k] = sc
}

func (s *sendSpans) get(account, id string) (trace.SpanContext, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.at[sendKey{account, id}]
	return sc, ok
}

// span is one of the Notifier's spans; the zero span, when not tracing,
// does nothing. Attributes are built only for a recording span, so that
// a send that is not traced allocates nothing for them.
type span struct{ s trace.Span }

func (s span) recording() bool { return s.s != nil && s.s.IsRecording() }

// end ends the span, with the status and code of err if it is not nil.
func (s span) end(err error) {
	if s.s == nil {
		return
	}
	if err != nil && s.s.IsRecording() {
		s.failed(CodeOf(err))
	}
	s.s.End()
}

// failed marks the span an error with code: the code alone, since an
// error's text may quote a vendor's answer.
func (s span) failed(code Code) {
	code = orInternal(code)
	s.s.SetAttributes(keyErrorCode.String(string(code)))
	s.s.SetStatus(codes.Error, string(code))
}

// orInternal is code, or CodeInternal for an error without one.
func orInternal(code Code) Code {
	if code == "" {
		return CodeInternal
	}
	return code
}

// receipt records r: the message, its provider, units, what it costs,
// its state and, for a failed or unknown one, its code and error status.
// The span's start named the account and the kind. One SetAttributes
// call, since an SDK grows its span's attributes on each.
func (s span) receipt(r *Receipt) {
	if r == nil || !s.recording() {
		return
	}
	kv := make([]attribute.KeyValue, 0, 7)
	kv = append(kv, keyMessageID.String(r.MessageID), keyUnits.Int(r.Units), keyState.String(string(r.Status)))
	if r.Provider != "" {
		kv = append(kv, keyProvider.String(r.Provider))
	}
	if r.Cost.Currency.Code != "" {
		kv = append(kv, keyCostMinor.Int64(r.Cost.Minor), keyCurrency.String(r.Cost.Currency.Code))
	}
	bad := r.Status == record.StateFailed || r.Status == record.StateUnknown
	code := orInternal(r.ErrorCode)
	if bad {
		kv = append(kv, keyErrorCode.String(string(code)))
	}
	s.s.SetAttributes(kv...)
	if bad {
		s.s.SetStatus(codes.Error, string(code))
	}
}

// endReceipt ends a send's span with its outcome: the receipt's, or
// err's code when there is no receipt (refused before anything moved).
func (s span) endReceipt(r *Receipt, err error) {
	if s.s == nil {
		return
	}
	if r != nil {
		s.receipt(r)
		err = nil // the receipt's status says it, with its own code
	}
	s.end(err)
}

// start starts a span named name under ctx. A root span (a send, a
// report, a worker's run) always starts; the others only inside a span
// (one of ours, or a caller's), so that a step called outside a send
// (Quote's pricing, say) makes no trace of its own.
func (n *Notifier) start(ctx context.Context, name string, root bool) (context.Context, span) {
	t := n.tracing
	if t == nil || !root && !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, span{}
	}
	ctx, s := t.tracer.Start(ctx, name)
	return ctx, span{s}
}

// startRequest starts the root span of a request of account and kind.
func (n *Notifier) startRequest(ctx context.Context, name, account string, kind Kind) (context.Context, span) {
	ctx, sp := n.start(ctx, name, true)
	if sp.recording() {
		sp.s.SetAttributes(keyAccountID.String(account), keyKind.String(string(kind)))
	}
	return ctx, sp
}

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
		sp.s.SetAttributes(keyPart.Int(i), keyKind.String(string(pt.kind)))
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
		sp.s.SetAttributes(keyProvider.String(p.env.Provider), keyUnits.Int(p.env.Units))
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
		sp.s.SetAttributes(keyMessageID.String(env.ID), keyPriceMinor.Int64(env.Price.Minor), keyCurrency.String(env.Price.Currency.Code))
	}
	b, charged, err := n.open(cctx, op, acct, p, now)
	sp.end(err)
	if err == nil {
		n.remember(ctx, acct.ID, p.env.ID)
	}
	return b, charged, err
}

// remember keeps the span in ctx as message id's, for its reports' links.
func (n *Notifier) remember(ctx context.Context, account, id string) {
	if n.tracing == nil {
		return
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		n.tracing.sends.put(account, id, sc)
	}
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
		sp.s.SetAttributes(keyProvider.String(provider), keyAttempt.Int(number), keyBatch.Int(batch))
	default:
		sp.s.SetAttributes(keyProvider.String(provider), keyAttempt.Int(number))
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
		sp.s.SetAttributes(keyOutcome.String(outcome))
		sp.s.End()
		return
	}
	code := CodeOutcomeUnknown
	if e := (*Error)(nil); errors.As(err, &e) {
		code = orInternal(e.Code)
	} else if c := CodeOf(err); c == CodeCanceled || c == CodeDeadlineExceeded {
		code = c
	}
	sp.s.SetAttributes(keyOutcome.String(outcome), keyErrorCode.String(string(code)))
	sp.s.SetStatus(codes.Error, string(code))
	sp.s.End()
}

// startWork starts the span of a worker's run of job.
func (n *Notifier) startWork(ctx context.Context, job queue.Job) (context.Context, span) {
	ctx, sp := n.start(ctx, spanWork, true)
	if sp.recording() {
		sp.s.SetAttributes(keyMessageID.String(job.Message), keyAccountID.String(job.Account))
		if sc, ok := n.tracing.sends.get(job.Account, job.Message); ok {
			sp.s.AddLink(trace.Link{SpanContext: sc}) // the enqueue's
		}
	}
	return ctx, sp
}

// worked records, on a worker's span in ctx, the receipt of the send it
// made, and remembers the span for the message's reports.
func (n *Notifier) worked(ctx context.Context, r *Receipt) {
	if n.tracing == nil || r == nil {
		return
	}
	n.remember(ctx, r.Account, r.MessageID)
	sp := span{trace.SpanFromContext(ctx)}
	if sp.recording() {
		sp.s.SetAttributes(keyKind.String(string(r.Kind)))
	}
	sp.receipt(r)
}

// startReport starts the span of a delivery report: its provider, state
// and vendor's code and ID, none of which is content or a recipient.
func (n *Notifier) startReport(ctx context.Context, r *DeliveryReport) (context.Context, span) {
	ctx, sp := n.start(ctx, spanReport, true)
	if sp.recording() && r != nil {
		sp.s.SetAttributes(keyProvider.String(r.Provider), keyReportState.String(string(r.State)))
		if r.ProviderMessageID != "" {
			sp.s.SetAttributes(keyVendorID.String(r.ProviderMessageID))
		}
		if r.MessageID != "" {
			sp.s.SetAttributes(keyMessageID.String(r.MessageID), keyAccountID.String(r.Account))
		}
		if r.VendorCode != "" {
			sp.s.SetAttributes(keyVendorCode.String(r.VendorCode))
		}
	}
	return ctx, sp
}

// linkSends links a report's span to the span of each send it names
// that this process remembers (sendSpans), and counts them.
func (sp span) linkSends(n *Notifier, recs []*Message) {
	if !sp.recording() {
		return
	}
	sp.s.SetAttributes(keyReportMatched.Int(len(recs)))
	for _, m := range recs {
		if sc, ok := n.tracing.sends.get(m.Account, m.ID); ok {
			sp.s.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{keyMessageID.String(m.ID)}})
		}
	}
}

// endReport ends a report's span with what it moved, or its error.
func (sp span) endReport(res *ReportResult, err error) {
	if res != nil && sp.recording() {
		sp.s.SetAttributes(keyReportMoved.Int(res.Moved))
		if len(res.Messages) == 1 {
			m := res.Messages[0]
			sp.s.SetAttributes(keyMessageID.String(m.ID), keyAccountID.String(m.Account), keyState.String(string(m.State)))
		}
	}
	sp.end(err)
}
