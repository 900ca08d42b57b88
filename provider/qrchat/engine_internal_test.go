package qrchat

import (
	"strings"
	"testing"
)

// TestEngineRefusalsTable: every row of engineRefusals matches the real
// message it was written for (as the issues named beside it show it), and
// only that row; the texts are lower-case, as refusedByEngine expects.
func TestEngineRefusalsTable(t *testing.T) {
	samples := map[string]string{
		"wid error: invalid wid":       "Evaluation failed: Error: wid error: invalid wid\n    at new Error (<anonymous>:6:31)",
		"no lid for user":              "Evaluation failed: Error: No LID for user",
		"no lid found for":             "2 UNKNOWN: no LID found for 525537135075@s.whatsapp.net from server",
		"recipient must be a user jid": "2 UNKNOWN: message recipient must be a user JID with no device part",
	}
	if len(samples) != len(engineRefusals) {
		t.Fatalf("%d samples for %d rows: every row needs one", len(samples), len(engineRefusals))
	}
	for _, row := range engineRefusals {
		t.Run(row.text, func(t *testing.T) {
			msg, ok := samples[row.text]
			if !ok {
				t.Fatalf("no sample for row %q", row.text)
			}
			why, ok := refusedByEngine(msg)
			if !ok || why != row.why {
				t.Fatalf("refusedByEngine(%q) = %q, %v; want %q", msg, why, ok, row.why)
			}
			for _, other := range engineRefusals {
				if other.text != row.text && strings.Contains(strings.ToLower(msg), other.text) {
					t.Errorf("the sample also matches row %q", other.text)
				}
			}
		})
	}
}
