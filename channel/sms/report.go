package sms

import (
	"context"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// Refund implements notify.ReportHandler: a message that a delivery report
// fails after its vendor accepted it keeps its charge, unless
// Config.RefundReportedFailures. The report reaches an SMS only after its
// submission, so one whose send had an unknown outcome keeps it too.
func (c *Channel) Refund(*record.Message, *notify.DeliveryReport) bool { return c.refunds }

// Failed implements notify.ReportHandler: an SMS is not sent again another
// way (its records keep no Resend).
func (c *Channel) Failed(context.Context, *record.Message, *notify.DeliveryReport, string) (notify.Request, error) {
	return nil, nil
}

var _ notify.ReportHandler = (*Channel)(nil)
