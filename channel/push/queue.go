package push

import (
	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/reqcodec"
)

// EncodeRequest implements notify.RequestCodec: the request's JSON, with
// its account and idempotency key, so that a push can wait on a queue
// (queued.Sender.Enqueue, SendAt) or be a step of a timed fallback.
func (c *Channel) EncodeRequest(req notify.Request) ([]byte, error) {
	return reqcodec.Encode[*Request](Kind, req)
}

// DecodeRequest implements notify.RequestCodec: it reads what
// EncodeRequest wrote.
func (c *Channel) DecodeRequest(data []byte) (notify.Request, error) {
	return reqcodec.Decode(Kind, data, func(r *Request, account, key string) { r.Account, r.IdempotencyKey = account, key })
}

// Interface guards.
var _ notify.RequestCodec = (*Channel)(nil)
