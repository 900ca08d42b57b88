package notify_test

import (
	"testing"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/smsgateway"
)

// A constructor that failed leaves a nil *Provider; wrapped in the
// interface it is not == nil. Every channel's New must refuse it with an
// error, not panic on it (the README's first snippet once did).
func TestChannelsRefuseTypedNilProvider(t *testing.T) {
	var failed *smsgateway.Provider // what a failed smsgateway.New returns
	for name, build := range map[string]func() (any, error){
		"sms":        func() (any, error) { return sms.New(sms.Config{Provider: failed}) },
		"email":      func() (any, error) { return email.New(email.Config{Provider: failed}) },
		"chat cloud": func() (any, error) { return chat.New(chat.Config{Cloud: failed}) },
		"chat qr":    func() (any, error) { return chat.New(chat.Config{QR: failed}) },
	} {
		if ch, err := build(); err == nil {
			t.Errorf("%s: New with a nil provider = %v, want an error", name, ch)
		}
	}
}
