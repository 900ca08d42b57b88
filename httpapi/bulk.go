package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// POST /sms/bulk (beyond the spec) sends one SMS to many recipients: the
// body of POST /sms with "to" an array of numbers (1 to
// notify.MaxBulkRecipients), sent as one sms.BulkRequest. Every recipient
// is charged and recorded as its own message; the answer has one receipt
// per recipient, in the order of "to". Its status:
//
//   - 200 when at least one recipient was accepted and none has an
//     unknown outcome; recipients that failed carry "success": false and
//     their "error" (they are refunded);
//   - 202 when some recipient's outcome is unknown (it stays charged and
//     must not be sent again blindly); "success" says whether any other
//     was accepted;
//   - otherwise (no recipient accepted, none unknown) the status of the
//     first recipient's error, with every receipt.
//
// Bad input (a bad number is named "to.<i>", its index) is a 400 with
// nothing sent or charged. A repeat of the idempotency key answers the
// first receipt again.
//
// A send_at in the body schedules every recipient (queued.Sender.SendAt), and
// "Prefer: respond-async" with WithRespondAsync queues them
// (queued.Sender.Enqueue): 202, each receipt "queued" or "scheduled" (or
// "failed", when the wallet could not pay for it: the others stand), and
// a worker sends each.

// bulkBody is the JSON of POST /sms/bulk: smsBody's fields, "to" an
// array, without the "numbers" alias (a comma-separated string in the
// spec).
type bulkBody struct {
	To json.RawMessage `json:"to"`
	smsText
}

// bulkKeys are the keys of a bulk body; the endpoint refuses any other.
var bulkKeys = bodyKeys(reflect.TypeFor[bulkBody]())

// decodeBulkSMS decodes the body of POST /sms/bulk and its send_at (zero
// when absent).
func decodeBulkSMS(body []byte, account string, m Header) (*sms.BulkRequest, time.Time, error) {
	var w bulkBody
	if err := unmarshalKeys(body, &w, bulkKeys, true); err != nil {
		return nil, time.Time{}, err
	}
	var fe record.FieldErrors
	r := &sms.BulkRequest{To: recipients(&fe, w.To)}
	at := w.fill(&fe, &r.Message, account, m)
	if err := notify.InvalidFields(fe); err != nil {
		return nil, time.Time{}, err
	}
	return r, at, nil
}

// recipients reads the "to" array of a bulk body: 1 to
// notify.MaxBulkRecipients numbers, each a string or a whole JSON number,
// a bad one named "to.<i>" as the Notifier names a bad number.
func recipients(fe *record.FieldErrors, raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		fe.Add("to", "is required: an array of 1 to "+strconv.Itoa(notify.MaxBulkRecipients)+" mobile numbers")
		return nil
	}
	if raw[0] != '[' {
		fe.Add("to", "must be an array of mobile numbers (one number goes to POST /sms)")
		return nil
	}
	var vs []value
	if err := json.Unmarshal(raw, &vs); err != nil {
		fe.Add("to", "must be an array of mobile numbers")
		return nil
	}
	switch {
	case len(vs) == 0:
		fe.Add("to", "must name at least one recipient")
		return nil
	case len(vs) > notify.MaxBulkRecipients:
		fe.Addf("to", "at most %d recipients, got %d", notify.MaxBulkRecipients, len(vs))
		return nil
	}
	to := make([]string, len(vs))
	for i := range vs {
		name := "to." + strconv.Itoa(i)
		to[i] = vs[i].str(fe, name, true)
		if to[i] == "" && vs[i].kind != 'x' && vs[i].kind != 'f' {
			fe.Add(name, "is required: a mobile number")
		}
	}
	return to
}

// bulkSMS serves POST /sms/bulk.
func (h *Handler) bulkSMS(x *exchange, r *http.Request, acct *notify.Account) {
	if !h.readBody(x, r) {
		return
	}
	req, at, err := decodeBulkSMS(x.body, acct.ID, headerMeta(r))
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	h.sendBulk(ctx, x, r, req, at)
}

// sendBulk sends a bulk request as its body asks (scheduled for at when
// it is set, queued on "Prefer: respond-async", else at once) and answers
// the outcome.
func (h *Handler) sendBulk(ctx context.Context, x *exchange, r *http.Request, req notify.Bulk, at time.Time) {
	var rec *notify.Receipt
	var err error
	switch {
	case !at.IsZero():
		rec, err = h.queued.SendAt(ctx, req, at)
	case h.async && preferAsync(r.Header):
		rec, err = h.queued.Enqueue(ctx, req)
		if rec != nil {
			x.Header().Set("Preference-Applied", "respond-async")
		}
	default:
		rec, err = h.n.Send(ctx, req)
	}
	finishBulk(x, r, rec, err)
}

// finishBulk answers the outcome of a bulk send (see the rule above). A
// receipt without legs (a repeat of a key whose first request died on
// its way, answered with one recipient's record) is answered as a single
// send's.
func finishBulk(x *exchange, r *http.Request, rec *notify.Receipt, err error) {
	if rec == nil || len(rec.Legs) == 0 {
		finish(x, r, rec, err)
		return
	}
	x.message = rec.MessageID
	x.detail = errorDetail(err, rec)
	var accepted, waiting, unknown, failed int
	for _, l := range rec.Legs {
		switch l.Status {
		case record.StateSent:
			accepted++
		case record.StateQueued, record.StateScheduled:
			waiting++
		case record.StateUnknown:
			unknown++
		default:
			failed++
		}
	}
	status := http.StatusOK
	switch {
	case err != nil:
		x.code = notify.CodeOf(err)
		status = StatusOf(x.code)
		setRetryAfter(x, err, x.code)
	case unknown > 0, waiting > 0:
		status = http.StatusAccepted
	}
	b := append(x.out[:0], `{"success":`...)
	b = strconv.AppendBool(b, err == nil)
	top := *rec
	top.Legs = nil
	b = appendReceiptFields(b, &top, false, x.id)
	b = appendKey(b, "recipients")
	b = appendInt(b, int64(len(rec.Legs)))
	b = appendKey(b, "accepted")
	b = appendInt(b, int64(accepted))
	if waiting > 0 {
		b = appendKey(b, "queued")
		b = appendInt(b, int64(waiting))
	}
	b = appendKey(b, "failed")
	b = appendInt(b, int64(failed))
	b = appendKey(b, "unknown")
	b = appendInt(b, int64(unknown))
	if err != nil {
		b = appendErrorObject(b, err, x.id)
	}
	b = appendKey(b, "receipts")
	b = append(b, '[')
	for i, l := range rec.Legs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"success":`...)
		b = strconv.AppendBool(b, l.Status == record.StateSent || l.Status.Waiting())
		b = appendOptField(b, "to", specNumber(l.To))
		b = appendOptField(b, "country", l.Country)
		leg := *l
		leg.Metered = rec.Metered
		leg.Legs = nil
		b = appendReceiptFields(b, &leg, true, x.id)
		if leg.Status != record.StateSent && leg.ErrorCode != "" {
			b = appendKey(b, "error")
			b = append(b, '{')
			b = appendField(b, "code", string(leg.ErrorCode))
			b = appendField(b, "message", legMessage(leg.ErrorCode, leg.Error, x.id))
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, ']', '}', '\n')
	x.out = b
	writeJSON(x, status, b)
}
