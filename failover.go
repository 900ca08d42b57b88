package notify

import (
	"context"
	"encoding/json"
	"fmt"
)

// failoverKeyPrefix makes the key of a late failover from the failed
// message's ID: its idempotency key, which keeps instances that take the
// same report at once from both sending it, and the key its record is
// found by (MessageStore.ByKey), which keeps a report repeated after the
// key's retention (vendors resend unacknowledged webhooks for days) from
// sending it again. One message is sent again at most once.
const failoverKeyPrefix = "failover:"

// resendOf returns what a record keeps to send req again through the QR
// gateway after a late failure of the cloud gateway (Message.Resend), or
// nil when no such failover could happen: the request did not leave the
// gateway to the Notifier (GatewayAuto), goes first to the QR gateway,
// which is not configured or cannot carry it (ChatMessage.Fallback), or
// carries a one-time code.
func resendOf(req *ChatRequest, env *Envelope) []byte {
	c := env.Chat
	if c == nil || !c.Auto || !c.Fallback || c.Gateway != GatewayCloud || env.CarriesOTP || req.OTP != "" {
		return nil
	}
	again := *req
	again.Gateway = "" // set when it is sent again
	b, err := json.Marshal(&again)
	if err != nil {
		return nil // no failover for it; the send itself is unaffected
	}
	return b
}

// failover sends m, which the cloud gateway reported failed for a reason
// the QR gateway can overcome (r.Failover), once more through the QR
// gateway as a new message: priced for that route, charged, recorded with
// a Note naming m, and keyed by "failover:<m.ID>" so that it goes out at
// most once. It returns nil, nil when m is not to be sent again; the
// receipt of the failover already made when there is one (it went out,
// may have, or was refused for good).
//
// An error is one worth a later report: a certain, temporary refusal
// (IsRetryable: the QR session is down, or not configured at all), or a
// store failing; only with an IdempotencyStore, since without one only
// the report that fails the message may send it (two instances taking a
// repeated report at once could not tell each other's send). A failover
// that failed for good, or whose outcome is unknown, returns its receipt
// and no error: sending it again could not help, or could send it twice.
func (n *Notifier) failover(ctx context.Context, m *Message, r *DeliveryReport, moved bool) (*Receipt, error) {
	const op = "notify.Report"
	if !r.Failover || m.State != StateFailed || len(m.Resend) == 0 || (n.idem == nil && !moved) {
		return nil, nil
	}
	key := failoverKeyPrefix + m.ID
	if rc, err := n.failedOver(ctx, m, key); rc != nil || err != nil {
		return rc, err
	}
	var req ChatRequest
	if err := json.Unmarshal(m.Resend, &req); err != nil {
		return nil, &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("message %s: its resend request cannot be read: %w", m.ID, err)}
	}
	req.Account, req.Gateway, req.IdempotencyKey = m.Account, GatewayQR, key
	acct, err := n.account(ctx, op, m.Account)
	if err != nil {
		if IsRetryable(err) || CodeOf(err) == CodeInternal {
			return nil, err // the account store is down for now
		}
		return nil, nil // a disabled or deleted account: no report can change that
	}
	run := func() (*Receipt, error) {
		p, err := n.prepare(ctx, op, acct, &req)
		if err != nil {
			return nil, err
		}
		p.note = fmt.Sprintf("failover of message %s, which the %s gateway reported failed (%s)", m.ID, GatewayCloud, r.VendorCode)
		return n.dispatch(ctx, op, acct, p)
	}
	var rc *Receipt
	if n.idem == nil {
		rc, err = run()
	} else {
		rc, err = n.idempotent(ctx, op, acct, KindChat, req.IdempotencyKey, fingerprintOf(&req), run)
	}
	if n.idem != nil && (IsRetryable(err) || CodeOf(err) == CodeInternal) {
		return rc, err // the QR gateway or a store is down for now: report it again
	}
	return rc, nil // sent, unknown, or refused for good (an empty wallet, a URL now refused)
}

// failedOver returns the receipt of m's failover, found by its key among
// the records, when one went out or may have, or was refused for good;
// nil when there is none yet or each was refused only for now.
func (n *Notifier) failedOver(ctx context.Context, m *Message, key string) (*Receipt, error) {
	prev, err := n.messages.ByKey(ctx, m.Account, key, m.CreatedAt.Add(-clockSlack))
	if err != nil {
		return nil, storeFailure("notify.Report", "messages", err)
	}
	if rc := keyReceipt(n.newID, prev); rc != nil {
		return rc, nil
	}
	for i := len(prev) - 1; i >= 0; i-- {
		if !prev[i].ErrorCode.Temporary() {
			return prev[i].Receipt(), nil // refused for good: trying again cannot help
		}
	}
	return nil, nil
}
