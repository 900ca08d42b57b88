package chat

import (
	"context"
	"encoding/json"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// resendOf returns what a record keeps to send r again through the QR
// gateway after a late failure of the cloud gateway (record.Message.Resend),
// or nil when no such failover could happen: the request did not leave the
// gateway to the channel (GatewayAuto), goes first to the QR gateway,
// which is not configured or cannot carry it (Message.Fallback), or
// carries a one-time code (a code resent minutes later is of no use, and a
// record must not keep one).
func resendOf(r *Request, msg *Message, carriesOTP bool) []byte {
	if !msg.Auto || !msg.Fallback || msg.Gateway != GatewayCloud || carriesOTP || r.OTP != "" {
		return nil
	}
	again := *r
	again.Account, again.IdempotencyKey = "", ""
	again.Gateway = "" // set when it is sent again
	b, err := json.Marshal(&again)
	if err != nil {
		return nil // no failover for it; the send itself is unaffected
	}
	return b
}

// Refund implements notify.ReportHandler: a chat message a delivery report
// fails gets its charge back (the cloud API does not bill a message it
// reports failed, and the QR gateway bills nothing per message).
func (c *Channel) Refund(*record.Message, *notify.DeliveryReport) bool { return true }

// Failed implements notify.ReportHandler: a cloud message that a report
// failed for a reason the QR gateway can overcome (the report's Failover,
// such as 131047, outside the 24-hour window) is sent once more, through
// the QR gateway, from what Prepare kept (record.Message.Resend).
func (c *Channel) Failed(_ context.Context, m *record.Message, _ *notify.DeliveryReport, key string) (notify.Request, error) {
	if len(m.Resend) == 0 {
		return nil, nil
	}
	var req Request
	if err := json.Unmarshal(m.Resend, &req); err != nil {
		return nil, err
	}
	req.Account, req.Gateway, req.IdempotencyKey = m.Account, GatewayQR, key
	return &req, nil
}
