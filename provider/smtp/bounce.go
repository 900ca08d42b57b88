package smtp

import (
	"errors"
	"net/textproto"
	"strings"

	"github.com/notifykit/notify/store"
)

// bounceError marks a mail server's permanent refusal of the recipient's
// address: a 5xx reply whose enhanced status code (RFC 3463) is 5.1.x,
// "addressing status", about the destination: 5.1.1 no such mailbox,
// 5.1.2 no such domain, 5.1.3 bad address syntax, 5.1.6 mailbox moved,
// 5.1.10 null MX (RFC 7505). 5.1.7 and 5.1.8 are about the sender's
// address, not the recipient's, and are not bounces. It implements
// store.Bounce, so that the Notifier puts the recipient on the account's
// suppression list without knowing SMTP.
type bounceError struct {
	err error
	// status is the enhanced status code, as "5.1.1".
	status string
}

func (e *bounceError) Error() string { return e.err.Error() }
func (e *bounceError) Unwrap() error { return e.err }

// BounceReason implements store.Bounce: a hard bounce of the message's
// own recipient, its envelope's To. With cc or bcc the provider marks
// only a refusal of the first RCPT TO, To's (provider.go); a refused cc
// or bcc address fails the message without suppressing anyone.
func (e *bounceError) BounceReason() (store.SuppressionReason, string) {
	return store.SuppressHardBounce, ""
}

var _ store.Bounce = (*bounceError)(nil)

// asBounce returns err marked as a bounce when its reply (the last
// textproto.Error in its chain) is a permanent refusal with a
// recipient's 5.1.x enhanced status, else err unchanged. A reply whose
// text was scrubbed of a secret has lost its status and is no bounce.
func asBounce(err error) error {
	var te *textproto.Error
	if err == nil || !errors.As(err, &te) || te.Code < 500 || te.Code > 599 {
		return err
	}
	status := enhancedStatus(te.Msg)
	if !strings.HasPrefix(status, "5.1.") || status == "5.1.7" || status == "5.1.8" {
		return err
	}
	return &bounceError{err: err, status: status}
}

// enhancedStatus returns the enhanced status code that starts a reply's
// text ("5.1.1 User unknown"), or "". A multi-line reply's lines are
// joined with newlines by net/textproto; the first line's code is taken.
func enhancedStatus(msg string) string {
	code, _, _ := strings.Cut(strings.TrimSpace(msg), " ")
	code, _, _ = strings.Cut(code, "\n")
	parts := strings.Split(code, ".")
	if len(parts) != 3 {
		return ""
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return ""
		}
	}
	return code
}
