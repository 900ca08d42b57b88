package chat_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// accounts is a minimal store.Accounts for these tests.
type accounts struct {
	mu sync.Mutex
	m  map[string]*notify.Account
}

func (a *accounts) Account(ctx context.Context, id string) (*notify.Account, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if acct, ok := a.m[id]; ok {
		return acct, nil
	}
	return nil, notify.Errorf(notify.CodeNotFound, "no account %q", id)
}

func (a *accounts) AccountByKey(ctx context.Context, key string) (*notify.Account, error) {
	return nil, notify.Errorf(notify.CodeUnauthenticated, "no keys here")
}

// stack is a Notifier with the SMS and chat channels over capture
// providers, a memstore ledger over its wallet and the stock INR prices.
type stack struct {
	n                 *notify.Notifier
	wallet            *memstore.Wallet
	smsP, cloudP, qrP *memprovider.Provider
	opening           int64
	primary           chat.Gateway
}

func newStack(t testing.TB, primary chat.Gateway, opts ...notify.Option) *stack {
	t.Helper()
	s := &stack{
		wallet: memstore.NewWallet(), smsP: memprovider.New("sms-mem"),
		cloudP: memprovider.New("cloud-mem"), qrP: memprovider.New("qr-mem"),
		opening: 1 << 40, primary: primary,
	}
	acct := account(primary)
	if err := s.wallet.Open(acct.ID, notify.Money{Minor: s.opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	smsCh, err := sms.New(sms.Config{Provider: s.smsP})
	if err != nil {
		t.Fatal(err)
	}
	chatCh, err := chat.New(chat.Config{Cloud: s.cloudP, QR: s.qrP, Resolver: testDNS(), CloudOTPTemplate: "otp_code"})
	if err != nil {
		t.Fatal(err)
	}
	all := append([]notify.Option{
		notify.WithChannel(smsCh), notify.WithChannel(chatCh),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
	}, opts...)
	s.n, err = notify.New(&accounts{m: map[string]*notify.Account{acct.ID: acct}}, memstore.NewLedger(s.wallet), all...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ledger returns the account's debits and credits by ref.
func (s *stack) ledger(t *testing.T) (debits, credits map[string]int64, balance int64) {
	t.Helper()
	entries, bal, err := s.wallet.Ledger("acme")
	if err != nil {
		t.Fatal(err)
	}
	debits, credits = map[string]int64{}, map[string]int64{}
	for _, e := range entries {
		if e.Kind == memstore.Debit {
			debits[e.Ref] += e.Amount.Minor
		} else {
			credits[e.Ref] += e.Amount.Minor
		}
	}
	return debits, credits, bal.Minor
}

func otpReq() *otp.Request {
	return &otp.Request{Account: "acme", To: "9876543210", OTP: "482915", BrandName: "ShopX", Action: "login"}
}

// Stock prices (paise): SMS otp route 20 per segment; chat otp 35 cloud, 10 QR.
const (
	smsOTPPrice   = 20
	cloudOTPPrice = 35
	qrOTPPrice    = 10
)

func TestDualOTPBothLegs(t *testing.T) {
	s := newStack(t, chat.GatewayCloud)
	r, err := s.n.Send(context.Background(), otpReq())
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != otp.Kind || r.Status != record.StateSent || len(r.Legs) != 2 {
		t.Fatalf("receipt %+v", r)
	}
	smsLeg, chatLeg := r.Legs[0], r.Legs[1]
	if smsLeg.Kind != sms.Kind || smsLeg.Status != record.StateSent || chatLeg.Kind != chat.Kind ||
		chatLeg.Status != record.StateSent || chatLeg.Gateway != string(chat.GatewayCloud) {
		t.Fatalf("legs %+v %+v", smsLeg, chatLeg)
	}
	if r.Cost.Minor != smsOTPPrice+cloudOTPPrice || r.Balance.Minor != s.opening-smsOTPPrice-cloudOTPPrice {
		t.Fatalf("cost %v balance %v", r.Cost, r.Balance)
	}
	// brand_name reaches both messages.
	if txt := sms.MessageOf(s.smsP.Sent()[0]).Text; !strings.Contains(txt, "ShopX") {
		t.Errorf("SMS text %q lacks the brand", txt)
	}
	if txt := chat.MessageOf(s.cloudP.Sent()[0]).Text; txt != "*482915* is your ShopX login code. For your security, do not share this code with anyone." {
		t.Errorf("chat text %q", txt)
	}
}

// TestDualOTPOneLegFails: the failed leg is charged and refunded once, the
// delivered leg is charged once, and the receipt shows both.
func TestDualOTPOneLegFails(t *testing.T) {
	for _, tt := range []struct {
		name      string
		fail      func(s *stack)
		failedLeg int
		cost      int64
	}{
		{"chat leg rejected", func(s *stack) { s.cloudP.FailNext(1, notify.CodeRejected) }, 1, smsOTPPrice},
		{"sms leg rejected", func(s *stack) { s.smsP.FailNext(1, notify.CodeRejected) }, 0, cloudOTPPrice},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t, chat.GatewayCloud)
			tt.fail(s)
			r, err := s.n.Send(context.Background(), otpReq())
			if err != nil {
				t.Fatalf("SendOTP: %v (one leg was delivered)", err)
			}
			if r.Status != record.StateSent || len(r.Legs) != 2 || r.Cost.Minor != tt.cost {
				t.Fatalf("receipt status %s cost %v legs %d", r.Status, r.Cost, len(r.Legs))
			}
			failed, ok := r.Legs[tt.failedLeg], r.Legs[1-tt.failedLeg]
			if failed.Status != record.StateFailed || failed.ErrorCode != notify.CodeRejected || failed.Cost.Minor != 0 ||
				ok.Status != record.StateSent || ok.Cost.Minor != tt.cost {
				t.Fatalf("legs: failed %+v, delivered %+v", failed, ok)
			}
			debits, credits, bal := s.ledger(t)
			if len(debits) != 2 || debits[failed.MessageID] == 0 || debits[ok.MessageID] != tt.cost {
				t.Fatalf("debits %v: want one per leg", debits)
			}
			if len(credits) != 1 || credits["refund:"+failed.MessageID] != debits[failed.MessageID] {
				t.Fatalf("credits %v: want exactly one refund of the failed leg", credits)
			}
			if bal != s.opening-tt.cost || r.Balance.Minor != bal {
				t.Fatalf("balance %d (receipt %v), want %d", bal, r.Balance, s.opening-tt.cost)
			}
		})
	}
}

// TestDualOTPChatFailover: under auto the chat leg falls over to the QR
// gateway, and the receipt says so.
func TestDualOTPChatFailover(t *testing.T) {
	s := newStack(t, chat.GatewayCloud)
	s.cloudP.FailNext(1, notify.CodeUnavailable)
	r, err := s.n.Send(context.Background(), otpReq())
	if err != nil {
		t.Fatal(err)
	}
	chatLeg := r.Legs[1]
	if chatLeg.Status != record.StateSent || chatLeg.Gateway != string(chat.GatewayQR) || chatLeg.Provider != "qr-mem" ||
		!strings.Contains(chatLeg.Note, "the cloud gateway failed first") {
		t.Fatalf("chat leg %+v", chatLeg)
	}
	// Charged the cloud price first, then the difference to the cheaper
	// QR price was credited back.
	if chatLeg.Cost.Minor != qrOTPPrice || s.qrP.Len() != 1 || r.Balance.Minor != s.opening-smsOTPPrice-qrOTPPrice {
		t.Fatalf("chat leg cost %v, qr sent %d", chatLeg.Cost, s.qrP.Len())
	}
}

// TestBadInputChargesNothing: a refused request moves no money.
func TestBadInputChargesNothing(t *testing.T) {
	s := newStack(t, chat.GatewayCloud)
	for _, req := range []*chat.Request{
		{Account: "acme", To: "9876543210", MediaURL: "https://loop.example.com/a.pdf"},
		{Account: "acme", To: "9876543210", Message: "hi", Gateway: "sms"},
		{Account: "acme", To: "9876543210"},
	} {
		r, err := s.n.Send(context.Background(), req)
		if notify.CodeOf(err) != notify.CodeInvalidArgument || r != nil {
			t.Fatalf("SendChat = %v, %v; want InvalidArgument and no receipt", r, err)
		}
	}
	if debits, _, bal := s.ledger(t); len(debits) != 0 || bal != s.opening {
		t.Fatalf("charged for bad input: %v, balance %d", debits, bal)
	}
}

// TestSendChatPrices: the price follows the gateway and the type.
func TestSendChatPrices(t *testing.T) {
	s := newStack(t, chat.GatewayQR)
	for _, tt := range []struct {
		req  *chat.Request
		cost int64
	}{
		{&chat.Request{Account: "acme", To: "9876543210", Message: "hi"}, 10},
		{&chat.Request{Account: "acme", To: "9876543210", Message: "hi", Type: chat.TypePromotional}, 20},
		{&chat.Request{Account: "acme", To: "9876543210", Message: "hi", Gateway: chat.GatewayCloud}, 35},
		{&chat.Request{Account: "acme", To: "9876543210", Message: "hi", Gateway: chat.GatewayCloud, Type: chat.TypePromotional}, 90},
	} {
		r, err := s.n.Send(context.Background(), tt.req)
		if err != nil || r.Cost.Minor != tt.cost {
			t.Errorf("%s/%s: cost %v, err %v; want %d", tt.req.Gateway, tt.req.Type, r.Cost, err, tt.cost)
		}
	}
}
