package notify

import (
	"context"

	"github.com/notifykit/notify/record"
)

// Event describes a delivery event: a message entering a state. Its Type
// is the state, in the one vocabulary of records and receipts:
// StatePending when the message was prepared, charged and recorded and is
// about to be delivered; StateSent, StateFailed or StateUnknown when the
// send settled; StateDelivered and StateRead from reports; and
// StateRefused, no record's state, when a limit refused the send before
// anything was charged (WithRateLimit, WithOTPThrottle: Err is the
// RateLimited *Error, whose cause is ErrRateLimited or ErrOTPThrottled;
// Receipt has the request's Kind, Account and To, Status StateFailed and
// no MessageID; Envelope is the refused message, nil for a composite or
// bulk request).
//
// Envelope carries message content (OTP codes included): observers must
// not log it whole.
//
// A Composite request (the dual OTP) gives each leg's events, with its envelope, and
// then one event for the combined receipt (Kind "otp", otp.Kind), whose Envelope
// is nil.
//
// Events after the send come from Notifier.Report (Report set, Envelope
// nil): StateDelivered and StateRead, StateFailed for a message reported
// undelivered after its vendor accepted it (Receipt.Cost says whether the
// charge was kept), and StateSent for an unknown one reported sent.
// Notifier.Reconcile's events have a nil Envelope too, and so has the
// second StateFailed of a refused message whose refund the ledger
// failed at the time: it comes once the refund is written, from the
// goroutine that retried it, with the refund in Refund (the send's own
// StateFailed had none, its Receipt.Cost the charge standing).
//
// A queued or scheduled send (queued.Sender.Enqueue, SendAt, a send its window
// holds, the steps of SendWithFallback) has its StatePending event when it
// is charged, and its settlement when a worker (queued.Sender.Work) sends it,
// or StateFailed with the refund when it is canceled. A send in the
// caller's transaction (EnqueueTx, EnqueueTxMany) has no StatePending
// event, since its charge stands only if the transaction commits: its
// events start with the worker's, and the money they report is then
// Envelope.Price less the Refunds.
//
// Money: a StatePending event debited Envelope.Price; every later event says
// in Refund what it credited back, so that what a message costs in the
// end is Envelope.Price less the Refunds of its events.
type Event struct {
	Type record.State
	// Envelope is the message; nil for a dual OTP's combined receipt.
	Envelope *Envelope
	// Receipt is set for every event but StatePending.
	Receipt *Receipt
	// Report is the delivery report behind an event of Notifier.Report.
	Report *DeliveryReport
	// Err is the failure, for StateFailed, StateUnknown and StateRefused.
	Err error
	// Refund is what this event's step credited back to the account: the
	// charge of a send that failed (StateFailed with Receipt.Cost zero),
	// the price cut of a chat failover through a cheaper gateway
	// (StateSent), the charge of a message a delivery report failed when
	// its channel refunds it (ReportHandler), of a send Notifier.Reconcile found
	// abandoned before its vendor was called, or of a refused send whose
	// refund was written late (see "Events after the send" above). Zero
	// otherwise, and always for a dual OTP's combined receipt (its legs'
	// events carry theirs).
	Refund Money
}

// Observer receives delivery events, synchronously, on the goroutine of
// the step that made them (the send's, Report's, Reconcile's, or that of
// a refund written late): it must be quick, safe for concurrent use, and
// must not modify the event's envelope or receipt. A panicking observer
// is recovered and ignored.
type Observer interface {
	Observe(ctx context.Context, e Event)
}
