package channeltest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/notifykit/notify"
)

// testRecipient checks Recipient on the recipient of every valid
// request's envelope: it has a canonical form, the form given again comes
// back as it is (the store compares forms byte for byte, so a second pass
// that changed it would miss its own entry), and a recipient Prepare
// an empty recipient is refused naming "to".
func (k *kit) testRecipient(t *testing.T) {
	for i, req := range k.h.Valid {
		what := fmt.Sprintf("Harness.Valid[%d]", i)
		env := k.mustPrepare(t, what, req)
		key, err := k.h.Channel.Recipient(env.To)
		if err != nil {
			t.Errorf("%s: Recipient(env.To) = %v; a recipient Prepare accepts has a canonical form (notify.Channel.Recipient)", what, err)
			continue
		}
		if again, err := k.h.Channel.Recipient(key); err != nil || again != key {
			t.Errorf("%s: Recipient of its own form %q = %q, %v; want it back as it is (notify.Channel.Recipient)", what, key, again, err)
		}
	}
	_, err := k.h.Channel.Recipient("")
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &e) || len(e.Fields) == 0 || e.Fields[0].Field != "to" {
		t.Errorf("Recipient(\"\") = %v; want InvalidArgument naming to (notify.Channel.Recipient)", err)
	}
}
