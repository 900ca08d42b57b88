package notify

import (
	"context"
	"encoding/json"
	"fmt"
)

// failoverKeyPrefix makes the idempotency key of a late failover from the
// failed message's ID: one message is sent again at most once, however
// many reports of its failure arrive and however many instances take
// them.
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
// most once. It returns nil, nil when m is not to be sent again.
//
// An error is one worth a later report: a certain, temporary refusal
// (IsRetryable: the QR session is down, or not configured at all), or a
// store failing. A failover that failed for good, or whose outcome is
// unknown, returns its receipt and no error: sending it again could not
// help, or could send it twice.
func (n *Notifier) failover(ctx context.Context, m *Message, r *DeliveryReport, moved bool) (*Receipt, error) {
	const op = "notify.Report"
	if !r.Failover || m.State != StateFailed || len(m.Resend) == 0 || (n.idem == nil && !moved) {
		// Without idempotency keys only the report that failed the message
		// sends it again: a repeat could not tell it had been sent.
		return nil, nil
	}
	var req ChatRequest
	if err := json.Unmarshal(m.Resend, &req); err != nil {
		return nil, &Error{Code: CodeInternal, Op: op, Err: fmt.Errorf("message %s: its resend request cannot be read: %w", m.ID, err)}
	}
	req.Account, req.Gateway, req.IdempotencyKey = m.Account, GatewayQR, failoverKeyPrefix+m.ID
	acct, err := n.account(ctx, op, m.Account)
	if err != nil {
		return nil, err
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
	if IsRetryable(err) || CodeOf(err) == CodeInternal {
		return rc, err // the QR gateway or a store is down for now
	}
	return rc, nil // sent, unknown, or refused for good (an empty wallet, a URL now refused)
}
