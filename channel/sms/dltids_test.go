package sms_test

import (
	"context"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

const (
	dltTemplate = "1107169876543210987"
	dltEntity   = "1101456789012345678"
	dltContent  = "Dear {#var#}, your order {#var#} has shipped. - ACMECO"
	dltText     = "Dear Asha, your order 4711 has shipped. - ACMECO"
)

// dltVendors is an SMS channel whose dlt messages go to the bulk vendor
// and fail over to MSG91, both by their own template IDs, over their
// strict fakes; the account's template has the IDs ids gives.
type dltVendors struct {
	n      *notify.Notifier
	bulk   *smsgatewaytest.Server
	msg91  *msg91test.Server
	wallet *memstore.Wallet
	ledger *memstore.Ledger
}

func newDLTVendors(t *testing.T, ids map[string]string, msg91First bool) *dltVendors {
	t.Helper()
	v := &dltVendors{
		bulk: smsgatewaytest.NewServer(smsgatewaytest.Config{APIKey: "vendor-key-77f3", Templates: []smsgatewaytest.Template{
			{ID: dltTemplate, EntityID: dltEntity, MessageID: "161", Sender: "ACMECO", Content: dltContent}}}),
		msg91: msg91test.NewServer(msg91test.Config{AuthKey: "msg91-key-0123456789abcdef", Templates: []msg91test.Template{
			{ID: "66a1b2c3d4e5f6a7b8c9d0e1", DLTTemplateID: dltTemplate, Sender: "ACMECO", Content: "Dear ##VAR1##, your order ##VAR2## has shipped. - ACMECO"}}}),
	}
	t.Cleanup(v.bulk.Close)
	t.Cleanup(v.msg91.Close)
	bulk, err := smsgateway.New(smsgateway.Config{APIKey: "vendor-key-77f3", BaseURL: v.bulk.URL, HTTPClient: v.bulk.Client()})
	if err != nil {
		t.Fatal(err)
	}
	m91, err := msg91.New(msg91.Config{AuthKey: "msg91-key-0123456789abcdef", BaseURL: v.msg91.URL, HTTPClient: v.msg91.Client()})
	if err != nil {
		t.Fatal(err)
	}
	rules := []sms.ProviderRule{{Provider: bulk, Countries: []string{"IN"}}, {Provider: m91, Countries: []string{"IN"}}}
	if msg91First {
		rules[0], rules[1] = rules[1], rules[0]
	}
	ch, err := sms.New(sms.Config{Providers: rules})
	if err != nil {
		t.Fatal(err)
	}
	acct := &notify.Account{ID: "acme", Currency: record.INR(), Settings: sms.Settings{SenderID: "ACMECO",
		DLTTemplates: []sms.DLTTemplate{{ID: dltTemplate, EntityID: dltEntity, Content: dltContent, MessageIDs: ids}}}.Map()}
	v.wallet = memstore.NewWallet()
	if err := v.wallet.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	v.ledger = memstore.NewLedger(v.wallet)
	v.n, err = notify.New(testAccounts{acct}, v.ledger, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *dltVendors) send(t *testing.T) (*notify.Receipt, error) {
	t.Helper()
	return v.n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Route: sms.RouteDLT,
		SenderID: "ACMECO", DLTTemplateID: dltTemplate, Message: dltText})
}

func (v *dltVendors) balance(t *testing.T) int64 {
	t.Helper()
	b, err := v.wallet.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

// Each vendor is sent its own template ID: a dlt message that fails over
// from the bulk vendor to MSG91 reaches MSG91 by MSG91's ID, charged once.
func TestDLTFailoverSendsEachVendorItsOwnID(t *testing.T) {
	v := newDLTVendors(t, map[string]string{"smsgateway": "161", "msg91": "66a1b2c3d4e5f6a7b8c9d0e1"}, false)
	v.bulk.FailNext(smsgatewaytest.LowBalance)
	rc, err := v.send(t)
	if err != nil || rc.Provider != "msg91" {
		t.Fatalf("Send = %+v, %v", rc, err)
	}
	sent := v.msg91.Sent()
	if len(sent) != 1 || sent[0].TemplateID != "66a1b2c3d4e5f6a7b8c9d0e1" || sent[0].DLTTemplateID != dltTemplate {
		t.Fatalf("MSG91 got %+v", sent)
	}
	if got := v.balance(t); got != opening-18 {
		t.Fatalf("balance %d, want one dlt price charged", got)
	}
	// Without the failure, the bulk vendor takes it by its Message ID.
	if rc, err := v.send(t); err != nil || rc.Provider != "smsgateway" {
		t.Fatalf("Send = %+v, %v", rc, err)
	}
	if s := v.bulk.Sent(); len(s) != 1 || s[0].Route != "dlt" || s[0].TemplateID != dltTemplate {
		t.Fatalf("the bulk vendor got %+v", s)
	}
}

// A vendor that sends templates by its own ID only is skipped for a
// template without its ID: never sent another vendor's.
func TestDLTNeverSendsAnotherVendorsID(t *testing.T) {
	// MSG91 has no ID: the bulk vendor's temporary refusal ends the send
	// (refunded); MSG91 is never called.
	v := newDLTVendors(t, map[string]string{"smsgateway": "161"}, false)
	v.bulk.FailNext(smsgatewaytest.LowBalance)
	rc, err := v.send(t)
	if notify.CodeOf(err) != notify.CodeUnavailable || v.msg91.Requests() != 0 || v.balance(t) != opening {
		t.Fatalf("Send = %+v, %v; MSG91 called %d times, balance %d", rc, err, v.msg91.Requests(), v.balance(t))
	}
	// MSG91 first in the rules, still without its ID: the message goes
	// straight to the bulk vendor.
	v = newDLTVendors(t, map[string]string{"smsgateway": "161"}, true)
	if rc, err := v.send(t); err != nil || rc.Provider != "smsgateway" || v.msg91.Requests() != 0 {
		t.Fatalf("Send = %+v, %v; MSG91 called %d times", rc, err, v.msg91.Requests())
	}
	// The old single message_id is every vendor's: MSG91 is offered it, as
	// before MessageIDs.
	v = newDLTVendors(t, nil, true)
	if rc, err := v.send(t); err != nil || rc.Provider != "smsgateway" || v.msg91.Requests() != 0 {
		t.Fatalf("no IDs at all: Send = %+v, %v; MSG91 called %d times", rc, err, v.msg91.Requests())
	}
}

// With MSG91 alone and no ID of its own, a dlt message is refused before
// anything is charged, naming the template and the field to set.
func TestDLTWithoutAnyVendorIsRefused(t *testing.T) {
	srv := msg91test.NewServer(msg91test.Config{AuthKey: "msg91-key-0123456789abcdef"})
	t.Cleanup(srv.Close)
	m91, err := msg91.New(msg91.Config{AuthKey: "msg91-key-0123456789abcdef", BaseURL: srv.URL, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := sms.New(sms.Config{Provider: m91})
	if err != nil {
		t.Fatal(err)
	}
	acct := &notify.Account{ID: "acme", Currency: record.INR(), Settings: sms.Settings{SenderID: "ACMECO",
		DLTTemplates: []sms.DLTTemplate{{ID: dltTemplate, EntityID: dltEntity, Content: dltContent,
			MessageIDs: map[string]string{"smsgateway": "161"}}}}.Map()}
	env, err := ch.Prepare(context.Background(), acct, &sms.Request{Account: "acme", To: "9876543210", Route: sms.RouteDLT,
		SenderID: "ACMECO", DLTTemplateID: dltTemplate, Message: dltText})
	if !hasFieldRule(err, "dlt_template_id", "has no template ID of msg91") || !hasFieldRule(err, "dlt_template_id", "message_ids.msg91") {
		t.Fatalf("Prepare = %+v, %v", env, err)
	}
}

// A batch its vendor refuses for now fails over one recipient at a time:
// each goes to its next provider on its own (MSG91, by its own template
// ID), charged once, with the batch's call and its own on its record. A
// batch refused for good goes no further, refunded.
func TestBulkBatchFailsOverPerRecipient(t *testing.T) {
	v := newDLTVendors(t, map[string]string{"smsgateway": "161", "msg91": "66a1b2c3d4e5f6a7b8c9d0e1"}, false)
	v.bulk.FailNext(smsgatewaytest.LowBalance)
	numbers := []string{"9876543210", "9876543211", "9876543212"}
	bulk := &sms.BulkRequest{Message: sms.Request{Account: "acme", Route: sms.RouteDLT, SenderID: "ACMECO",
		DLTTemplateID: dltTemplate, Message: dltText}, To: numbers}
	r, err := v.n.Send(context.Background(), bulk)
	if err != nil {
		t.Fatalf("Send = %+v, %v", r, err)
	}
	if v.bulk.Requests() != 1 || len(v.bulk.Sent()) != 0 {
		t.Fatalf("the bulk vendor: %d requests, %d sent; want one refused batch", v.bulk.Requests(), len(v.bulk.Sent()))
	}
	sent := v.msg91.Sent()
	if len(sent) != len(numbers) {
		t.Fatalf("MSG91 took %d requests, want one per recipient", len(sent))
	}
	for _, s := range sent {
		if s.TemplateID != "66a1b2c3d4e5f6a7b8c9d0e1" || len(s.Recipients) != 1 {
			t.Fatalf("MSG91 got %+v", s)
		}
	}
	for i, leg := range r.Legs {
		m, err := v.ledger.Message(context.Background(), "acme", leg.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if leg.Status != record.StateSent || leg.Provider != "msg91" || leg.Attempts != 2 || m.Provider != "msg91" || len(m.Tried) != 2 ||
			m.Tried[0].Provider != "smsgateway" || m.Tried[0].Outcome != record.StateFailed || m.Tried[1].Provider != "msg91" {
			t.Fatalf("leg %d: %+v; record provider %s, tried %+v", i, leg, m.Provider, m.Tried)
		}
	}
	if got := v.balance(t); got != opening-int64(len(numbers))*18 {
		t.Fatalf("balance %d, want each recipient charged once", got)
	}

	v = newDLTVendors(t, map[string]string{"smsgateway": "161", "msg91": "66a1b2c3d4e5f6a7b8c9d0e1"}, false)
	v.bulk.FailNext(smsgatewaytest.InvalidTemplate)
	r, err = v.n.Send(context.Background(), bulk)
	if notify.CodeOf(err) == "" || notify.IsRetryable(err) || v.msg91.Requests() != 0 || v.balance(t) != opening {
		t.Fatalf("a refusal for good: %+v, %v; MSG91 called %d times, balance %d", r, err, v.msg91.Requests(), v.balance(t))
	}
}
