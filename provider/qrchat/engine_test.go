package qrchat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/record"
)

// engineErrorCases are engine errors as WAHA reports them (exception.message
// of its HTTP 500), one for each row of the provider's engineRefusals
// table, and some that must stay of unknown outcome. The sources are the
// issues named in engine.go and below.
var engineErrorCases = []struct {
	name    string
	message string
	refused bool // a certain refusal of the recipient
}{
	// Refusals: one per row of engineRefusals.
	{"WEBJS invalid wid", "Evaluation failed: Error: wid error: invalid wid\n    at new Error (<anonymous>:6:31)\n    at Object.o [as createWid] (https://static.whatsapp.net/rsrc.php/v4/yN/r/5GjOMukPt6_.js:331:847)", true},
	{"WEBJS no LID for user", "Evaluation failed: Error: No LID for user\n    at s (https://static.whatsapp.net/rsrc.php/v4/yJ/r/gh97Kj2dCkY.js:79:180)", true},
	{"GOWS no LID found", "2 UNKNOWN: no LID found for 919876543210@s.whatsapp.net from server", true},
	{"GOWS device part", "2 UNKNOWN: message recipient must be a user JID with no device part", true},
	// Unknown: the engine may have sent the message before it failed.
	{"WEBJS target closed", "Evaluation failed: t: Protocol error (Runtime.callFunctionOn): Target closed.", false},
	{"WEBJS getChat", "Evaluation failed: TypeError: Cannot read properties of undefined (reading 'getChat')", false}, // devlikeapro/waha#1349
	{"WEBJS lid missing", "Lid is missing in chat table", false},                                                      // devlikeapro/waha#1905
	{"NOWEB media upload", "Media upload failed on all hosts", false},                                                 // devlikeapro/waha#1449
}

// TestEngineErrors: WAHA answers every engine error as HTTP 500. One that
// is known to refuse the recipient before sending is a certain, permanent
// refusal (not retried, refunded); any other stays unknown.
func TestEngineErrors(t *testing.T) {
	gw := newFakeWAHA(t)
	p := newProvider(t, gw, qrchat.Config{})
	for _, tt := range engineErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			accepted := gw.count()
			gw.failNextEngine(tt.message, !tt.refused)
			_, err := p.Send(context.Background(), textEnv("482915 is your code", "482915"))
			if err == nil {
				t.Fatal("no error")
			}
			if tt.refused {
				if notify.CodeOf(err) != notify.CodeRejected || notify.OutcomeOf(err) != record.StateFailed || notify.IsRetryable(err) {
					t.Fatalf("got %v (%s, %v), want a certain, permanent refusal", err, notify.CodeOf(err), notify.OutcomeOf(err))
				}
				if !strings.Contains(err.Error(), "refused the recipient") || gw.count() != accepted {
					t.Errorf("error %q, gateway took %d messages", err, gw.count()-accepted)
				}
			} else if notify.CodeOf(err) != notify.CodeOutcomeUnknown || notify.IsRetryable(err) {
				t.Fatalf("got %v (%s), want outcome_unknown", err, notify.CodeOf(err))
			}
			if strings.Contains(err.Error(), "482915") || strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}
