package notify_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// reportEvents keeps the events of Notifier.Report, as "type:state".
type reportEvents struct {
	mu  sync.Mutex
	got []string
}

func (l *reportEvents) Observe(_ context.Context, e notify.Event) {
	if e.Report == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, string(e.Type)+":"+string(e.Receipt.Status))
}

func (l *reportEvents) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.got, ",")
}

func newReportRig(t *testing.T, opts ...notify.Option) (*recordRig, *reportEvents) {
	t.Helper()
	r := newRecordRig(t, nil)
	ev := &reportEvents{}
	r.options = append(opts, notify.WithObserver(ev))
	r.n = r.instance(t)
	return r, ev
}

func chatTo(msg string) *chat.Request {
	return &chat.Request{Account: "acme", To: "9876543210", Message: msg}
}

func report(t *testing.T, n *notify.Notifier, rep *notify.DeliveryReport) *notify.ReportResult {
	t.Helper()
	res, err := n.Report(context.Background(), rep)
	if err != nil {
		t.Fatalf("Report(%+v): %v", rep, err)
	}
	return res
}

func TestReportMovesForwardOnly(t *testing.T) {
	r, ev := newReportRig(t)
	ctx := context.Background()
	sent, err := r.n.Send(ctx, smsReq("hello"))
	if err != nil {
		t.Fatal(err)
	}
	at := r.clock.Now().Add(time.Minute)
	byVendorID := func(st record.State, at time.Time) *notify.DeliveryReport {
		return &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: sent.ProviderMessageID, State: st, At: at}
	}
	if res := report(t, r.n, byVendorID(record.StateDelivered, at)); res.Moved != 1 || len(res.Messages) != 1 ||
		res.Messages[0].State != record.StateDelivered {
		t.Fatalf("delivered: %+v", res)
	}
	// Repeated: nothing moves.
	if res := report(t, r.n, byVendorID(record.StateDelivered, at)); res.Moved != 0 || res.Messages[0].State != record.StateDelivered {
		t.Fatalf("delivered again: %+v", res)
	}
	report(t, r.n, byVendorID(record.StateRead, at.Add(time.Minute)))
	// Outrun: a sent report after read, and a failure after read.
	report(t, r.n, byVendorID(record.StateSent, at))
	if res := report(t, r.n, byVendorID(record.StateFailed, at.Add(2*time.Minute))); res.Moved != 0 {
		t.Fatalf("failed after read moved it: %+v", res)
	}
	m := r.message(t, sent.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateSent, record.StateDelivered, record.StateRead)
	if !m.History[3].At.Equal(at) || m.Cost().Minor != 25 || m.Error != "" {
		t.Fatalf("record after reports: %+v", m)
	}
	if got := r.balance(t); got != opening-25 {
		t.Fatalf("balance = %d, want %d", got, opening-25)
	}
	if got, want := ev.String(), "delivered:sent,read:sent"; got != want {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

// countingMoves counts the moves asked of a Ledger.
type countingMoves struct {
	store.Ledger
	moves atomic.Int64
}

func (c *countingMoves) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	c.moves.Add(1)
	return c.Ledger.Move(ctx, account, id, u)
}

// A report of a state the record has entered moves nothing, and does not
// ask the ledger to (a repeat costs PostgreSQL three round trips); one it
// has not entered, though further along, is still backfilled.
func TestRepeatedReportAsksNoMove(t *testing.T) {
	var counted *countingMoves
	r := newRecordRig(t, func(l store.Ledger) store.Ledger {
		counted = &countingMoves{Ledger: l}
		return counted
	})
	sent, err := r.n.Send(context.Background(), chatTo("hi"))
	if err != nil {
		t.Fatal(err)
	}
	at := r.clock.Now().Add(time.Minute)
	byVendorID := func(st record.State) *notify.DeliveryReport {
		return &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: sent.ProviderMessageID, State: st, At: at}
	}
	moves := func(rep *notify.DeliveryReport) int64 {
		t.Helper()
		before := counted.moves.Load()
		report(t, r.n, rep)
		return counted.moves.Load() - before
	}
	for _, tc := range []struct {
		st   record.State
		want int64
	}{
		{record.StateRead, 1},      // moves
		{record.StateRead, 0},      // a repeat
		{record.StateSent, 0},      // entered before read
		{record.StateDelivered, 1}, // not entered: backfilled
		{record.StateDelivered, 0}, // now entered
	} {
		if got := moves(byVendorID(tc.st)); got != tc.want {
			t.Fatalf("a %s report asked %d moves, want %d", tc.st, got, tc.want)
		}
	}
	wantStates(t, r.message(t, sent.MessageID), record.StatePending, record.StateAttempting, record.StateSent,
		record.StateDelivered, record.StateRead)
}

func TestReportOutOfOrderKeepsEachTime(t *testing.T) {
	r, ev := newReportRig(t)
	sent, err := r.n.Send(context.Background(), chatTo("hi"))
	if err != nil {
		t.Fatal(err)
	}
	read, delivered := r.clock.Now().Add(2*time.Minute), r.clock.Now().Add(time.Minute)
	for _, rep := range []struct {
		st record.State
		at time.Time
	}{{record.StateRead, read}, {record.StateDelivered, delivered}, {record.StateDelivered, delivered}} {
		report(t, r.n, &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: sent.ProviderMessageID, State: rep.st, At: rep.at})
	}
	m := r.message(t, sent.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateSent, record.StateDelivered, record.StateRead)
	if !m.History[3].At.Equal(delivered) || !m.History[4].At.Equal(read) {
		t.Fatalf("history = %v, want delivered at %v and read at %v", m.History, delivered, read)
	}
	if got, want := ev.String(), "read:sent"; got != want {
		t.Fatalf("events = %q, want %q (a backfilled step is not news)", got, want)
	}
}

func TestReportedChatFailureIsRefundedOnce(t *testing.T) {
	r, ev := newReportRig(t)
	sent, err := r.n.Send(context.Background(), chatTo("outside the window"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.balance(t); got != opening-40 {
		t.Fatalf("balance after the send = %d", got)
	}
	rep := &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: sent.ProviderMessageID,
		State: record.StateFailed, VendorCode: "131047", Error: "Re-engagement message"}
	for range 3 {
		report(t, r.n, rep)
	}
	m := r.message(t, sent.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateSent, record.StateFailed)
	if !m.Refunded || m.Cost().Minor != 0 || m.VendorCode != "131047" || notify.Code(m.ErrorCode) != notify.CodeRejected ||
		!strings.Contains(m.Error, "Re-engagement message") {
		t.Fatalf("record = %+v", m)
	}
	if got := r.balance(t); got != opening {
		t.Fatalf("balance = %d, want %d: refunded exactly once", got, opening)
	}
	if got, want := ev.String(), "failed:failed"; got != want {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

func TestReportedSMSFailureKeepsChargeByDefault(t *testing.T) {
	r, _ := newReportRig(t)
	sent, err := r.n.Send(context.Background(), smsReq("to a DND number"))
	if err != nil {
		t.Fatal(err)
	}
	rep := &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: sent.ProviderMessageID, State: record.StateFailed, VendorCode: "DND"}
	report(t, r.n, rep)
	if m := r.message(t, sent.MessageID); m.State != record.StateFailed || m.Refunded || m.Cost().Minor != 25 {
		t.Fatalf("record = %+v (cost %v)", m, m.Cost())
	}
	if got := r.balance(t); got != opening-25 {
		t.Fatalf("balance = %d, want the charge kept", got)
	}

	// An app whose SMS vendor refunds undelivered messages says so.
	var asked []record.State
	refunding := &testChannel{kind: sms.Kind, provider: memprovider.New("memsms"),
		refund: func(m *record.Message, _ *notify.DeliveryReport) bool {
			asked = append(asked, m.State)
			return true
		}}
	r2, _ := newReportRig(t, notify.WithChannel(refunding))
	sent, err = r2.n.Send(context.Background(), smsReq("to a DND number"))
	if err != nil {
		t.Fatal(err)
	}
	rep.ProviderMessageID = sent.ProviderMessageID
	report(t, r2.n, rep)
	report(t, r2.n, rep)
	if got := r2.balance(t); got != opening {
		t.Fatalf("balance = %d, want the charge refunded once", got)
	}
	if len(asked) != 1 || asked[0] != record.StateSent {
		t.Fatalf("policy asked for %v; want it asked once, of the sent record (a repeated report moves nothing)", asked)
	}
}

func TestReportSettlesUnknown(t *testing.T) {
	r, ev := newReportRig(t)
	ctx := context.Background()
	r.chat.FailNext(2, notify.CodeOutcomeUnknown)
	delivered, err := r.n.Send(ctx, chatTo("lost answer 1"))
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Fatalf("send: %v", err)
	}
	failed, err := r.n.Send(ctx, chatTo("lost answer 2"))
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown {
		t.Fatalf("send: %v", err)
	}
	if got := r.balance(t); got != opening-80 {
		t.Fatalf("balance = %d: unknown outcomes keep their charge", got)
	}
	// The vendor ID was never learned: the reports name the messages by
	// the reference the provider gave the vendor.
	ref := func(id string, st record.State) *notify.DeliveryReport {
		acct, mid, ok := notify.ParseMessageRef(notify.MessageRef("acme", id))
		if !ok {
			t.Fatal("ParseMessageRef refused MessageRef's reference")
		}
		return &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: "wamid." + id, Account: acct, MessageID: mid, State: st}
	}
	report(t, r.n, ref(delivered.MessageID, record.StateDelivered))
	report(t, r.n, ref(failed.MessageID, record.StateFailed))

	m := r.message(t, delivered.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateUnknown, record.StateDelivered)
	if m.Cost().Minor != 40 || m.ProviderMessageID != "wamid."+delivered.MessageID {
		t.Fatalf("unknown reported delivered = %+v", m)
	}
	m = r.message(t, failed.MessageID)
	wantStates(t, m, record.StatePending, record.StateAttempting, record.StateUnknown, record.StateFailed)
	if !m.Refunded || m.Cost().Minor != 0 {
		t.Fatalf("unknown reported failed = %+v", m)
	}
	if got := r.balance(t); got != opening-40 {
		t.Fatalf("balance = %d, want %d: the delivered one charged, the failed one refunded", got, opening-40)
	}
	if got, want := ev.String(), "delivered:sent,failed:failed"; got != want {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

func TestReportRefusals(t *testing.T) {
	r, _ := newReportRig(t)
	ctx := context.Background()
	sent, err := r.n.Send(ctx, smsReq("hello"))
	if err != nil {
		t.Fatal(err)
	}
	pm := sent.ProviderMessageID
	for _, tt := range []struct {
		name string
		rep  *notify.DeliveryReport
		code notify.Code
	}{
		{"nil", nil, notify.CodeInvalidArgument},
		{"no provider", &notify.DeliveryReport{ProviderMessageID: pm, State: record.StateDelivered}, notify.CodeInvalidArgument},
		{"no message named", &notify.DeliveryReport{Provider: "memsms", State: record.StateDelivered}, notify.CodeInvalidArgument},
		{"a state reports cannot set", &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: pm, State: record.StateUnknown}, notify.CodeInvalidArgument},
		{"unknown vendor ID", &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: "nope", State: record.StateDelivered}, notify.CodeNotFound},
		{"another provider", &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: pm, State: record.StateDelivered}, notify.CodeNotFound},
		{"another recipient", &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: pm, To: "919999999999", State: record.StateDelivered}, notify.CodeNotFound},
		{"another account's message", &notify.DeliveryReport{Provider: "memsms", Account: "other", MessageID: sent.MessageID, State: record.StateDelivered}, notify.CodeNotFound},
		{"the reference of another vendor ID", &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: "other", Account: "acme", MessageID: sent.MessageID, State: record.StateDelivered}, notify.CodeNotFound},
	} {
		_, err := r.n.Report(ctx, tt.rep)
		if notify.CodeOf(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	if m := r.message(t, sent.MessageID); m.State != record.StateSent {
		t.Fatalf("refused reports moved the record to %s", m.State)
	}
	// The recipient with its country code is the same recipient.
	if res := report(t, r.n, &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: pm, To: "+91 98765 43210", State: record.StateDelivered}); res.Moved != 1 {
		t.Fatalf("report with the country code: %+v", res)
	}

}

// A report that outruns the send's own answer finds the record still
// attempting: it is Unavailable, so the receiver asks the vendor to send
// it again, and then it applies.
func TestReportWhileSending(t *testing.T) {
	r, _ := newReportRig(t)
	v := newBlockingVendor(t, r.chat)
	done := make(chan *notify.Receipt, 1)
	go func() {
		rc, _ := r.n.Send(context.Background(), chatTo("slow answer"))
		done <- rc
	}()
	env := <-v.took
	rep := &notify.DeliveryReport{Provider: "memchat", Account: "acme", MessageID: env.ID, State: record.StateDelivered}
	if _, err := r.n.Report(context.Background(), rep); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("report while attempting: %v, want Unavailable", err)
	}
	close(v.release)
	rc := <-done
	rep.ProviderMessageID = rc.ProviderMessageID
	if res := report(t, r.n, rep); res.Moved != 1 {
		t.Fatalf("report after the answer: %+v", res)
	}
}

func TestParseMessageRef(t *testing.T) {
	for _, ref := range []string{"", "a=acme", "m=id", "a=&m=id", "a=x&a=y&m=id", "%zz", "wamid.HBgL"} {
		if _, _, ok := notify.ParseMessageRef(ref); ok {
			t.Errorf("ParseMessageRef(%q) accepted it", ref)
		}
	}
	a, m, ok := notify.ParseMessageRef(notify.MessageRef("acme & co", "id=1"))
	if !ok || a != "acme & co" || m != "id=1" {
		t.Fatalf("round trip = %q, %q, %v", a, m, ok)
	}
}

// lastGateway is the chat gateway of the last message the provider got.
func lastGateway(t *testing.T, r *recordRig) chat.Gateway {
	t.Helper()
	sent := r.chat.Sent()
	if len(sent) == 0 {
		t.Fatal("no chat message was sent")
	}
	return chat.MessageOf(sent[len(sent)-1]).Gateway
}

func failedOutsideWindow(pmid string) *notify.DeliveryReport {
	return &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: pmid, State: record.StateFailed,
		VendorCode: "131047", Error: "Re-engagement message", Failover: true}
}

// failoverCase sends a chat message by the cloud gateway under auto and
// returns the rig and a report that fails it for a reason the QR gateway
// overcomes.
func failoverCase(t *testing.T) (*recordRig, *notify.DeliveryReport) {
	t.Helper()
	r, _ := newReportRig(t)
	first, err := r.n.Send(context.Background(), chatTo("Your order shipped"))
	if err != nil {
		t.Fatal(err)
	}
	return r, failedOutsideWindow(first.ProviderMessageID)
}

// TestReportFailover: a chat message of the auto gateway that the cloud
// gateway reports failed for a reason the QR gateway overcomes is sent
// once more through the QR gateway, priced for it, however many reports
// arrive.
func TestReportFailover(t *testing.T) {
	r, _ := newReportRig(t)
	ctx := context.Background()
	first, err := r.n.Send(ctx, chatTo("Your order shipped"))
	if err != nil {
		t.Fatal(err)
	}
	rep := failedOutsideWindow(first.ProviderMessageID)
	res := report(t, r.n, rep)
	if len(res.Failovers) != 1 {
		t.Fatalf("failovers = %d, want 1", len(res.Failovers))
	}
	again := res.Failovers[0]
	if again.Status != record.StateSent || again.Cost.Minor != 10 || lastGateway(t, r) != chat.GatewayQR {
		t.Fatalf("failover receipt %+v via %s", again, lastGateway(t, r))
	}
	m := r.message(t, again.MessageID)
	if m.IdempotencyKey != "failover:"+first.MessageID || !strings.Contains(m.Note, first.MessageID) ||
		m.Charge.Minor != 10 || len(m.Resend) != 0 {
		t.Fatalf("failover record = %+v", m)
	}
	if got := r.balance(t); got != opening-10 {
		t.Fatalf("balance = %d, want %d: the cloud message refunded, the QR one charged", got, opening-10)
	}
	// The vendor sends the report again, twice: the failover is not.
	for range 2 {
		res := report(t, r.n, rep)
		if len(res.Failovers) != 1 || res.Failovers[0].MessageID != again.MessageID {
			t.Fatalf("repeat: %+v", res.Failovers)
		}
	}
	if got := len(r.chat.Sent()); got != 2 {
		t.Fatalf("the provider got %d messages, want 2: the first and one failover", got)
	}
	if got := r.balance(t); got != opening-10 {
		t.Fatalf("balance after repeats = %d", got)
	}
}

func TestReportFailoverOnlyWhereItHelps(t *testing.T) {
	r, _ := newReportRig(t)
	ctx := context.Background()
	for name, tt := range map[string]struct {
		req *chat.Request
		rep func(pmid string) *notify.DeliveryReport
	}{
		"a code the QR gateway cannot overcome": {chatTo("hi"), func(pm string) *notify.DeliveryReport {
			rep := failedOutsideWindow(pm)
			rep.Failover, rep.VendorCode = false, "131026"
			return rep
		}},
		"the cloud gateway chosen by the request": {&chat.Request{Account: "acme", To: "9876543210", Message: "hi", Gateway: chat.GatewayCloud}, failedOutsideWindow},
		"a one-time code":                         {&chat.Request{Account: "acme", To: "9876543210", OTP: "482915"}, failedOutsideWindow},
		"a delivered report": {chatTo("hi"), func(pm string) *notify.DeliveryReport {
			return &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: pm, State: record.StateDelivered, Failover: true}
		}},
	} {
		sent, err := r.n.Send(ctx, tt.req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		before := len(r.chat.Sent())
		if res := report(t, r.n, tt.rep(sent.ProviderMessageID)); len(res.Failovers) != 0 {
			t.Errorf("%s: sent again: %+v", name, res.Failovers[0])
		}
		if len(r.chat.Sent()) != before {
			t.Errorf("%s: the provider got another message", name)
		}
		m := r.message(t, sent.MessageID)
		if tt.req.OTP != "" && len(m.Resend) != 0 {
			t.Errorf("%s: the record keeps the request with its code: %s", name, m.Resend)
		}
	}
}

// TestReportFailoverRefusedForNow: the QR gateway is down; the report is
// Unavailable, so the vendor sends it again, and then the failover goes.
func TestReportFailoverRefusedForNow(t *testing.T) {
	r, _ := newReportRig(t)
	ctx := context.Background()
	first, err := r.n.Send(ctx, chatTo("Your order shipped"))
	if err != nil {
		t.Fatal(err)
	}
	r.chat.FailNext(1, notify.CodeUnavailable)
	res, err := r.n.Report(ctx, failedOutsideWindow(first.ProviderMessageID))
	if notify.CodeOf(err) != notify.CodeUnavailable || res == nil || res.Moved != 1 {
		t.Fatalf("report while the QR gateway is down: %+v, %v", res, err)
	}
	if m := r.message(t, first.MessageID); m.State != record.StateFailed || !m.Refunded {
		t.Fatalf("the first message: %+v", m)
	}
	res = report(t, r.n, failedOutsideWindow(first.ProviderMessageID))
	if res.Moved != 0 || len(res.Failovers) != 1 || res.Failovers[0].Status != record.StateSent {
		t.Fatalf("the report again: %+v", res)
	}
	if got := r.balance(t); got != opening-10 {
		t.Fatalf("balance = %d", got)
	}
}

// TestReportAfterACheaperFailoverRefundsWhatStands: a chat message priced
// for the cloud gateway that fell over to the cheaper QR gateway costs
// the QR price (the difference credited when it was sent, in the same
// step as its record); a reported failure then refunds that price, not
// the first one.
func TestReportAfterACheaperFailoverRefundsWhatStands(t *testing.T) {
	r, _ := newReportRig(t)
	r.chat.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		return &notify.Result{Route: string(chat.GatewayQR), ProviderMessageID: "qr-1"}, nil
	})
	sent, err := r.n.Send(context.Background(), chatTo("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if sent.Cost.Minor != 10 || sent.Balance.Minor != opening-10 {
		t.Fatalf("receipt after a failover: cost %d, balance %d", sent.Cost.Minor, sent.Balance.Minor)
	}
	if m := r.message(t, sent.MessageID); m.Charge.Minor != 10 {
		t.Fatalf("record charge = %d, want the QR price", m.Charge.Minor)
	}
	report(t, r.n, &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: "qr-1", State: record.StateFailed})
	if got := r.balance(t); got != opening {
		t.Fatalf("balance = %d, want %d: refunded what stood, no more", got, opening)
	}
}

// failingComplete is a store.Keys whose Complete fails, as a
// process that dies between the send and completing its key does.
type failingComplete struct {
	store.Keys
}

func (f failingComplete) Complete(ctx context.Context, account, key string, r []byte) error {
	return errors.New("the process died before completing the key")
}

// A message the vendor accepted and later reported failed (the SMS was
// billed, the SMS channel keeps the charge) went out. A repeat of its
// abandoned key must not send it again.
func TestAbandonedKeyOfAMessageReportedFailedIsNotSentAgain(t *testing.T) {
	r := newRecordRig(t, nil)
	r.options = append(r.options, notify.WithIdempotency(failingComplete{r.idem}))
	n := r.instance(t)
	ctx := context.Background()
	req := smsReq("hello")
	req.IdempotencyKey = "order-9"
	rc, err := n.Send(ctx, req)
	if err != nil || rc.Status != record.StateSent {
		t.Fatalf("send = %+v, %v", rc, err)
	}
	if _, err := n.Report(ctx, &notify.DeliveryReport{Provider: rc.Provider, ProviderMessageID: rc.ProviderMessageID,
		State: record.StateFailed, Error: "handset unreachable"}); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(settleAfter + time.Second)
	again, err := n.Send(ctx, req)
	if err != nil || again.MessageID != rc.MessageID || again.Status != record.StateFailed {
		t.Fatalf("repeat = %+v, %v; want the first message's receipt", again, err)
	}
	if got := r.sms.Len(); got != 1 {
		t.Fatalf("the vendor got %d messages for one idempotency key, want 1 (balance %d, opening %d)", got, r.balance(t), opening)
	}
}

// The vendor re-delivers a failed report after the idempotency retention
// (vendors retry unacknowledged webhooks for days): the failover must not
// go out a second time.
func TestFailoverOnceBeyondRetention(t *testing.T) {
	r, rep := failoverCase(t)
	if res := report(t, r.n, rep); len(res.Failovers) != 1 {
		t.Fatalf("failovers = %d", len(res.Failovers))
	}
	r.clock.Advance(2 * time.Hour) // the rig's idempotency retention is 1h
	res := report(t, r.n, rep)
	if len(res.Failovers) != 1 || res.Failovers[0].Status != record.StateSent {
		t.Fatalf("the repeat answers failovers %+v; want the one made", res.Failovers)
	}
	if got := len(r.chat.Sent()); got != 2 {
		t.Fatalf("the provider got %d messages, want 2 (the first and one failover); balance %d", got, r.balance(t))
	}
}

// A failed report of a message whose account was since disabled: no
// failover can go, and sending the report again cannot change that; the
// report must be taken, not answered with an error a receiver turns
// into 503 (and the vendor into days of retries).
func TestFailoverOfADisabledAccountIsNoRetry(t *testing.T) {
	r, rep := failoverCase(t)
	if err := r.accounts.Update(&notify.Account{ID: "acme", Currency: record.INR(), Disabled: true}); err != nil {
		t.Fatal(err)
	}
	res, err := r.n.Report(context.Background(), rep)
	if err != nil {
		t.Fatalf("Report = %+v, %v (code %s): the vendor is told to send it again, forever", res, err, notify.CodeOf(err))
	}
}

// reportWinsTheRace is a Ledger on which a delivery report fails a
// record, keeping its charge, just before the sender's own move to failed
// arrives (the holder was slow, the reconciler had made it unknown).
type reportWinsTheRace struct{ store.Ledger }

func (s reportWinsTheRace) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if u.State == record.StateFailed && !u.KeepCharge {
		if _, err := s.Ledger.Move(ctx, account, id, store.Update{State: record.StateFailed, At: u.At,
			ErrorCode: string(notify.CodeRejected), Error: "reported undelivered", KeepCharge: true}); err != nil {
			return store.Moved{}, err
		}
	}
	return s.Ledger.Move(ctx, account, id, u)
}

// TestFailKeepsWhatAReportKept: when the sender's move to failed finds
// the record failed already with its charge kept, the receipt and the
// observers say the charge stands, as the record and the wallet do.
func TestFailKeepsWhatAReportKept(t *testing.T) {
	r := newRecordRig(t, func(s store.Ledger) store.Ledger { return reportWinsTheRace{s} })
	var refunded atomic.Int64
	r.options = append(r.options, notify.WithObserver(observerFunc(func(_ context.Context, e notify.Event) {
		refunded.Add(e.Refund.Minor)
	})))
	r.n = r.instance(t)
	r.sms.FailNext(1, notify.CodeRejected)
	rc, err := r.n.Send(context.Background(), smsReq("hello"))
	if notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("send: %+v, %v", rc, err)
	}
	if got := r.balance(t); got != opening-25 || rc.Cost.Minor != 25 {
		t.Fatalf("balance %d, receipt cost %d: want the charge standing in both", got, rc.Cost.Minor)
	}
	if got := refunded.Load(); got != 0 {
		t.Fatalf("the events say %d came back", got)
	}
}

// TestReportThatOutrunsOurMoveToSent: the vendor accepts a message and
// reports on it at once, before our move to sent has recorded its vendor
// ID. No record has that ID yet, but the provider has a send in flight,
// so the report is answered Unavailable (its vendor sends it again) and
// moves nothing; once our move has landed, the report applies. A report
// of an ID no record has is NotFound when the provider has no send in
// flight, or only one older than the settle threshold.
func TestReportThatOutrunsOurMoveToSent(t *testing.T) {
	hold := notifytest.NewSentGate(nil)
	r := newRecordRig(t, func(s store.Ledger) store.Ledger {
		hold.Ledger = s
		return hold
	})
	ctx := context.Background()
	type answer struct {
		rc  *notify.Receipt
		err error
	}
	done := make(chan answer, 1)
	go func() {
		rc, err := r.n.Send(ctx, smsReq("hello"))
		done <- answer{rc, err}
	}()
	released := false
	t.Cleanup(func() {
		if !released {
			hold.Release()
			<-done
		}
	})
	var vendorID string
	select {
	case vendorID = <-hold.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("the send never reached its move to sent")
	}
	delivered := &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: vendorID, State: record.StateDelivered,
		At: r.clock.Now().Add(time.Second)}

	res, err := r.n.Report(ctx, delivered)
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("a report ahead of our move to sent = %+v, %v; want Unavailable (report again later), not lost", res, err)
	}
	// Another provider's report of an ID no record has is not held back
	// by this provider's send.
	if _, err := r.n.Report(ctx, &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: vendorID,
		State: record.StateDelivered}); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("another provider's unmatched report: %v, want NotFound", err)
	}

	hold.Release()
	released = true
	a := <-done
	if a.err != nil || a.rc.Status != record.StateSent || a.rc.ProviderMessageID != vendorID {
		t.Fatalf("send = %+v, %v", a.rc, a.err)
	}
	// The vendor sends the report again: now it applies.
	if res := report(t, r.n, delivered); res.Moved != 1 || res.Messages[0].State != record.StateDelivered {
		t.Fatalf("the report again, after our move: %+v", res)
	}
	wantStates(t, r.message(t, a.rc.MessageID), record.StatePending, record.StateAttempting, record.StateSent, record.StateDelivered)

	// No send in flight: an unmatched report is NotFound, as before.
	if _, err := r.n.Report(ctx, &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: "never-issued",
		State: record.StateDelivered}); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("unmatched report, nothing in flight: %v, want NotFound", err)
	}
}

// TestReportNotHeldBackByAnAbandonedSend: a record left attempting by a
// send whose holder died is no send in flight once it is older than the
// settle threshold: an unmatched report is NotFound again (acknowledged),
// not asked for forever.
func TestReportNotHeldBackByAnAbandonedSend(t *testing.T) {
	r := newRecordRig(t, nil)
	env, _ := crashDuringVendorCall(t, r, smsReq("hello"))
	ctx := context.Background()
	rep := &notify.DeliveryReport{Provider: "memsms", ProviderMessageID: "mem-404", State: record.StateDelivered}
	if _, err := r.n.Report(ctx, rep); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("unmatched report while %s is in flight: %v, want Unavailable", env.ID, err)
	}
	r.clock.Advance(settleAfter + time.Second)
	if _, err := r.n.Report(ctx, rep); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("unmatched report once the send is older than the threshold: %v, want NotFound", err)
	}
}

// TestReportAnswersTheRecordAsStored: a report's answer carries each
// record as the report's move left it (the move applied from the state
// the report read, so nothing moved it between), the same as the ledger
// then holds, step, fields, refund and all, for a delivery, a read and a
// refunded failure; and a report that only adds a step to the history
// answers the stored record too.
func TestReportAnswersTheRecordAsStored(t *testing.T) {
	r, _ := newReportRig(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	check := func(what string, res *notify.ReportResult, id string) {
		t.Helper()
		stored := r.message(t, id)
		if len(res.Messages) != 1 || !reflect.DeepEqual(res.Messages[0], stored) {
			t.Fatalf("%s: the report answered\n%+v\nthe ledger holds\n%+v", what, *res.Messages[0], stored)
		}
	}
	sent, err := r.n.Send(ctx, chatTo("hello"))
	if err != nil {
		t.Fatal(err)
	}
	rep := &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: sent.ProviderMessageID}
	rep.State, rep.At = record.StateRead, at.Add(2*time.Second)
	check("read", report(t, r.n, rep), sent.MessageID)
	rep.State, rep.At = record.StateDelivered, at.Add(time.Second) // late: a step of the history only
	check("delivered after read", report(t, r.n, rep), sent.MessageID)

	failed, err := r.n.Send(ctx, chatTo("outside the window"))
	if err != nil {
		t.Fatal(err)
	}
	res := report(t, r.n, &notify.DeliveryReport{Provider: "memchat", ProviderMessageID: failed.ProviderMessageID,
		State: record.StateFailed, VendorCode: "131047", Error: "Re-engagement message", At: at})
	check("failed", res, failed.MessageID)
	if !res.Messages[0].Refunded || res.Moved != 1 {
		t.Fatalf("the failure's answer: %+v, moved %d; want refunded, moved", res.Messages[0], res.Moved)
	}
}
