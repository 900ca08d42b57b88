package otelnotify_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/otelnotify"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
)

// The secrets of the tracing tests: none may reach a span.
const (
	traceNumber = "9876543210"
	traceOTP    = "482913"
	traceText   = "Your parcel 77-ALPHA is out for delivery"
)

func tracedKit(t *testing.T) (*notifytest.Kit, *spanRecorder) {
	t.Helper()
	rec := &spanRecorder{}
	k := notifytest.New(t, notifytest.WithNotifierOptions(otelnotify.WithTracerProvider(rec)))
	return k, rec
}

func TestWithTracerProviderRefusesNil(t *testing.T) {
	var typedNil *spanRecorder
	for name, tp := range map[string]trace.TracerProvider{"nil": nil, "typed nil": typedNil} {
		if _, err := notify.New(notifytest.New(t).Accounts, notifytest.New(t).Ledger, otelnotify.WithTracerProvider(tp)); err == nil ||
			!strings.Contains(err.Error(), "WithTracerProvider") {
			t.Errorf("%s provider: err = %v, want WithTracerProvider's refusal", name, err)
		}
	}
}

// A no-op provider, the default's equal, changes nothing of a send.
func TestTracingNoopProviderSends(t *testing.T) {
	for _, tp := range []trace.TracerProvider{noop.NewTracerProvider(), &noop.TracerProvider{}} {
		k := notifytest.New(t, notifytest.WithNotifierOptions(otelnotify.WithTracerProvider(tp)))
		r, err := k.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: traceNumber, Message: traceText})
		if err != nil || r.Status != record.StateSent {
			t.Fatalf("Send = %+v, %v", r, err)
		}
		k.AssertBalance(t, notifytest.DefaultBalance-r.Cost.Minor)
	}
}

// attrIs fails t unless span s has key set to want.
func attrIs(t *testing.T, s *recordedSpan, key, want string) {
	t.Helper()
	if got, ok := s.attr(key); !ok || got != want {
		t.Errorf("%s: %s = %q (set %v), want %q", s.name, key, got, ok, want)
	}
}

func only(t *testing.T, rec *spanRecorder, name string) *recordedSpan {
	t.Helper()
	ss := rec.named(name)
	if len(ss) != 1 {
		t.Fatalf("%d %s spans, want 1", len(ss), name)
	}
	return ss[0]
}

func childNames(rec *spanRecorder, p *recordedSpan) []string {
	var names []string
	for _, c := range rec.children(p) {
		names = append(names, c.name)
	}
	return names
}

func TestTracingSendSpanTree(t *testing.T) {
	k, rec := tracedKit(t)
	k.SMS.FailNext(1, notify.CodeUnavailable) // one refusal, then a retry that is accepted
	r, err := k.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: traceNumber, Message: traceText})
	if err != nil || r.Status != record.StateSent {
		t.Fatalf("Send = %+v, %v", r, err)
	}

	send := only(t, rec, "notify.send")
	if send.parent.IsValid() {
		t.Errorf("the send's span has a parent: %v", send.parent)
	}
	if got, want := childNames(rec, send), []string{"notify.prepare", "notify.charge", "notify.attempt", "notify.attempt", "notify.settle"}; !slices.Equal(got, want) {
		t.Errorf("the send's children = %v, want %v", got, want)
	}
	attrIs(t, send, "notify.message.id", r.MessageID)
	attrIs(t, send, "notify.account.id", notifytest.AccountID)
	attrIs(t, send, "notify.kind", "sms")
	attrIs(t, send, "notify.provider", "sms")
	attrIs(t, send, "notify.state", "sent")
	attrIs(t, send, "notify.cost.minor", fmt.Sprint(r.Cost.Minor))
	attrIs(t, send, "notify.currency", "INR")
	if send.status == codes.Error {
		t.Errorf("a sent message's span is an error: %q", send.desc)
	}

	charge := only(t, rec, "notify.charge")
	attrIs(t, charge, "notify.message.id", r.MessageID)
	attrIs(t, charge, "notify.price.minor", fmt.Sprint(r.Cost.Minor))

	attempts := rec.named("notify.attempt")
	for i, want := range []struct{ outcome, code string }{{"refused", "unavailable"}, {"accepted", ""}} {
		a := attempts[i]
		attrIs(t, a, "notify.attempt.number", fmt.Sprint(i+1))
		attrIs(t, a, "notify.attempt.outcome", want.outcome)
		attrIs(t, a, "notify.provider", "sms")
		code, _ := a.attr("notify.error.code")
		if code != want.code || (a.status == codes.Error) != (want.code != "") {
			t.Errorf("attempt %d: code %q, status %v; want code %q", i+1, code, a.status, want.code)
		}
	}

	// The report's span links to the send's.
	if _, err := k.Notifier.Report(context.Background(), &notify.DeliveryReport{Provider: "sms",
		ProviderMessageID: r.ProviderMessageID, State: record.StateDelivered}); err != nil {
		t.Fatal(err)
	}
	report := only(t, rec, "notify.report")
	if len(report.links) != 1 || report.links[0].SpanContext.SpanID() != send.sc.SpanID() || report.links[0].SpanContext.TraceID() != send.sc.TraceID() {
		t.Errorf("report links = %+v, want the send's span %v", report.links, send.sc)
	}
	attrIs(t, report, "notify.state", "delivered")
	if leaks := rec.leaks(traceNumber, traceText, notifytest.APIKey); len(leaks) > 0 {
		t.Errorf("spans carry secrets: %q", leaks)
	}
}

func TestTracingFailedSendIsAnErrorWithItsCode(t *testing.T) {
	k, rec := tracedKit(t)
	k.SMS.FailNext(1, notify.CodeOutcomeUnknown)
	r, err := k.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: traceNumber, Message: traceText})
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Fatalf("Send = %+v, %v; want an unknown outcome", r, err)
	}
	send := only(t, rec, "notify.send")
	attrIs(t, send, "notify.state", "unknown")
	attrIs(t, send, "notify.error.code", "outcome_unknown")
	if send.status != codes.Error || send.desc != "outcome_unknown" {
		t.Errorf("status = %v %q, want Error with the code alone", send.status, send.desc)
	}
	attrIs(t, only(t, rec, "notify.attempt"), "notify.attempt.outcome", "unknown")

	// Refused before anything moved: the code, no receipt.
	_, err = k.Notifier.Send(context.Background(), &sms.Request{Account: notifytest.AccountID, To: "12", Message: traceText})
	if notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Fatalf("err = %v, want InvalidArgument", err)
	}
	sends := rec.named("notify.send")
	if bad := sends[len(sends)-1]; bad.status != codes.Error || bad.desc != "invalid_argument" {
		t.Errorf("refused send: status %v %q", bad.status, bad.desc)
	}
	for _, s := range rec.ended() {
		for _, txt := range s.texts() {
			if strings.Contains(txt, "exception") {
				t.Errorf("%s records an error's text: %q", s.name, txt)
			}
		}
	}
}

// A dual OTP's span has a child per part, each with its own steps, and
// no span carries the code or the number.
func TestTracingCompositeParts(t *testing.T) {
	k, rec := tracedKit(t)
	r, err := k.Notifier.Send(context.Background(), &otp.Request{Account: notifytest.AccountID, To: traceNumber, OTP: traceOTP, BrandName: "Acme"})
	if err != nil || r.Status != record.StateSent {
		t.Fatalf("Send = %+v, %v", r, err)
	}
	send := only(t, rec, "notify.send")
	attrIs(t, send, "notify.kind", string(otp.Kind))
	parts := rec.named("notify.part")
	if len(parts) != len(r.Legs) || len(parts) != 2 {
		t.Fatalf("%d part spans for %d legs", len(parts), len(r.Legs))
	}
	ids := map[string]bool{}
	for _, p := range parts {
		if p.parent.SpanID() != send.sc.SpanID() {
			t.Errorf("part %v is not the send's child", p.sc)
		}
		if got, want := childNames(rec, p), []string{"notify.charge", "notify.attempt", "notify.settle"}; !slices.Equal(got, want) {
			t.Errorf("a part's children = %v, want %v", got, want)
		}
		id, _ := p.attr("notify.message.id")
		ids[id] = true
	}
	for _, leg := range r.Legs {
		if !ids[leg.MessageID] {
			t.Errorf("no part span names leg %s", leg.MessageID)
		}
	}
	if leaks := rec.leaks(traceNumber, traceOTP, notifytest.APIKey); len(leaks) > 0 {
		t.Errorf("spans carry secrets: %q", leaks)
	}
}

// A queued send: its enqueue's span, then the worker's, linked to it,
// with the attempt and the settlement under it.
func TestTracingQueuedSend(t *testing.T) {
	k, rec := tracedKit(t)
	r, err := queued.New(k.Notifier).Enqueue(context.Background(), &sms.Request{Account: notifytest.AccountID, To: traceNumber, Message: traceText})
	if err != nil || r.Status != record.StateQueued {
		t.Fatalf("Enqueue = %+v, %v", r, err)
	}
	if n := k.RunQueue(t); n != 1 {
		t.Fatalf("RunQueue ran %d", n)
	}
	enq := only(t, rec, "notify.enqueue")
	attrIs(t, enq, "notify.state", "queued")
	work := only(t, rec, "notify.work")
	attrIs(t, work, "notify.message.id", r.MessageID)
	attrIs(t, work, "notify.state", "sent")
	if len(work.links) != 1 || work.links[0].SpanContext.SpanID() != enq.sc.SpanID() {
		t.Errorf("the work's links = %+v, want the enqueue's span", work.links)
	}
	if got, want := childNames(rec, work), []string{"notify.prepare", "notify.attempt", "notify.settle"}; !slices.Equal(got, want) {
		t.Errorf("the work's children = %v, want %v", got, want)
	}
	if leaks := rec.leaks(traceNumber, traceText); len(leaks) > 0 {
		t.Errorf("spans carry secrets: %q", leaks)
	}
}

// A step outside any span (Quote's pricing) makes no trace of its own.
func TestTracingNoOrphanSteps(t *testing.T) {
	k, rec := tracedKit(t)
	if _, err := k.Notifier.Quote(context.Background(), &sms.Request{Account: notifytest.AccountID, To: traceNumber, Message: traceText}); err != nil {
		t.Fatal(err)
	}
	if s := rec.ended(); len(s) != 0 {
		t.Errorf("Quote made %d spans, the first %s", len(s), s[0].name)
	}
}

// A queued bulk: each recipient's work links to the one enqueue span.
func TestTracingQueuedBulk(t *testing.T) {
	k, rec := tracedKit(t)
	r, err := queued.New(k.Notifier).Enqueue(context.Background(), &sms.BulkRequest{Message: sms.Request{Account: notifytest.AccountID, Message: traceText},
		To: []string{traceNumber, "9876543219"}})
	if err != nil || r.Status != record.StateQueued || len(r.Legs) != 2 {
		t.Fatalf("Enqueue = %+v, %v", r, err)
	}
	if n := k.RunQueue(t); n != 2 {
		t.Fatalf("RunQueue ran %d", n)
	}
	enq := only(t, rec, "notify.enqueue")
	works := rec.named("notify.work")
	for _, s := range works {
		if len(s.links) != 1 || s.links[0].SpanContext.SpanID() != enq.sc.SpanID() {
			t.Errorf("a recipient's work links to %+v, want the enqueue's span", s.links)
		}
	}
	if len(works) != 2 {
		t.Errorf("%d work spans, want 2", len(works))
	}
}
