package providertest

import (
	"context"
	"sync"

	"github.com/notifykit/notify"
)

// Reports is a notify.Reporter for tests of a provider's delivery-report
// receiver (its Webhook) without a Notifier: it keeps the reports it is
// given and answers each with the error Fail set, nil at first. The zero
// value is ready to use; it is safe for concurrent use, as a receiver
// serves reports concurrently.
type Reports struct {
	mu  sync.Mutex
	got []notify.DeliveryReport
	err error
}

// Report keeps rep and answers the error Fail set: nil and an empty
// result when there is none.
func (r *Reports) Report(_ context.Context, rep *notify.DeliveryReport) (*notify.ReportResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, *rep)
	if r.err != nil {
		return nil, r.err
	}
	return &notify.ReportResult{}, nil
}

// Fail makes Report answer err from now on, as a Notifier answers a
// report it cannot apply (notify.ErrNotRecordedYet, CodeNotFound, ...);
// nil makes it answer success again.
func (r *Reports) Fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// Got returns the reports kept so far, oldest first.
func (r *Reports) Got() []notify.DeliveryReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notify.DeliveryReport(nil), r.got...)
}

// Take returns the reports kept so far, oldest first, and forgets them.
func (r *Reports) Take() []notify.DeliveryReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}
