package smtp

import (
	"errors"
	"fmt"
	"net/textproto"
	"testing"

	"github.com/notifykit/notify/store"
)

// Only a permanent reply with a recipient's 5.1.x status is a bounce.
func TestAsBounce(t *testing.T) {
	for _, c := range []struct {
		code int
		msg  string
		want bool
	}{
		{550, "5.1.1 User unknown", true},
		{550, "5.1.10 Recipient address has null MX", true},
		{553, "5.1.3 Bad recipient address syntax", true},
		{551, "5.1.6 Mailbox has moved", true},
		{550, "5.1.1", true},
		{550, "5.1.7 Bad sender's mailbox address syntax", false},
		{553, "5.1.8 Bad sender's system address", false},
		{550, "5.7.1 Relaying denied", false},
		{450, "4.1.1 Mailbox busy", false},
		{550, "User unknown", false},
		{550, "5.1.x nope", false},
		{550, "[redacted]", false},
	} {
		err := fmt.Errorf("smtp: server replied %w", &textproto.Error{Code: c.code, Msg: c.msg})
		var b store.Bounce
		got := errors.As(asBounce(err), &b)
		if got != c.want {
			t.Errorf("%d %s: bounce %v; want %v", c.code, c.msg, got, c.want)
		}
		if got {
			if r, to := b.BounceReason(); r != store.SuppressHardBounce || to != "" {
				t.Errorf("BounceReason = %s, %q", r, to)
			}
			var te *textproto.Error
			if !errors.As(asBounce(err), &te) || te.Code != c.code {
				t.Errorf("the bounce hides the reply")
			}
		}
	}
	if asBounce(nil) != nil || asBounce(errors.New("x")).Error() != "x" {
		t.Error("asBounce changed an error without a reply")
	}
}
