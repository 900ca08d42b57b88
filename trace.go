package notify

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/record"
)

// Tracer is the hook a Notifier traces its work through: one span per
// send (Send, and Work's run of a queued send), with children for
// preparing, charging, each provider attempt and settling, and one span
// per delivery report, linked to the span of the send it is about while
// this process remembers it. docs/tracing.md lists the spans and their
// attributes. The hook takes only the standard library's types, so that
// the notify package imports no tracing SDK: package otelnotify adapts
// OpenTelemetry to it (otelnotify.WithTracerProvider).
//
// No span the Notifier makes carries message content, a recipient's
// number or address, a one-time code or a credential, and a failure's
// status holds its Code, never its text (which may quote a vendor).
// Implementations are safe for concurrent use.
type Tracer interface {
	// Start starts a span named name as a child of the span ctx carries,
	// and returns ctx carrying the new span. A root span (a send, a
	// report, a worker's run) always starts; any other is started only
	// inside a span (one of the Notifier's, or a caller's), so that a
	// step run outside a send (Quote's pricing, say) makes no trace of
	// its own: without a span in ctx, Start returns ctx and a nil Span.
	Start(ctx context.Context, name string, root bool) (context.Context, Span)

	// Link returns a handle of the span ctx carries by which a later
	// span may link to it (Span.AddLink), or nil when ctx carries none.
	// The Notifier keeps the handles of its recent sends (about 10,000)
	// for the links of their delivery reports.
	Link(ctx context.Context) any
}

// Span is one span of a Tracer. The Notifier builds attributes only for
// a span that IsRecording, so that a send that is not recorded allocates
// nothing for them. A span's methods are called from one goroutine at a
// time; End is called once.
type Span interface {
	// IsRecording reports whether the span keeps what is set on it.
	IsRecording() bool
	// SetAttributes sets attributes on the span, keys as docs/tracing.md
	// names them; one call carries all that is known at the time, since
	// a tracer may grow its span's storage on each call.
	SetAttributes(attrs ...SpanAttr)
	// Fail marks the span an error, with the notify.Code of the failure
	// as its description.
	Fail(code Code)
	// AddLink links the span to the span whose handle Tracer.Link
	// returned, with attributes of the link.
	AddLink(link any, attrs ...SpanAttr)
	// End ends the span.
	End()
}

// SpanAttr is an attribute of a span: a key of docs/tracing.md and its
// value, a string (Str) or, when IsInt, an integer (Int). Values are
// identifiers, counts, amounts or codes: never content, a recipient or a
// secret.
type SpanAttr struct {
	Key   string
	Str   string
	Int   int64
	IsInt bool
}

// WithTracer makes the Notifier trace through t (see Tracer). The default
// is no tracer: a library does not trace unless told to, and a send that
// is not traced pays for nothing. A nil t is refused.
func WithTracer(t Tracer) Option {
	return func(n *Notifier) error {
		if nilness.Is(t) {
			return errors.New("WithTracer: nil Tracer")
		}
		n.tracing = &tracing{tracer: t, sends: newSendSpans(sendSpansKept)}
		return nil
	}
}

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
	keyMessageID     = "notify.message.id"
	keyAccountID     = "notify.account.id"
	keyKind          = "notify.kind"
	keyProvider      = "notify.provider"
	keyUnits         = "notify.units"
	keyPriceMinor    = "notify.price.minor"
	keyCostMinor     = "notify.cost.minor"
	keyCurrency      = "notify.currency"
	keyState         = "notify.state"
	keyErrorCode     = "notify.error.code"
	keyAttempt       = "notify.attempt.number"
	keyOutcome       = "notify.attempt.outcome"
	keyBatch         = "notify.batch.size"
	keyPart          = "notify.part.index"
	keyVendorID      = "notify.provider.message.id"
	keyVendorCode    = "notify.vendor.code"
	keyReportState   = "notify.report.state"
	keyReportMatched = "notify.report.messages"
	keyReportMoved   = "notify.report.moved"
)

// str and num make the attributes of a span.
func str(key, v string) SpanAttr { return SpanAttr{Key: key, Str: v} }
func num[I ~int | ~int64](key string, v I) SpanAttr {
	return SpanAttr{Key: key, Int: int64(v), IsInt: true}
}

// sendSpansKept bounds how many sends' spans a Notifier keeps for the
// links of delivery reports: about 100 bytes each, so about 1 MB.
// Reports mostly come within minutes of their send, so the newest are
// the ones worth keeping.
const sendSpansKept = 10000

// tracing is a Notifier's tracer and the link handles of its recent
// sends' spans; a nil *tracing traces nothing, at no cost.
type tracing struct {
	tracer Tracer
	sends  *sendSpans
}

// sendSpans remembers the link handle of each recent send's span by its
// message, so that a delivery report's span can link to it. The record
// has no field a span's identity would fit in without a schema change, so
// this is kept in memory: best-effort, bounded (the oldest is forgotten
// first) and lost on restart, and a report handled by another process
// than the send's has no link. A trace ID is no secret, but it is not
// the message's business either.
type sendSpans struct {
	mu   sync.Mutex
	at   map[sendKey]any
	ring []sendKey // insertion order, for eviction
	next int
}

type sendKey struct{ account, id string }

func newSendSpans(capacity int) *sendSpans {
	// The map grows with use: most Notifiers see far fewer sends.
	return &sendSpans{at: make(map[sendKey]any), ring: make([]sendKey, capacity)}
}

// put remembers link as the span of message id, forgetting the oldest
// message when full. A message remembered again (a queued send's worker
// after its enqueue) keeps its place and takes the newer span.
func (s *sendSpans) put(account, id string, link any) {
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
	s.at[k] = link
}

func (s *sendSpans) get(account, id string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	link, ok := s.at[sendKey{account, id}]
	return link, ok
}

// span is one of the Notifier's spans; the zero span, when not tracing,
// does nothing.
type span struct{ s Span }

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
	s.s.SetAttributes(str(keyErrorCode, string(code)))
	s.s.Fail(code)
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
// call, since a tracer may grow its span's attributes on each.
func (s span) receipt(r *Receipt) {
	if r == nil || !s.recording() {
		return
	}
	kv := make([]SpanAttr, 0, 7)
	kv = append(kv, str(keyMessageID, r.MessageID), num(keyUnits, r.Units), str(keyState, string(r.Status)))
	if r.Provider != "" {
		kv = append(kv, str(keyProvider, r.Provider))
	}
	if r.Cost.Currency.Code != "" {
		kv = append(kv, num(keyCostMinor, r.Cost.Minor), str(keyCurrency, r.Cost.Currency.Code))
	}
	bad := r.Status == record.StateFailed || r.Status == record.StateUnknown
	code := orInternal(r.ErrorCode)
	if bad {
		kv = append(kv, str(keyErrorCode, string(code)))
	}
	s.s.SetAttributes(kv...)
	if bad {
		s.s.Fail(code)
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

// start starts a span named name under ctx (see Tracer.Start).
func (n *Notifier) start(ctx context.Context, name string, root bool) (context.Context, span) {
	t := n.tracing
	if t == nil {
		return ctx, span{}
	}
	ctx, s := t.tracer.Start(ctx, name, root)
	return ctx, span{s}
}

// startRequest starts the root span of a request of account and kind.
func (n *Notifier) startRequest(ctx context.Context, name, account string, kind Kind) (context.Context, span) {
	ctx, sp := n.start(ctx, name, true)
	if sp.recording() {
		sp.s.SetAttributes(str(keyAccountID, account), str(keyKind, string(kind)))
	}
	return ctx, sp
}

// remember keeps the span in ctx as message id's, for its reports' links.
func (n *Notifier) remember(ctx context.Context, account, id string) {
	if n.tracing == nil {
		return
	}
	if link := n.tracing.tracer.Link(ctx); link != nil {
		n.tracing.sends.put(account, id, link)
	}
}
