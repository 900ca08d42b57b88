package vendorhttp

import (
	"fmt"

	"github.com/notifykit/notify"
)

// MaxBatch returns the largest batch a provider's Config allows:
// configured, or def when configured is 0. A negative one is an error
// naming Config.MaxBatch of provider name.
func MaxBatch(name string, configured, def int) (int, error) {
	switch {
	case configured < 0:
		return 0, fmt.Errorf("%s: Config.MaxBatch must not be negative", name)
	case configured == 0:
		return def, nil
	}
	return configured, nil
}

// Batch checks, one envelope at a time, a batch that goes to the vendor
// in one request: the same message to several recipients. Its zero value
// is not ready; NewBatch makes one. It is not safe for concurrent use.
type Batch struct {
	name string
	seen map[string]bool
	n    int
}

// NewBatch returns a Batch of n envelopes for provider name, or a
// CodeInvalidArgument error when n is not between 1 and max, before
// anything is prepared.
func NewBatch(name string, n, max int) (*Batch, error) {
	if n < 1 || n > max {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "%s: a batch is 1 to %d envelopes, got %d", name, max, n)
	}
	return &Batch{name: name, seen: make(map[string]bool, n), n: n}, nil
}

// Add takes envelope i of the batch, prepared for recipient to: same says
// whether its request is the first envelope's but for the recipient. It
// returns a CodeInvalidArgument error, naming the envelope or the
// recipient, when it is not, or when to was in the batch already (a
// vendor would send that number the message twice, or refuse the whole
// request).
func (b *Batch) Add(i int, to string, same bool) error {
	if !same {
		return notify.Errorf(notify.CodeInvalidArgument, "%s: envelope %d of the batch differs from the first in more than its number", b.name, i)
	}
	if b.seen[to] {
		return notify.Errorf(notify.CodeInvalidArgument, "%s: number %s is twice in the batch", b.name, to)
	}
	b.seen[to] = true
	return nil
}

// Results returns the batch's results once the vendor took its request:
// one a envelope, each with the request's id, which the vendor's delivery
// reports tell apart by number.
func (b *Batch) Results(provider, id string) []*notify.Result {
	out := make([]*notify.Result, b.n)
	for i := range out {
		out[i] = &notify.Result{Provider: provider, ProviderMessageID: id}
	}
	return out
}
