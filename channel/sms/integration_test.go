package sms_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/smsgateway/smsgatewaytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

// The whole path of an SMS: Notifier -> sms.Channel -> smsgateway ->
// the fake vendor, with a wallet and the stock price list (per segment:
// sms 25, otp 20, dlt 18 paise).

const opening = 100000 // paise

type stack struct {
	n      *notify.Notifier
	vendor *smsgatewaytest.Server
	wallet *memstore.Wallet
}

// balance returns acme's balance in paise.
func (s *stack) balance(t *testing.T) int64 {
	t.Helper()
	b, err := s.wallet.Balance(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

func newStack(t *testing.T) *stack {
	t.Helper()
	vendor := smsgatewaytest.NewServer(smsgatewaytest.Config{
		APIKey: "vendor-key-77f3",
		Templates: []smsgatewaytest.Template{
			{ID: otpTplID, EntityID: entityID, Sender: "ACMECO", Content: otpTemplate},
			{ID: orderTplID, EntityID: entityID, Sender: "ACMECO", Content: "Dear {#var#}, your order {#var#} has shipped. - ACMECO"},
		},
	})
	t.Cleanup(vendor.Close)
	p, err := smsgateway.New(smsgateway.Config{APIKey: "vendor-key-77f3", BaseURL: vendor.URL, HTTPClient: vendor.Client()})
	if err != nil {
		t.Fatal(err)
	}
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := sms.New(sms.Config{Provider: p, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	n, w := acmeNotifier(t, ch, opening, notify.WithRetry(notify.RetryPolicy{MaxAttempts: 3, BaseDelay: 1, MaxDelay: 1}))
	return &stack{n: n, vendor: vendor, wallet: w}
}

// acmeNotifier is a Notifier of ch, and opts, at the default INR prices
// for acme (testAccount), whose wallet opens with minor paise.
func acmeNotifier(t *testing.T, ch notify.Channel, minor int64, opts ...notify.Option) (*notify.Notifier, *memstore.Wallet) {
	t.Helper()
	w := memstore.NewWallet()
	if err := w.Open("acme", notify.Money{Minor: minor, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(testAccounts{testAccount()}, memstore.NewLedger(w),
		append([]notify.Option{notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return n, w
}

func TestSendEveryRoute(t *testing.T) {
	s := newStack(t)
	tests := []struct {
		name  string
		req   sms.Request
		want  smsgatewaytest.Sent // RequestID, Numbers and Cost are checked apart
		units int
		price int64 // per segment
	}{
		{"sms", sms.Request{To: "+91 98765 43210", Message: "Your parcel is out for delivery."},
			smsgatewaytest.Sent{Route: "q", Message: "Your parcel is out for delivery.", Language: "english", Parts: 1}, 1, 25},
		{"sms, Hindi over two segments", sms.Request{To: "9876543210", Message: strings.Repeat("नमस्ते ", 12)},
			smsgatewaytest.Sent{Route: "q", Message: strings.Repeat("नमस्ते ", 12), Language: "unicode", Parts: 2}, 2, 25},
		{"sms from a stock template", sms.Request{To: "9876543210", TemplateSlug: "order-confirmed",
			Variables: record.Vars{"NAME": "Asha", "ORDER_ID": "A-1042", "AMOUNT": "499.00", "DELIVERY_DATE": "12/06/2030",
				"LINK": "https://shop.example.in/o/A-1042"}},
			smsgatewaytest.Sent{Route: "q", Language: "english", Parts: 1}, 1, 25},
		{"otp", sms.Request{To: "9876543210", Message: "482913", Route: sms.RouteOTP, Brand: "ShopKart"},
			smsgatewaytest.Sent{Route: "otp", VariablesValues: "482913", Parts: 1}, 1, 20},
		{"dlt, entity from the account", sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: otpTplID,
			Message: "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO"},
			smsgatewaytest.Sent{Route: "dlt_manual", Message: "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO",
				SenderID: "ACMECO", TemplateID: otpTplID, EntityID: entityID, Parts: 1}, 1, 18},
		{"dlt, both IDs", sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: orderTplID, DLTEntityID: entityID,
			Message: "Dear Asha, your order A-1042 has shipped. - ACMECO", Domain: "shop.example.in"},
			smsgatewaytest.Sent{Route: "dlt_manual", Message: "Dear Asha, your order A-1042 has shipped. - ACMECO",
				SenderID: "ACMECO", TemplateID: orderTplID, EntityID: entityID, Parts: 1}, 1, 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.balance(t)
			sentBefore := len(s.vendor.Sent())
			req := tt.req
			req.Account = "acme"
			r, err := s.n.Send(t.Context(), &req)
			if err != nil {
				t.Fatalf("SendSMS: %v", err)
			}
			cost := tt.price * int64(tt.units)
			if r.Status != record.StateSent || r.Units != tt.units || r.Cost.Minor != cost || r.Provider != smsgateway.DefaultName ||
				r.To != "+919876543210" || r.Domain != tt.req.Domain || r.Attempts != 1 {
				t.Fatalf("receipt = %+v", r)
			}
			if got := s.balance(t); got != before-cost || r.Balance.Minor != got {
				t.Fatalf("wallet %d -> %d (receipt says %d), want a charge of %d", before, got, r.Balance.Minor, cost)
			}
			sent := s.vendor.Sent()
			if len(sent) != sentBefore+1 {
				t.Fatalf("vendor got %d messages, want 1", len(sent)-sentBefore)
			}
			got := sent[len(sent)-1]
			if got.RequestID != r.ProviderMessageID || len(got.Numbers) != 1 || got.Numbers[0] != "9876543210" {
				t.Fatalf("vendor got %+v for receipt %s", got, r.ProviderMessageID)
			}
			if tt.want.Message == "" && got.Route == "q" { // rendered: check it is the template's text
				if !strings.Contains(got.Message, "A-1042") {
					t.Fatalf("rendered text %q", got.Message)
				}
				tt.want.Message = got.Message
			}
			got.RequestID, got.Numbers, got.Cost = "", nil, 0
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("vendor got %+v\nwant          %+v", got, tt.want)
			}
		})
	}
}

// TestSendBadInputChargesNothing runs every bad input of the SMS issue
// through the Notifier: each is InvalidArgument naming its field, charges
// nothing and reaches no vendor.
func TestSendBadInputChargesNothing(t *testing.T) {
	s := newStack(t)
	good := "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO"
	tests := []struct {
		name  string
		req   sms.Request
		field string
	}{
		{"9-digit number", sms.Request{To: "987654321", Message: "hi"}, "to"},
		{"11-digit number", sms.Request{To: "98765432101", Message: "hi"}, "to"},
		{"letters in the number", sms.Request{To: "98765abc10", Message: "hi"}, "to"},
		{"number starting 0-5", sms.Request{To: "4876543210", Message: "hi"}, "to"},
		{"empty message", sms.Request{To: "9876543210"}, "message"},
		{"unknown route", sms.Request{To: "9876543210", Message: "hi", Route: "transactional"}, "route"},
		{"non-numeric OTP", sms.Request{To: "9876543210", Message: "abcd", Route: sms.RouteOTP}, "message"},
		{"3-digit OTP", sms.Request{To: "9876543210", Message: "123", Route: sms.RouteOTP}, "message"},
		{"dlt without IDs", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT}, "dlt_template_id"},
		{"7-character DLT header", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT,
			DLTTemplateID: otpTplID, SenderID: "ACMECOS"}, "sender_id"},
		{"text off the DLT template", sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: otpTplID,
			Message: "Your OTP for login is 482913. Valid for 10 minutes. - ACMECO"}, "message"},
		{"more than 10 segments", sms.Request{To: "9876543210", Message: strings.Repeat("x", 1531)}, "message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			req.Account = "acme"
			r, err := s.n.Send(t.Context(), &req)
			var e *notify.Error
			if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
				t.Fatalf("SendSMS = %+v, %v; want invalid_argument", r, err)
			}
			if len(e.Fields) != 1 || e.Fields[0].Field != tt.field {
				t.Fatalf("fields = %+v, want only %s", e.Fields, tt.field)
			}
			if r != nil {
				t.Fatalf("a receipt for bad input: %+v", r)
			}
		})
	}
	if got := s.balance(t); got != opening {
		t.Fatalf("wallet %d, want %d untouched", got, opening)
	}
	if n := s.vendor.Requests(); n != 0 {
		t.Fatalf("%d requests reached the vendor", n)
	}
}

func TestSendVendorFailures(t *testing.T) {
	s := newStack(t)
	send := func() (*notify.Receipt, error) {
		return s.n.Send(t.Context(), &sms.Request{Account: "acme", To: "9876543210", Message: "Hello"})
	}

	// A permanent refusal: not retried, refunded.
	s.vendor.FailNext(smsgatewaytest.InvalidNumbers)
	r, err := send()
	if notify.CodeOf(err) != notify.CodeRejected || r == nil || r.Status != record.StateFailed || r.Attempts != 1 || r.Cost.Minor != 0 {
		t.Fatalf("rejected: %+v, %v", r, err)
	}
	if got := s.balance(t); got != opening {
		t.Fatalf("wallet %d after a refused send, want %d", got, opening)
	}

	// The vendor's wallet is empty once: unavailable, retried, charged once.
	s.vendor.FailNext(smsgatewaytest.LowBalance)
	r, err = send()
	if err != nil || r.Attempts != 2 || r.Cost.Minor != 25 {
		t.Fatalf("retried send: %+v, %v", r, err)
	}
	if got := s.balance(t); got != opening-25 {
		t.Fatalf("wallet %d after a retried send, want %d", got, opening-25)
	}

	// The answer is lost after the vendor took the message: no retry (no
	// duplicate SMS), and the charge stands: the outcome is unknown.
	accepted := s.vendor.Accepted()
	s.vendor.BreakNext()
	r, err = send()
	if notify.CodeOf(err) != notify.CodeOutcomeUnknown || r.Status != record.StateUnknown || r.Attempts != 1 ||
		s.vendor.Accepted() != accepted+1 {
		t.Fatalf("lost answer: %+v, %v; vendor accepted %d", r, err, s.vendor.Accepted()-accepted)
	}
	if got := s.balance(t); got != opening-50 {
		t.Fatalf("wallet %d after a lost answer, want %d (charge kept)", got, opening-50)
	}
}

// testAccounts is a store.Accounts of fixed accounts.
type testAccounts []*notify.Account

func (a testAccounts) Account(_ context.Context, id string) (*notify.Account, error) {
	for _, acct := range a {
		if acct.ID == id {
			return acct, nil
		}
	}
	return nil, notify.Errorf(notify.CodeNotFound, "no account %q", id)
}

func (a testAccounts) AccountByKey(context.Context, string) (*notify.Account, error) {
	return nil, notify.Errorf(notify.CodeUnauthenticated, "no keys")
}
