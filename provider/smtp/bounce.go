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
	// recipient is the address refused, as RCPT TO carried it, when it is
	// not the envelope's To (a cc or bcc); empty for To.
	recipient string
}

func (e *bounceError) Error() string { return e.err.Error() }
func (e *bounceError) Unwrap() error { return e.err }

// BounceReason implements store.Bounce: a hard bounce of the address the
// server refused: the envelope's To (an empty recipient), or, for a
// message with cc or bcc, the cc or bcc address whose RCPT TO was refused
// (classify, provider.go). The Notifier puts it on the list in the
// channel's canonical form (email.Recipient), whatever spelling RCPT TO
// carried.
func (e *bounceError) BounceReason() (store.SuppressionReason, string) {
	return store.SuppressHardBounce, e.recipient
}

var _ store.Bounce = (*bounceError)(nil)

// asBounce returns err marked as a bounce of the envelope's To when its
// reply (the last textproto.Error in its chain) is a permanent refusal
// with a recipient's 5.1.x enhanced status, else err unchanged. A reply
// whose text was scrubbed of a secret has lost its status and is no
// bounce.
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

// bounceOf returns err, the refusal of rcpt[i]'s RCPT TO, as asBounce
// marks it, naming rcpt[i] when it is a cc or bcc (i > 0). wrapCode
// leaves a bounce already marked as it is.
func bounceOf(err error, rcpt []string, i int) error {
	err = asBounce(err)
	if b, ok := err.(*bounceError); ok && i > 0 {
		b.recipient = rcpt[i]
	}
	return err
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
