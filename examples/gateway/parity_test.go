package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestGatewayBulkSMS: POST /sms/bulk to 100 recipients through the real
// gateway and the Fast2SMS-style fake: 100 receipts, each number reaching
// the vendor once, the wallet charged exactly what the receipts keep; a
// repeat of the key answers the same receipts and sends nothing.
func TestGatewayBulkSMS(t *testing.T) {
	vendor, gate := newCrashVendor(t, false, 1<<30)
	vendor.latency.Store(0)
	g := start(t, map[string]string{"NOTIFY_SMS_URL": gate.URL, "NOTIFY_SMS_KEY": "vendor-key-1", "NOTIFY_BALANCE": "1000"})
	before := g.balanceMinor(t)

	const n = 100
	to := make([]string, n)
	for i := range to {
		to[i] = fmt.Sprintf(`"98%08d"`, 1000+i)
	}
	body := `{"message":"Our store opens at 10 today.","to":[` + strings.Join(to, ",") + `]}`
	hdr := map[string]string{"Authorization": g.key, "Content-Type": "application/json", "Idempotency-Key": "promo-100"}
	a := g.curl(t, http.MethodPost, "/sms/bulk", hdr, body)
	if a.status != 200 || a.body["success"] != true || a.body["accepted"] != float64(n) {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	receipts, _ := a.body["receipts"].([]any)
	if len(receipts) != n {
		t.Fatalf("%d receipts, want %d", len(receipts), n)
	}
	var kept int64
	ids := map[string]bool{}
	for i, v := range receipts {
		rc := v.(map[string]any)
		id, _ := rc["message_id"].(string)
		if rc["success"] != true || rc["to"] != strings.Trim(to[i], `"`) || id == "" || ids[id] {
			t.Fatalf("receipt %d: %v", i, rc)
		}
		ids[id] = true
		kept += int64(rc["cost_minor"].(float64))
	}
	got := vendor.numbers()
	if len(got) != n {
		t.Fatalf("the vendor got %d numbers, want %d", len(got), n)
	}
	for _, q := range to {
		if c := got[strings.Trim(q, `"`)]; c != 1 {
			t.Errorf("%s reached the vendor %d times", q, c)
		}
	}
	spent := before - g.balanceMinor(t)
	if kept == 0 || spent != kept || int64(a.body["cost_minor"].(float64)) != kept {
		t.Fatalf("the wallet paid %d, the receipts keep %d, the answer says %v", spent, kept, a.body["cost_minor"])
	}

	again := g.curl(t, http.MethodPost, "/sms/bulk", hdr, body)
	if again.status != 200 || again.body["message_id"] != a.body["message_id"] || again.raw == "" {
		t.Fatalf("repeat: %d %s", again.status, again.raw)
	}
	if r2, _ := again.body["receipts"].([]any); len(r2) != n || r2[n-1].(map[string]any)["message_id"] != receipts[n-1].(map[string]any)["message_id"] {
		t.Fatalf("repeat: receipts differ: %s", again.raw)
	}
	for _, q := range to {
		if c := vendor.numbers()[strings.Trim(q, `"`)]; c != 1 {
			t.Errorf("after the repeat, %s reached the vendor %d times", q, c)
		}
	}
	if after := before - g.balanceMinor(t); after != spent {
		t.Fatalf("the repeat moved the wallet: paid %d, then %d", spent, after)
	}
}
