package pushchannel

import (
	"encoding/json"
	"fmt"

	"github.com/notifykit/notify"
)

// codecVersion is the version of the encoded form EncodeRequest writes.
// A change that an older DecodeRequest could misread (a field renamed or
// given another meaning) takes a new version, and DecodeRequest keeps
// reading every earlier one: a queued record may wait for days.
const codecVersion = 1

// stored is the encoded form of a Request: the Request's own JSON (which
// leaves out the account) with the account beside it, and a version.
type stored struct {
	V       int      `json:"v"`
	Account string   `json:"account"`
	Request *Request `json:"request"`
}

// EncodeRequest implements notify.RequestCodec, so that pushes can be
// queued (queued.Sender.Enqueue, SendAt, EnqueueTx) and be steps of a timed
// fallback: the request, account and idempotency key included, as version
// 1 JSON ({"v":1,"account":...,"request":{...}}). It refuses a request
// that is not a *Request.
func (c *Channel) EncodeRequest(req notify.Request) ([]byte, error) {
	r, ok := req.(*Request)
	if !ok || r == nil {
		return nil, fmt.Errorf("pushchannel: cannot encode a %T, not a push request", req)
	}
	return json.Marshal(stored{V: codecVersion, Account: r.Account, Request: r})
}

// DecodeRequest implements notify.RequestCodec: it reads what any
// version of EncodeRequest wrote back into the same *Request, and refuses
// anything else (another version, no account, no request).
func (c *Channel) DecodeRequest(data []byte) (notify.Request, error) {
	var s stored
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("pushchannel: decode: %w", err)
	}
	switch {
	case s.V != codecVersion:
		return nil, fmt.Errorf("pushchannel: decode: version %d, this channel reads version %d", s.V, codecVersion)
	case s.Account == "" || s.Request == nil:
		return nil, fmt.Errorf("pushchannel: decode: an encoded push needs its account and request")
	}
	s.Request.Account = s.Account
	return s.Request, nil
}

// Interface guards
var (
	_ notify.Channel      = (*Channel)(nil)
	_ notify.RequestCodec = (*Channel)(nil)
)
