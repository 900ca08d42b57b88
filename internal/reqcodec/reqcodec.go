// Package reqcodec encodes the requests of this module's channels for a
// queue (notify.RequestCodec): a request's JSON, which leaves out its
// account and idempotency key, wrapped with both. It also copies a
// request into another locale (notify.Envelope.Localized).
package reqcodec

import (
	"encoding/json"
	"fmt"

	"github.com/notifykit/notify"
)

// wire is the encoded form. Its field names are a format records keep
// for as long as they wait: change them only with a reader of the old.
type wire struct {
	Account string          `json:"account"`
	Key     string          `json:"idempotency_key,omitempty"`
	Request json.RawMessage `json:"request"`
}

// Encode returns the JSON of req, which must be an R (the channel's
// request type), wrapped with its account and key.
func Encode[R notify.Request](kind notify.Kind, req notify.Request) ([]byte, error) {
	r, ok := req.(R)
	if !ok {
		var want R
		return nil, fmt.Errorf("%s: encode: %T is not a %T", kind, req, want)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", kind, err)
	}
	return json.Marshal(wire{Account: r.AccountID(), Key: r.Key(), Request: body})
}

// Decode reads what Encode wrote into a new R and sets its account and
// key with set. A failure returns a nil notify.Request, not a nil *R in
// one, which a channel's DecodeRequest could not return as is.
func Decode[R any, P interface {
	*R
	notify.Request
}](kind notify.Kind, data []byte, set func(r P, account, key string)) (notify.Request, error) {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", kind, err)
	}
	if w.Account == "" || len(w.Request) == 0 {
		return nil, fmt.Errorf("%s: decode: an encoded request needs its account and request", kind)
	}
	r := P(new(R))
	if err := json.Unmarshal(w.Request, r); err != nil {
		return nil, fmt.Errorf("%s: decode: %w", kind, err)
	}
	set(r, w.Account, w.Key)
	return r, nil
}

// Localized returns, for notify.Envelope.Localized, a function that
// copies r as it is now and names a locale in the copy with setLocale.
func Localized[T any, P interface {
	*T
	notify.Request
}](r P, setLocale func(P, string)) func(string) notify.Request {
	c := *r
	return func(locale string) notify.Request {
		l := c
		setLocale(&l, locale)
		return P(&l)
	}
}
