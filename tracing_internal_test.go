package notify

import "testing"

// The send spans kept for reports' links are bounded: the oldest message
// is forgotten first, and one remembered again keeps its place.
func TestSendSpansForgetTheOldest(t *testing.T) {
	s := newSendSpans(2)
	s.put("a", "1", 1)
	s.put("a", "2", 2)
	s.put("a", "1", 3) // again: the newer span, the same place
	if got, ok := s.get("a", "1"); !ok || got != 3 {
		t.Fatalf("1 = %v %v, want the newer span", got, ok)
	}
	s.put("b", "1", 4) // full: 1, the oldest, goes
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
