package main

import "testing"

// TestGatewaySenderIDs: the demo account sends under its vendor ID and its
// DLT header only; another header (a bank's) is refused before anything
// is charged.
func TestGatewaySenderIDs(t *testing.T) {
	g := start(t, map[string]string{})
	before := g.balanceMinor(t)
	for _, sender := range []string{"NOTIFY", "ACMEIN", "acmein"} {
		a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your order shipped","sender_id":"`+sender+`"}`)
		if a.status != 200 {
			t.Fatalf("sender %s: %d %s", sender, a.status, a.raw)
		}
	}
	spent := before - g.balanceMinor(t)
	a := g.post(t, "/sms", g.key, `{"to":"9876543210","message":"Your account is blocked","sender_id":"HDFCBK"}`)
	if e, _ := a.body["error"].(map[string]any); a.status != 400 || e["code"] != "invalid_argument" || e["fields"].(map[string]any)["sender_id"] == nil {
		t.Fatalf("a bank's header: %d %s", a.status, a.raw)
	}
	if got := before - g.balanceMinor(t); got != spent {
		t.Fatalf("the refused send moved money: %d", got-spent)
	}
}
