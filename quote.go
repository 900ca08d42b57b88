package notify

import (
	"context"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/record"
)

// Quote answers what Send would charge for req now, without charging,
// recording or sending anything: req is checked and priced as Send
// checks and prices it (a bad field is the same InvalidArgument error),
// and nothing counts against a limit or an idempotency key. A Composite
// request's quote is the sum of its parts that can go; a Bulk request's
// the sum of its recipients'. The quote is the most the send will keep
// charged, since the Notifier never charges more than the price it
// opened the record with. Without prices (no WithPrices) it is zero.
// Quote is safe for concurrent use.
func (n *Notifier) Quote(ctx context.Context, req Request) (Money, error) {
	const op = "notify.Quote"
	if nilness.Is(req) {
		return Money{}, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "request", Message: "is required"}}}
	}
	acct, err := n.account(ctx, op, req.AccountID())
	if err != nil {
		return Money{}, err
	}
	var reqs []Request
	switch r := req.(type) {
	case Composite:
		parts, err := n.prepareParts(ctx, op, acct, r)
		if err != nil {
			return Money{}, err
		}
		total := Money{Currency: acct.Currency}
		for _, p := range parts {
			if p.p.env != nil {
				total.Minor += p.p.env.Price.Minor
			}
		}
		return total, nil
	case Bulk:
		if reqs, err = r.Recipients(); err != nil {
			return Money{}, wrap(op, "", CodeInvalidArgument, err)
		}
	default:
		reqs = []Request{req}
	}
	ps := make([]prepared, len(reqs))
	for i, r := range reqs {
		if ps[i], err = n.prepareAsIs(ctx, op, acct, r); err != nil {
			return Money{}, err
		}
	}
	// Priced in each recipient's locale, as they would be sent.
	if err := n.localize(ctx, op, func(int) *Account { return acct }, offered(ps)); err != nil {
		return Money{}, err
	}
	total := Money{Currency: acct.Currency}
	for _, p := range ps {
		total.Minor += p.env.Price.Minor
	}
	return total, nil
}
