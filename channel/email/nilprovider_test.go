package email_test

import (
	"testing"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/smsgateway"
)

// A constructor that failed leaves a nil *Provider; wrapped in the
// interface it is not == nil. New must refuse it, not panic on it.
func TestNewRefusesTypedNilProvider(t *testing.T) {
	var failed *smsgateway.Provider // what a failed smsgateway.New returns
	ch, err := email.New(email.Config{Provider: failed})
	if err == nil {
		t.Fatalf("New with a nil provider = %v, want an error", ch)
	}
}
