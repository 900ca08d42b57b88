package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
)

// A chat or push send's body may carry "fallback", a timed fallback chain
// (queued.Sender.SendWithFallback): an array of steps, each the body of an SMS
// or e-mail send with three keys of its own:
//
//	"fallback": [{"channel": "sms", "after_seconds": 120, "confirm": "delivered",
//	              "message": "Your order #4411 has shipped."}]
//
// channel is sms or email; after_seconds how long the step waits for the
// message before it to be confirmed (1 to 86400); confirm the state that
// makes the step unneeded (delivered, the default, or read). An SMS step's
// "to" defaults to the chat message's; an e-mail step, and every step of
// a push, names its own. A step's "category" defaults to the message's: a fallback carries the
// same kind of message on another channel, and the recipient's choice on
// that channel must be read for it, not skipped because the step left the
// field out (a step may name another category, never none). A step takes
// no send_at and no idempotency key (the chat send's key covers the
// chain).

// withFallback is a chat request whose body gave a fallback chain.
type withFallback struct {
	notify.Request
	chain []queued.Fallback
}

// chained returns r with the fallback chain raw gives (decodeFallback:
// to and category are the steps' defaults, domain their domain), or r
// when the chain is empty, adding every bad field to fe, and a send_at
// beside a chain: the message goes now and its fallback after it.
func chained(fe *record.FieldErrors, raw json.RawMessage, r notify.Request, to, category, domain string, at time.Time) notify.Request {
	chain := decodeFallback(fe, raw, r.AccountID(), to, category, Header{Domain: domain})
	if len(chain) == 0 {
		return r
	}
	if !at.IsZero() {
		fe.Add("send_at", "cannot go with a fallback: the message goes now and its fallback after it")
	}
	return &withFallback{Request: r, chain: chain}
}

// fallbackKeys are a step's keys beside its channel's body.
var fallbackKeys = []string{"channel", "after_seconds", "confirm"}

// decodeFallback decodes a chat or push body's "fallback" (raw, not null)
// for the message to to (a chat's number; "" for a push) of category (its "category", "" for none), adding
// every bad field to fe under "fallback.<i>".
func decodeFallback(fe *record.FieldErrors, raw json.RawMessage, account, to, category string, m Header) []queued.Fallback {
	var steps []json.RawMessage
	if err := json.Unmarshal(raw, &steps); err != nil {
		fe.Add("fallback", "must be an array of steps: objects with channel, after_seconds and the channel's body")
		return nil
	}
	if len(steps) == 0 {
		return nil
	}
	if len(steps) > queued.MaxFallbacks {
		fe.Addf("fallback", "at most %d steps, got %d", queued.MaxFallbacks, len(steps))
		return nil
	}
	chain := make([]queued.Fallback, 0, len(steps))
	for i, step := range steps {
		prefix := "fallback." + strconv.Itoa(i)
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(step, &fields); err != nil || fields == nil {
			fe.Add(prefix, "must be an object: channel, after_seconds and the channel's body")
			continue
		}
		f := queued.Fallback{}
		var own struct {
			Channel, After, Confirm value
		}
		_ = json.Unmarshal(orNull(fields["channel"]), &own.Channel)
		_ = json.Unmarshal(orNull(fields["after_seconds"]), &own.After)
		_ = json.Unmarshal(orNull(fields["confirm"]), &own.Confirm)
		for _, k := range fallbackKeys {
			delete(fields, k)
		}
		f.After = seconds(fe, prefix+".after_seconds", &own.After)
		switch c := own.Confirm.str(fe, prefix+".confirm", false); c {
		case "", string(record.StateDelivered), string(record.StateRead):
			f.Confirm = record.State(c)
		default:
			fe.Add(prefix+".confirm", "must be delivered or read")
		}
		channel := own.Channel.str(fe, prefix+".channel", false)
		if channel == "sms" && to != "" {
			if _, given := fields["to"]; !given {
				fields["to"], _ = json.Marshal(to)
			}
		}
		if category != "" && isAbsent(fields["category"]) {
			fields["category"], _ = json.Marshal(category)
		}
		body, _ := json.Marshal(fields) // re-encoding what was decoded cannot fail
		var err error
		step := Header{Domain: m.Domain} // the request's key covers the chain, not each step
		switch channel {
		case "sms":
			f.Request, err = stepRequest(decodeSMSAt(body, account, step))
		case "email":
			f.Request, err = stepRequest(decodeEmailAt(body, account, step))
		case "":
			fe.Add(prefix+".channel", "is required: sms or email")
			continue
		default:
			fe.Add(prefix+".channel", "must be sms or email")
			continue
		}
		if err != nil {
			addPrefixed(fe, prefix, err)
			continue
		}
		chain = append(chain, f)
	}
	return chain
}

// stepRequest is a step's request from its channel's decoder, whose body
// must not schedule it.
func stepRequest[R notify.Request](r R, at time.Time, err error) (notify.Request, error) {
	switch {
	case err != nil:
		return nil, err
	case !at.IsZero():
		return nil, notify.InvalidField("send_at", "cannot be given in a step: its after_seconds says when it goes")
	}
	return r, nil
}

// seconds reads a whole number of seconds, 1 to 86400, as a duration.
func seconds(fe *record.FieldErrors, name string, v *value) time.Duration {
	s := v.str(fe, name, true)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if s == "" || err != nil || n < 1 || n > 86400 {
		if s == "" && v.kind == 0 {
			fe.Add(name, "is required: 1 to 86400 seconds")
		} else {
			fe.Add(name, "must be a whole number of seconds from 1 to 86400")
		}
		return 0
	}
	return time.Duration(n) * time.Second
}

// addPrefixed adds the field errors of err, a decoder's InvalidArgument,
// to fe under prefix; any other error under prefix itself.
func addPrefixed(fe *record.FieldErrors, prefix string, err error) {
	var e *notify.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		for _, f := range e.Fields {
			fe.Add(prefix+"."+f.Field, f.Message)
		}
		return
	}
	fe.Add(prefix, err.Error())
}

// isAbsent reports whether a step's field is left out, null or "": what
// the channel's decoder reads as no value.
func isAbsent(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", `""`:
		return true
	}
	return false
}

// orNull is raw, or JSON null when raw is absent.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
