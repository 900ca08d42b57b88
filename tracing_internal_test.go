package notify

import (
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// The send spans kept for reports' links are bounded: the oldest message
// is forgotten first, and one remembered again keeps its place.
func TestSendSpansForgetTheOldest(t *testing.T) {
	sc := func(b byte) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b}, SpanID: trace.SpanID{b}})
	}
	s := newSendSpans(2)
	s.put("a", "1", sc(1))
	s.put("a", "2", sc(2))
	s.put("a", "1", sc(3)) // again: the newer span, the same place
	if got, ok := s.get("a", "1"); !ok || !got.Equal(sc(3)) {
		t.Fatalf("1 = %v %v, want the newer span", got, ok)
	}
	s.put("b", "1", sc(4)) // full: 1, the oldest, goes
	if _, ok := s.get("a", "1"); ok {
		t.Error("the oldest message is still kept")
	}
	for _, k := range []sendKey{{"a", "2"}, {"b", "1"}} {
		if _, ok := s.get(k.account, k.id); !ok {
			t.Errorf("%v was forgotten", k)
		}
	}
	if len(s.at) != 2 {
		t.Errorf("%d kept, want 2", len(s.at))
	}
}
