package sms_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
)

// TestNumbersWithoutAPlan: a channel without Config.Numbers reads Indian
// numbers only, and says what reads the others.
func TestNumbersWithoutAPlan(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{})
	acct := testAccount()
	acct.Countries = []string{"*"}
	_, err := ch.Prepare(t.Context(), acct, &sms.Request{To: "+1 415 555 0100", Message: "hello"})
	if !hasFieldRule(err, "to", "phone/world") {
		t.Errorf("Prepare = %v; want it to name phone/world", err)
	}
	env, err := ch.Prepare(t.Context(), acct, &sms.Request{To: "+91 98765 43210", Message: "hello"})
	if err != nil || env.To != "+919876543210" || env.Country != "IN" {
		t.Errorf("Prepare = %+v, %v", env, err)
	}
}

// hasFieldRule reports whether err is an InvalidArgument error whose
// field's message contains rule.
func hasFieldRule(err error, field, rule string) bool {
	var e *notify.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, f := range e.Fields {
		if f.Field == field && strings.Contains(f.Message, rule) {
			return true
		}
	}
	return false
}
