package notify

import (
	"context"
	"fmt"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/record"
)

// failoverKeyPrefix makes the key of a late failover from the failed
// message's ID: its idempotency key, which keeps instances that take the
// same report at once from both sending it, and the key its record is
// found by (store.Ledger.ByKey), which keeps a report repeated after the
// key's retention (vendors resend unacknowledged webhooks for days) from
// sending it again. One message is sent again at most once.
const failoverKeyPrefix = "failover:"

// ReportHandler is an optional interface of a Channel that decides what a
// failed delivery report of one of its messages means beyond the failure
// itself: whether the charge comes back, and whether the message goes
// again another way. A channel without it has every such failure
// refunded and nothing sent again.
//
// The SMS channel keeps the charge (SMS vendors bill a message when they
// submit it to the operator); the chat channel refunds (the cloud API does
// not bill a message it reports failed) and sends a cloud message the
// vendor could not deliver (131047, outside the 24-hour window) once more
// through the QR gateway. Methods must be safe for concurrent use.
type ReportHandler interface {
	// Refund reports whether m, which its vendor accepted (or whose send
	// had an unknown outcome) and report r now fails, gets its charge
	// back. It is asked for a failed report of a record not failed yet
	// (m as it stands), and the answer counts only for the report that
	// moves the record, once: a repeated report changes nothing, and is
	// not asked about. It must be quick.
	Refund(m *record.Message, r *DeliveryReport) bool

	// Failed returns the request that sends m again, with key as its
	// idempotency key, after report r failed it; nil when m is not to be
	// sent again. The Notifier asks only when a report with
	// DeliveryReport.Failover moves a record with a Resend (what the
	// channel's Prepare kept in Envelope.Resend) to failed, and sends what
	// it returns as a new message: priced, charged and recorded like any
	// other, keyed so that it goes out at most once. An error means
	// m.Resend cannot be read.
	Failed(ctx context.Context, m *record.Message, r *DeliveryReport, key string) (Request, error)
}

// refunds reports whether the failure r reports of m, accepted before,
// gives its charge back: as m's channel's ReportHandler says, else yes.
func (n *Notifier) refunds(m *record.Message, r *DeliveryReport) bool {
	if rh, ok := n.channels[m.Kind].(ReportHandler); ok {
		return rh.Refund(m, r)
	}
	return true
}

// failover sends m, which a report failed for a reason another way of its
// channel can overcome (r.Failover), once more, as the channel's
// ReportHandler says, as a new message: priced for that route, charged, recorded with
// a Note naming m, and keyed by "failover:<m.ID>" so that it goes out at
// most once. It returns nil, nil when m is not to be sent again; the
// receipt of the failover already made when there is one (it went out,
// may have, or was refused for good).
//
// An error is one worth a later report: a certain, temporary refusal
// (IsRetryable: the other way is down, or not configured at all), or a
// store failing; only with an store.Keys, since without one only
// the report that fails the message may send it (two instances taking a
// repeated report at once could not tell each other's send). A failover
// that failed for good, or whose outcome is unknown, returns its receipt
// and no error: sending it again could not help, or could send it twice.
func (n *Notifier) failover(ctx context.Context, m *record.Message, r *DeliveryReport, moved bool) (*Receipt, error) {
	const op = "notify.Report"
	if !r.Failover || m.State != record.StateFailed || len(m.Resend) == 0 || (n.idem == nil && !moved) {
		return nil, nil
	}
	key := failoverKeyPrefix + m.ID
	if rc, err := n.failedOver(ctx, m, key); rc != nil || err != nil {
		return rc, err
	}
	rh, ok := n.channels[m.Kind].(ReportHandler)
	if !ok {
		return nil, nil
	}
	req, err := rh.Failed(ctx, m, r, key)
	if err != nil {
		return nil, &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("message %s: %w", m.ID, err)}
	}
	if nilness.Is(req) {
		return nil, nil
	}
	acct, err := n.account(ctx, op, m.Account)
	if err != nil {
		if IsRetryable(err) || CodeOf(err) == CodeInternal {
			return nil, err // the account store is down for now
		}
		return nil, nil // a disabled or deleted account: no report can change that
	}
	run := func() (*Receipt, error) {
		p, err := n.prepare(ctx, op, acct, req)
		if err != nil {
			return nil, err
		}
		p.note = fmt.Sprintf("failover of message %s, which %s reported failed (%s)", m.ID, m.Provider, r.VendorCode)
		return n.dispatch(ctx, op, acct, p)
	}
	var rc *Receipt
	if n.idem == nil {
		rc, err = run()
	} else {
		rc, err = n.idempotent(ctx, op, acct, key, fingerprintOf(req), run)
	}
	if n.idem != nil && (IsRetryable(err) || CodeOf(err) == CodeInternal) {
		return rc, err // the QR gateway or a store is down for now: report it again
	}
	return rc, nil // sent, unknown, or refused for good (an empty wallet, a URL now refused)
}

// failedOver returns the receipt of m's failover, found by its key among
// the records, when one went out or may have, or was refused for good;
// nil when there is none yet or each was refused only for now.
func (n *Notifier) failedOver(ctx context.Context, m *record.Message, key string) (*Receipt, error) {
	prev, err := n.ledger.ByKey(ctx, m.Account, key, m.CreatedAt.Add(-clockSlack))
	if err != nil {
		return nil, storeFailure("notify.Report", "ledger", err)
	}
	if rc := keyReceipt(n.newID, prev); rc != nil {
		return rc, nil
	}
	for i := len(prev) - 1; i >= 0; i-- {
		if !Code(prev[i].ErrorCode).temporary() {
			return recordReceipt(prev[i]), nil // refused for good: trying again cannot help
		}
	}
	return nil, nil
}
