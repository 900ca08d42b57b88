package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/record"
)

// Queued and scheduled sends (beyond the spec): a send_at in the body of
// a single-message send endpoint schedules the send (queued.Sender.SendAt), and
// "Prefer: respond-async" (RFC 7240) queues it (queued.Sender.Enqueue) when
// the Handler was given WithRespondAsync. Both answer 202 with the
// receipt, status "scheduled" or "queued"; DELETE /messages/{id} cancels
// such a send before a worker takes it (queued.Sender.Cancel).

// WithRespondAsync makes the single-message send endpoints (POST /sms,
// /sms/send, /email/send, /messenger/send, /send-messenger) and POST
// /sms/bulk (each recipient queued) honour the
// request header "Prefer: respond-async" (RFC 7240): the send is queued
// with queued.Sender.Enqueue and answered at once, 202 with the queued receipt
// and "Preference-Applied: respond-async"; a worker of the Notifier's
// queue sends it. Give it only with a Notifier that has a queue
// (notify.WithQueue): the Handler cannot see whether the Notifier has
// one, and without a queue every such request would be a 503.
//
// Without this option the preference is ignored, as RFC 7240 allows: the
// send is synchronous, answered 200 as ever, without Preference-Applied.
// It is ignored as well on the endpoints that cannot queue (the OTP
// endpoints /send-otp and /messenger/send-otp, and the WithRoute ones),
// and when the body has a send_at, which schedules the send whatever the
// header says. A send_at does not need this option: it always calls
// queued.Sender.SendAt, which answers 503 unavailable without a queue.
func WithRespondAsync() Option {
	return func(h *Handler) error {
		h.async = true
		return nil
	}
}

// sendDecoder is a send route's decoder: the request, and the time its
// body's send_at names (zero when it has none).
type sendDecoder func(body []byte, account string, h Header) (notify.Request, time.Time, error)

// timed makes a sendDecoder of a typed one, so that a typed nil never
// becomes a non-nil notify.Request.
func timed[R notify.Request](d func([]byte, string, Header) (R, time.Time, error)) sendDecoder {
	return func(body []byte, account string, h Header) (notify.Request, time.Time, error) {
		r, at, err := d(body, account, h)
		if err != nil {
			return nil, time.Time{}, err
		}
		return r, at, nil
	}
}

// untimed makes a sendDecoder of a Decoder (WithRoute's): its body has no
// send_at of the Handler's.
func untimed(d Decoder) sendDecoder {
	return func(body []byte, account string, h Header) (notify.Request, time.Time, error) {
		r, err := d(body, account, h)
		return r, time.Time{}, err
	}
}

// decodeChatSend decodes the body of POST /messenger/send and
// /send-messenger with its send_at.
func decodeChatSend(body []byte, account string, m Header) (notify.Request, time.Time, error) {
	return decodeChatAt(body, account, m, false)
}

// decodeChatOTP decodes the body of POST /messenger/send-otp: the chat
// body, whose send_at is a field error.
func decodeChatOTP(body []byte, account string, m Header) (notify.Request, time.Time, error) {
	return decodeChatAt(body, account, m, true)
}

// decodeOTPAt is decodeOTP as a sendDecoder's source: its send_at is a
// field error, so its time is always zero.
func decodeOTPAt(body []byte, account string, m Header) (*otp.Request, time.Time, error) {
	r, err := decodeOTP(body, account, m)
	return r, time.Time{}, err
}

// sendAtExample is the form the field errors of send_at show.
const sendAtExample = "2026-12-01T09:30:00+05:30"

// sendAt returns the time of a send_at field: an RFC 3339 date and time
// with its UTC offset ("Z" or ±hh:mm), fractions of a second allowed.
// Absent, null or "" is the zero time (send now); anything else is a
// field error. How far ahead it may be is the Notifier's rule
// (queued.MaxSchedule).
func sendAt(fe *record.FieldErrors, v *value) time.Time {
	s := v.str(fe, "send_at", false)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.IsZero() || !offsetInRange(s) {
		fe.Add("send_at", "must be an RFC 3339 date and time with its UTC offset, such as "+sendAtExample)
		return time.Time{}
	}
	return t
}

// offsetInRange reports whether the UTC offset that ends s, an RFC 3339
// date and time time.Parse took, is "Z" or within RFC 3339's range: hours
// 00 to 23, minutes 00 to 59. time.Parse takes +24:00 and +23:60.
func offsetInRange(s string) bool {
	if strings.HasSuffix(s, "Z") {
		return true
	}
	if len(s) < 6 {
		return false
	}
	off := s[len(s)-6:] // ±hh:mm, which time.Parse checked the shape of
	return off[1:3] <= "23" && off[4:6] <= "59"
}

// noSendAt records a field error for a send_at on an endpoint that sends
// one-time codes: a code must go at once. Absent, null or "" pass.
func noSendAt(fe *record.FieldErrors, v *value) {
	if v.kind == 0 || v.kind == 's' && v.s == "" {
		return
	}
	fe.Add("send_at", "cannot be given here: a one-time code cannot be scheduled, it must go at once")
}

// preferAsync reports whether the Prefer headers of a request (RFC 7240:
// a comma-separated list of preferences, each a token with an optional
// value and parameters, in any number of header lines) hold the
// preference respond-async, whose token is matched in any case. Commas
// and semicolons inside quoted strings separate nothing.
func preferAsync(hd http.Header) bool {
	for _, line := range hd.Values("Prefer") {
		start, quoted := 0, false
		for i := 0; i <= len(line); i++ {
			if i < len(line) {
				switch c := line[i]; {
				case quoted && c == '\\':
					i++ // the escaped character
					continue
				case c == '"':
					quoted = !quoted
					continue
				case quoted || c != ',':
					continue
				}
			}
			pref := line[start:min(i, len(line))]
			start = i + 1
			// The token ends at "=" (its value) or ";" (its parameters).
			if j := strings.IndexAny(pref, "=;"); j >= 0 {
				pref = pref[:j]
			}
			if strings.EqualFold(strings.TrimSpace(pref), "respond-async") {
				return true
			}
		}
	}
	return false
}

// cancelMessage answers DELETE /messages/{id}: queued.Sender.Cancel stops a
// queued or scheduled message of the caller's before a worker takes it,
// fails it (error code canceled) and refunds it; the answer is the
// record as GET /messages/{id} gives it after that. A message a worker
// has taken, or that is settled, is 409 conflict; another account's, or
// a missing one, 404. The cancel runs detached from the client's
// connection, as a send does.
func (h *Handler) cancelMessage(x *exchange, r *http.Request, acct *notify.Account) {
	id := r.PathValue("id")
	x.message = id
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	rec, err := h.queued.Cancel(ctx, acct.ID, id)
	if err != nil {
		var shown *notify.Receipt
		if rec != nil && rec.Status != record.StateUnknown {
			// Which message, and where it stands; not the rest of the
			// receipt, whose balance a record does not know.
			shown = &notify.Receipt{MessageID: rec.MessageID, Kind: rec.Kind, Status: rec.Status}
		}
		writeErr(x, r, err, shown)
		return
	}
	h.answerMessage(ctx, x, r, acct, id)
}
