package notify

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/notifykit/notify/internal/fingerprint"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// DeliveryReport is a vendor's word on a message it accepted: that it was
// sent on, delivered, read, or that it failed. Webhook receivers (in each
// provider's package) turn the vendor's callbacks into reports and hand
// them to Notifier.Report.
//
// A report names its message by Provider and ProviderMessageID, or, when
// the vendor echoes a reference the provider gave it, by Account and
// MessageID (see MessageRef); the reference also finds a message whose
// send had an unknown outcome, whose vendor ID was never learned.
type DeliveryReport struct {
	// Provider is the Name of the provider that sent the message, as the
	// record has it. Required.
	Provider string
	// ProviderMessageID is the vendor's ID of the message.
	ProviderMessageID string
	// Account and MessageID name the message by its own ID, when the
	// vendor echoed the provider's reference (ParseMessageRef).
	Account   string
	MessageID string
	// To, when set, is the recipient the report is about: of several
	// records that share one vendor ID (one request to several
	// recipients), only the one sent to To is meant. Mobile numbers match
	// once normalised (+91, 91 or 0 before them is the same number),
	// e-mail addresses without regard to case. A report without To of a
	// vendor ID shared by several recipients' records names none of them
	// (Notifier.Report answers InvalidArgument).
	To string
	// State is StateSent, StateDelivered, StateRead or StateFailed.
	State record.State
	// At is when the vendor says it happened; zero means now.
	At time.Time
	// VendorCode and Error are the vendor's error code and text, for a
	// failure.
	VendorCode string
	Error      string
	// Failover, on a failed report, says that the other chat gateway can
	// overcome the failure (the cloud API's 131047: outside the 24-hour
	// window); the receiver that knows the vendor's codes sets it. A chat
	// message sent with GatewayAuto through the cloud gateway is then sent
	// once more, through the QR gateway (see Notifier.Report).
	Failover bool
}

// ReportResult says what a report did.
type ReportResult struct {
	// Messages are the records the report named, after it.
	Messages []*record.Message
	// Moved counts the records the report moved to a new state; zero for
	// a repeated or outrun report, which changes nothing (or adds only a
	// step to the history, see record.CanBackfill).
	Moved int
	// Failovers are the receipts of the messages the report sent again
	// through the QR gateway (DeliveryReport.Failover).
	Failovers []*Receipt
}

// Reporter takes delivery reports; *Notifier is one. Webhook receivers
// depend on this rather than on the Notifier, so that tests can watch
// what they report.
type Reporter interface {
	Report(ctx context.Context, r *DeliveryReport) (*ReportResult, error)
}

// MessageRef returns the reference a provider gives a vendor that echoes
// one in its reports (the cloud API's biz_opaque_callback_data), so that
// a report can name the message even when the send's answer was lost.
// It carries no secret: a receiver trusts it only in a report whose
// authenticity it checked.
func MessageRef(account, messageID string) string {
	return url.Values{"a": {account}, "m": {messageID}}.Encode()
}

// ParseMessageRef reads a reference MessageRef wrote; ok is false for
// anything else.
func ParseMessageRef(ref string) (account, messageID string, ok bool) {
	v, err := url.ParseQuery(ref)
	if err != nil || len(v["a"]) != 1 || len(v["m"]) != 1 || v.Get("a") == "" || v.Get("m") == "" {
		return "", "", false
	}
	return v.Get("a"), v.Get("m"), true
}

// Report applies a vendor's delivery report to the records it names.
// A record moves only forward along record.CanMove: sent, then delivered, then
// read, or failed; an unknown one is settled by the first report that
// names it. A report that arrives late, twice or out of order changes
// nothing, except that a step the record passed without (delivered,
// after read) joins its history (record.CanBackfill). So a report may be
// repeated safely: money moves at most once per record.
//
// A failed report moves the record to failed with ErrorCode
// CodeRejected, the vendor's code and text, and refunds the charge unless
// the message's channel says to keep it (ReportHandler.Refund: the SMS
// channel keeps it). Observers get StateSent
// (an unknown record reported sent), StateDelivered, StateRead or
// StateFailed, with the record's receipt and the report.
//
// Failover: when a failed report says the QR gateway can overcome the
// failure (Failover) and the message is a chat message sent with
// GatewayAuto through the cloud gateway (Message.Resend), the message is
// sent once more through the QR gateway as a new message, priced for that
// route and charged (the failed one having been refunded), recorded with
// a Note naming the first and keyed "failover:<first message ID>", so
// that it goes out once however many reports arrive (with an
// store.Keys; without one, only the report that failed the message
// sends it). Its receipt is in ReportResult.Failovers; a failover that a
// temporary refusal stopped is Unavailable, so that the report comes again.
//
// A report can outrun the send it is about: the vendor accepts a
// message and reports on it at once, before the move to sent that records
// its vendor ID has landed. So a report named by a vendor ID that no
// record has is answered Unavailable, with ErrNotRecordedYet as its cause,
// while the report's provider has a send in flight: a record attempting
// that moved within the settle threshold (store.Ledger.Attempting). The
// vendor sends it again, and once the move has landed it applies. After
// the threshold an attempting record is an abandoned send, which holds
// nothing back.
//
// Errors: InvalidArgument for a report without Provider, without a name
// for its message, or with another State, and for one without To whose
// vendor ID names messages to several recipients (a bulk send's: it
// cannot tell which, and moves none); NotFound when no record
// matches and none may yet (a report of a message sent elsewhere, or
// forgotten: receivers acknowledge these and count them); Unavailable
// when a record named is still being sent
// (pending or attempting), and when no record has the vendor ID yet but
// the provider has a send in flight (ErrNotRecordedYet): the report must
// come again later, as vendors do when a webhook is not acknowledged; a
// store's failure as the store reported it.
func (n *Notifier) Report(ctx context.Context, r *DeliveryReport) (out *ReportResult, err error) {
	const op = "notify.Report"
	ctx, sp := n.startReport(ctx, r)
	defer func() { sp.endReport(out, err) }()
	if err := checkReport(r); err != nil {
		return nil, wrap(op, "", CodeInvalidArgument, err)
	}
	recs, err := n.reported(ctx, r)
	if err != nil {
		return nil, storeFailure(op, "ledger", err)
	}
	if len(recs) == 0 {
		return nil, n.unmatched(ctx, op, r)
	}
	sp.linkSends(n, recs)
	if r.To == "" && n.severalRecipients(recs) {
		// One vendor request carried them all (a bulk send): a report
		// that names no recipient cannot say whose message it is about.
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Provider: r.Provider,
			Err: fmt.Errorf("the vendor's ID names %d messages to different recipients and the report names none", len(recs))}
	}
	// All or none: a record still being sent makes the whole report come
	// again later, before any record moves or is sent again.
	for _, m := range recs {
		if m.State.Open() {
			return nil, &Error{Code: CodeUnavailable, Op: op, Provider: r.Provider,
				Err: fmt.Errorf("message %s is still being sent; report it again later", m.ID)}
		}
	}
	res := &ReportResult{Messages: make([]*record.Message, 0, len(recs))}
	for _, m := range recs {
		after, moved, err := n.applyReport(ctx, m, r)
		if err != nil {
			return nil, storeFailure(op, "ledger", err)
		}
		res.Messages = append(res.Messages, after)
		if moved {
			res.Moved++
		}
		if after.Fallback != "" && confirmed(after.State, record.StateDelivered) {
			n.confirmChain(ctx, after) // its timed fallback is not needed, if the report is in time
		}
		rc, err := n.failover(ctx, after, r, moved)
		if rc != nil {
			res.Failovers = append(res.Failovers, rc)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// ErrNotRecordedYet is the cause of Report's Unavailable answer to a
// report named by a vendor ID that no record has yet, while the report's
// provider has a send in flight (see Notifier.Report): the vendor may have
// accepted that send and reported on it before its vendor ID was
// recorded. A receiver that can name a message under several IDs tries
// the others before answering (errors.Is tells this answer from a store
// failure).
var ErrNotRecordedYet = errors.New("no message has the report's vendor ID yet, and its provider has a send in flight; report it again later")

// unmatched is Report's answer when no record matches r: NotFound, or,
// for a report named by a vendor ID while r.Provider has a send in flight
// that may be the one reported on (a record attempting that moved within
// the settle threshold), Unavailable with ErrNotRecordedYet, so that the
// report comes again after our move to sent has recorded the ID.
func (n *Notifier) unmatched(ctx context.Context, op string, r *DeliveryReport) error {
	if r.Account == "" || r.MessageID == "" { // named by its vendor ID
		inFlight, err := n.ledger.Attempting(ctx, r.Provider, n.now().Add(-n.settleAfter))
		if err != nil {
			return storeFailure(op, "ledger", err)
		}
		if inFlight {
			return &Error{Code: CodeUnavailable, Op: op, Provider: r.Provider, Err: ErrNotRecordedYet}
		}
	}
	return &Error{Code: CodeNotFound, Op: op, Provider: r.Provider, Err: errors.New("no message matches the report")}
}

// severalRecipients reports whether recs go to more than one recipient.
func (n *Notifier) severalRecipients(recs []*record.Message) bool {
	for _, m := range recs[1:] {
		if !n.sameRecipient(m.Kind, m.To, recs[0].To) {
			return true
		}
	}
	return false
}

func checkReport(r *DeliveryReport) error {
	var fe record.FieldErrors
	if r == nil {
		return errors.New("nil report")
	}
	if r.Provider == "" {
		fe.Add("provider", "is required")
	}
	if r.ProviderMessageID == "" && (r.Account == "" || r.MessageID == "") {
		fe.Add("provider_message_id", "is required unless account and message_id are given")
	}
	switch r.State {
	case record.StateSent, record.StateDelivered, record.StateRead, record.StateFailed:
	default:
		fe.Addf("state", "must be sent, delivered, read or failed, not %q", r.State)
	}
	return InvalidFields(fe)
}

// reported returns the records r names: by the message's own ID when the
// report carries it, else by the provider's ID; only records sent by
// r.Provider (and to r.To, when set) count.
func (n *Notifier) reported(ctx context.Context, r *DeliveryReport) ([]*record.Message, error) {
	var recs []*record.Message
	if r.Account != "" && r.MessageID != "" {
		m, err := n.ledger.Message(ctx, r.Account, r.MessageID)
		switch {
		case CodeOf(err) == CodeNotFound:
		case err != nil:
			return nil, err
		case r.ProviderMessageID == "" || m.ProviderMessageID == "" || m.ProviderMessageID == r.ProviderMessageID:
			recs = append(recs, m)
		}
	} else {
		var err error
		if recs, err = n.ledger.ByProviderID(ctx, r.Provider, r.ProviderMessageID); err != nil {
			return nil, err
		}
	}
	out := recs[:0]
	for _, m := range recs {
		// A record another provider accepted (the auto gateway fell over)
		// is not this provider's to report on.
		if m.Provider == r.Provider && (r.To == "" || n.sameRecipient(m.Kind, m.To, r.To)) {
			out = append(out, m)
		}
	}
	return out, nil
}

// applyReport moves one record as r says, and tells observers when it
// moved. moved is false when the record was there already or further.
func (n *Notifier) applyReport(ctx context.Context, m *record.Message, r *DeliveryReport) (after *record.Message, moved bool, err error) {
	if m.Entered(r.State) {
		// A repeat, or news of a state the record has passed already: the
		// move would change nothing (Record.Entered), so the ledger is not
		// asked. On PostgreSQL that saves a repeated report three round
		// trips.
		return m, false, nil
	}
	u := store.Update{State: r.State, At: r.At, ProviderMessageID: r.ProviderMessageID}
	if u.At.IsZero() {
		u.At = n.now()
	}
	// In UTC and without a monotonic reading, as a store keeps it: the
	// record the report answers is then the one stored.
	u.At = u.At.UTC().Round(0)
	var failure *Error
	if r.State == record.StateFailed {
		text := r.Error
		if text == "" {
			text = "the vendor reported the message undelivered"
		}
		failure = &Error{Code: CodeRejected, Op: "notify.Report", Provider: r.Provider, Err: errors.New(text)}
		u.ErrorCode, u.Error, u.VendorCode = string(CodeRejected), failure.Error(), r.VendorCode
		u.KeepCharge = !n.refunds(m, r)
	}
	mv, after, err := n.reportMove(ctx, m, u)
	switch {
	case CodeOf(err) == CodeConflict:
		// Repeated or outrun: nothing to do, and the record stands where
		// the move's answer says (m may be older).
		return standing(m, mv), false, nil
	case err != nil:
		return nil, false, err
	}
	if mv.State != r.State {
		return after, false, nil // a step added to the history only
	}
	e := Event{Type: reportEvent(r.State), Receipt: recordReceipt(after), Report: r}
	if failure != nil {
		e.Err = failure
	}
	if after.Refunded && !m.Refunded {
		e.Refund = m.Charge
	}
	n.observe(ctx, e)
	return after, true, nil
}

// reportMove makes a report's move u of m, the record as the report
// read it, and answers the record after it. A move the state machine
// allows from m's state is made from that state only: when it applies,
// nothing moved the record in between, and the record after it is m
// with the move applied (movedRecord), read from no store. Otherwise (it
// moved meanwhile; or the report's state is behind it, a step for the
// history only) the move is made from wherever the record stands, and
// the record read after it; a Conflict then answers where it stands.
func (n *Notifier) reportMove(ctx context.Context, m *record.Message, u store.Update) (store.Moved, *record.Message, error) {
	if record.CanMove(m.State, u.State) {
		from := u
		from.From = m.State
		mv, err := n.ledger.Move(ctx, m.Account, m.ID, from)
		switch {
		case err == nil && mv.State == u.State:
			return mv, movedRecord(m, u, mv), nil
		case err == nil:
			return mv, n.reread(ctx, m, u, mv), nil
		case CodeOf(err) != CodeConflict:
			return mv, nil, err
		}
	}
	mv, err := n.ledger.Move(ctx, m.Account, m.ID, u)
	if err != nil {
		return mv, nil, err
	}
	return mv, n.reread(ctx, m, u, mv), nil
}

func reportEvent(s record.State) record.State {
	switch s {
	case record.StateDelivered:
		return record.StateDelivered
	case record.StateRead:
		return record.StateRead
	case record.StateFailed:
		return record.StateFailed
	}
	return record.StateSent
}

// sameRecipient reports whether recorded, the recipient of a record of
// kind, and reported, the one a delivery report names, are one
// recipient: equal in the channel's canonical form (Recipient: an
// address's domain in Unicode or ASCII), or equal as an address ignoring
// case or as a number's digits (vendors report numbers with or without
// the country code, which a canonical form needs).
func (n *Notifier) sameRecipient(kind Kind, recorded, reported string) bool {
	if a, ok := n.listKey(kind, recorded); ok {
		if b, ok := n.listKey(kind, reported); ok && a == b {
			return true
		}
	}
	if strings.Contains(recorded, "@") {
		return strings.EqualFold(recorded, reported)
	}
	return fingerprint.Mobile(recorded) == fingerprint.Mobile(reported)
}

// WebhookStats counts what a provider's webhook receiver did with the
// requests it got (each receiver's Stats method).
type WebhookStats struct {
	// Reports counts reports that named a message (applied, repeated or
	// outrun alike).
	Reports uint64
	// Unmatched counts reports of messages no record has: acknowledged,
	// since a vendor retries an unacknowledged report for days. A report
	// whose vendor ID no record has yet while its provider has a send in
	// flight is not unmatched but Failed: it may have outrun our move to
	// sent (Notifier.Report).
	Unmatched uint64
	// Ignored counts report entries the receiver does not act on (a
	// status it has no state for).
	Ignored uint64
	// Refused counts requests refused as not the vendor's (401).
	Refused uint64
	// Malformed counts bodies that could not be read (400, 413).
	Malformed uint64
	// Failed counts requests answered 503 because a report could not be
	// applied yet (a store failure, a message still being sent, a report
	// ahead of our move to sent); the vendor sends them again.
	Failed uint64
	// Held counts refusals answered late because their source had more
	// than its share of refusals that second (a flood of forgeries; see
	// provider/vendorhttp's Receiver).
	Held uint64
}

// startReport starts the span of a delivery report: its provider, state
// and vendor's code and ID, none of which is content or a recipient.
func (n *Notifier) startReport(ctx context.Context, r *DeliveryReport) (context.Context, span) {
	ctx, sp := n.start(ctx, spanReport, true)
	if sp.recording() && r != nil {
		kv := make([]SpanAttr, 0, 6)
		kv = append(kv, str(keyProvider, r.Provider), str(keyReportState, string(r.State)))
		if r.ProviderMessageID != "" {
			kv = append(kv, str(keyVendorID, r.ProviderMessageID))
		}
		if r.MessageID != "" {
			kv = append(kv, str(keyMessageID, r.MessageID), str(keyAccountID, r.Account))
		}
		if r.VendorCode != "" {
			kv = append(kv, str(keyVendorCode, r.VendorCode))
		}
		sp.s.SetAttributes(kv...)
	}
	return ctx, sp
}

// linkSends links a report's span to the span of each send it names
// that this process remembers (sendSpans), and counts them.
func (sp span) linkSends(n *Notifier, recs []*record.Message) {
	if !sp.recording() {
		return
	}
	sp.s.SetAttributes(num(keyReportMatched, len(recs)))
	for _, m := range recs {
		if link, ok := n.tracing.sends.get(m.Account, m.ID); ok {
			sp.s.AddLink(link, str(keyMessageID, m.ID))
		}
	}
}

// endReport ends a report's span with what it moved, or its error.
func (sp span) endReport(res *ReportResult, err error) {
	if res != nil && sp.recording() {
		if len(res.Messages) == 1 {
			m := res.Messages[0]
			sp.s.SetAttributes(num(keyReportMoved, res.Moved), str(keyMessageID, m.ID), str(keyAccountID, m.Account), str(keyState, string(m.State)))
		} else {
			sp.s.SetAttributes(num(keyReportMoved, res.Moved))
		}
	}
	sp.end(err)
}
