package chat_test

import (
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/phone/world"
)

// TestNumbersBeyondIndia: chat takes numbers of the countries the
// account may send to, in E.164 form, on any kind of line (a business
// may chat from a fixed line); the allow list still holds.
func TestNumbersBeyondIndia(t *testing.T) {
	r := newRig(t, func(c *chat.Config) { c.Numbers = world.Plan{} })
	acct := account(chat.GatewayCloud)
	acct.Countries = []string{"IN", "GB"}
	for to, want := range map[string]string{
		"+44 7400 123456":  "+447400123456",
		"+44 20 7946 0958": "+442079460958", // a fixed line: refused for SMS, not for chat
		"9876543210":       "+919876543210",
	} {
		env, err := r.ch.Prepare(t.Context(), acct, &chat.Request{To: to, OTP: "482913"})
		if err != nil || env.To != want {
			t.Errorf("Prepare(%s) = %+v, %v; want To %s", to, env, err, want)
			continue
		}
		if wantCountry := map[bool]string{true: "IN", false: "GB"}[strings.HasPrefix(want, "+91")]; env.Country != wantCountry {
			t.Errorf("Prepare(%s): Country %q", to, env.Country)
		}
	}
	_, err := r.ch.Prepare(t.Context(), acct, &chat.Request{To: "+1 415 555 0100", OTP: "482913"})
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "is a number of US, which is not among the account's countries (IN, GB)") {
		t.Errorf("a US number: %v", err)
	}
}
