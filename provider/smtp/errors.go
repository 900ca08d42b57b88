package smtp

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/textproto"
	"strings"
	"time"

	"github.com/notifykit/notify"
)

const (
	unavailable = notify.CodeUnavailable
	rejected    = notify.CodeRejected
	unknown     = notify.CodeOutcomeUnknown
)

// wrapCode codes err for the Notifier. A certain refusal is marked as a
// hard bounce when the server refused the recipient's address (asBounce,
// bounce.go), so that the Notifier suppresses it.
func wrapCode(code notify.Code, err error) error {
	if _, marked := err.(*bounceError); code == rejected && !marked {
		err = asBounce(err)
	}
	return notify.WithCode(code, err)
}

// replyCode returns the SMTP reply code in err's chain, if any.
func replyCode(err error) (int, bool) {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code, true
	}
	return 0, false
}

// secrets are the forms in which a login could show up in a server's
// reply (some servers echo what they could not parse), to be cut out of
// errors.
type secrets []string

func newSecrets(user, pass string) secrets {
	if pass == "" {
		return nil
	}
	enc := base64.StdEncoding.EncodeToString
	return secrets{
		enc([]byte("\x00" + user + "\x00" + pass)), // AUTH PLAIN
		enc([]byte(pass)),                          // AUTH LOGIN
		pass,
	}
}

// scrub returns err, or an error with the same chain whose text has the
// secrets cut out when it contains one.
func (s secrets) scrub(err error) error {
	if err == nil || len(s) == 0 {
		return err
	}
	msg := err.Error()
	found := false
	for _, sec := range s {
		if sec != "" && strings.Contains(msg, sec) {
			msg = strings.ReplaceAll(msg, sec, "[redacted]")
			found = true
		}
	}
	if !found {
		return err
	}
	out := &scrubbed{msg: msg}
	if code, ok := replyCode(err); ok {
		out.reply = &textproto.Error{Code: code, Msg: "[redacted]"}
	}
	return out
}

// scrubbed is an error whose text was cleaned of secrets. It unwraps to
// the server's reply code only, since the original chain holds the
// secret.
type scrubbed struct {
	msg   string
	reply *textproto.Error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error {
	if e.reply == nil {
		return nil
	}
	return e.reply
}

// ctxErr returns the context's error when ctx ended, including when err is
// the timeout of a connection deadline taken from ctx that passed a moment
// before the context's own timer fired.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var ne net.Error
	if d, ok := ctx.Deadline(); ok && errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
