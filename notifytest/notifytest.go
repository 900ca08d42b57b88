package notifytest

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

// DefaultBalance is the opening balance of the kit's account: ₹1,000.00 in
// paise.
const DefaultBalance int64 = 100000

// The kit's account and its API key.
const (
	AccountID = "test"
	APIKey    = "test-api-key"
)

// CloudOTPTemplate is the authentication template the kit's chat channel
// sends one-time codes through on the cloud gateway (chat
// Config.CloudOTPTemplate): an OTP captured by Kit.Cloud carries it, with
// the code in its body and its button.
const CloudOTPTemplate = "otp_code"

// Kit is a Notifier wired for tests, with every part exposed. Create it with
// New; it needs no cleanup.
//
// Its SMS channel keeps TRAI's hours (sendwindow.TRAI): a promotional SMS
// to India outside 09:00-21:00 IST is scheduled on Queue for the opening,
// not sent, so a test that sends one fixes the time with WithClock.
type Kit struct {
	Notifier *notify.Notifier
	// Account is the funded account requests should name (AccountID).
	Account  *notify.Account
	Accounts *memstore.Accounts
	// Wallet holds the account's money; its Ledger method lists the
	// account's debits and credits.
	Wallet *memstore.Wallet
	// Ledger is the Notifier's store.Ledger: it keeps every message's
	// record (Notifier.Message and Kit.Message read it) and charges and
	// refunds Wallet with them.
	Ledger    *memstore.Ledger
	Templates *memstore.Templates
	// Renderer renders the stock templates and the account's custom ones.
	Renderer *template.Renderer
	// SMS, Email, Cloud and QR capture what the channels send; Cloud and QR
	// are the two chat gateways.
	SMS, Email, Cloud, QR *memprovider.Provider
	// Queue holds the sends of Queued (Enqueue, SendAt and
	// SendWithFallback), and the sends a send window holds, on the kit's
	// clock (WithClock); RunQueue runs the due ones.
	Queue *memqueue.Queue
	// Queued is the Notifier's queue side (queued.New), the worker
	// RunQueue runs.
	Queued *queued.Sender
}

type config struct {
	balance  int64
	account  notify.Account
	prices   notify.Pricer
	resolver chat.Resolver
	now      func() time.Time
	extra    []notify.Option
	numbers  phone.Plan
	currency *record.Currency // WithCurrency; nil: the account's
	listed   notify.Pricer    // WithCurrency's prices
	err      error            // an option's mistake, which Start returns
}

// Option changes what New builds.
type Option func(*config)

// WithBalance sets the account's opening balance in minor units (paise).
// Default DefaultBalance.
func WithBalance(minor int64) Option { return func(c *config) { c.balance = minor } }

// WithAccount replaces the kit's account; its ID becomes the one to use.
// Default: ID AccountID, name "Test Co", SMS sender ID "TESTCO", INR, cloud
// primary gateway.
func WithAccount(acct notify.Account) Option { return func(c *config) { c.account = acct } }

// WithPrices sets the price list. Default wallet.DefaultINR().
func WithPrices(p notify.Pricer) Option { return func(c *config) { c.prices = p } }

// WithNumbers sets the numbering plan of the SMS and chat channels (their
// Config.Numbers). Default: the registered plan (phone.RegisterPlan),
// phone/world's when the test links it, so that a test importing
// phone/world sends to every country.
func WithNumbers(p phone.Plan) Option { return func(c *config) { c.numbers = p } }

// WithRegion sets the account's region (notify.Account.Region: the
// country of its numbers written without a country code) and its allow
// list (Countries: the region alone when none is given, phone.AnyCountry
// for every country). Apply it after WithAccount, which replaces the
// whole account. Default: India, India only.
func WithRegion(region string, countries ...string) Option {
	return func(c *config) { c.account.Region, c.account.Countries = region, countries }
}

// WithCurrency makes the account's currency the one of an ISO 4217 code
// (wallet.CurrencyOf: "USD", "JPY") and prices its messages by the list
// prices gives (wallet.ParsePriceList: "sms=0.01, email=0.01"); the
// opening balance (WithBalance, DefaultBalance) is in its minor units. It
// wins over the currency of WithAccount's account and over WithPrices,
// whatever their order. A bad code or list is Start's error (New fails
// the test). Default: INR, priced by wallet.DefaultINR().
func WithCurrency(code, prices string) Option {
	return func(c *config) {
		cur, err := wallet.CurrencyOf(code)
		if err != nil {
			c.err = err
			return
		}
		list, err := wallet.ParsePriceList(prices, cur)
		if err != nil {
			c.err = err
			return
		}
		c.currency, c.listed = &cur, list
	}
}

// WithResolver sets how media URL hosts resolve. Default: every name
// resolves to one public address, without a lookup.
func WithResolver(r chat.Resolver) Option { return func(c *config) { c.resolver = r } }

// WithClock sets the clock of the Notifier and of its queue, so that a
// test moves time to see a scheduled send go (Kit.RunQueue). Default
// time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithNotifierOptions adds options to notify.New, after the kit's own (so
// they win): observers, retry policy, another channel, ...
func WithNotifierOptions(opts ...notify.Option) Option {
	return func(c *config) { c.extra = append(c.extra, opts...) }
}

// publicResolver answers every name with one public address, so tests
// need no DNS and media URLs pass the public-address check.
type publicResolver struct{}

func (publicResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.AddrFrom4([4]byte{93, 184, 215, 14})}, nil
}

// defaultAccount is the Kit's account unless WithAccount replaces it:
// AccountID, "Test Co", INR, sending SMS as TESTCO and chat through the
// cloud gateway first.
func defaultAccount() notify.Account {
	a := notify.Account{ID: AccountID, Name: "Test Co", Currency: record.INR()}
	_ = sms.SetSettings(&a, sms.Settings{SenderID: "TESTCO"})
	_ = chat.SetSettings(&a, chat.Settings{PrimaryGateway: chat.GatewayCloud})
	return a
}

// New builds a Kit. It fails t (t.Fatal) if the wiring fails, which only a
// bad option can cause.
func New(t testing.TB, opts ...Option) *Kit {
	t.Helper()
	k, err := Start(opts...)
	if err != nil {
		t.Fatalf("notifytest: %v", err)
	}
	return k
}

// Start builds a Kit outside a test: a Notifier over in-memory stores and
// providers, with one funded account (AccountID), which a first program
// or an example sends through as it would through one wired for real.
// Its error is the first mistake of an option; nothing else can fail.
func Start(opts ...Option) (*Kit, error) {
	c := config{
		balance:  DefaultBalance,
		account:  defaultAccount(),
		prices:   wallet.DefaultINR(),
		resolver: publicResolver{},
		now:      time.Now,
	}
	for _, o := range opts {
		o(&c)
		if c.err != nil {
			return nil, c.err
		}
	}
	if c.currency != nil {
		c.account.Currency, c.prices = *c.currency, c.listed
	}
	k := &Kit{
		Accounts:  memstore.NewAccounts(),
		Wallet:    memstore.NewWallet(),
		Templates: memstore.NewTemplates(),
		SMS:       memprovider.New("sms"),
		Email:     memprovider.New("email"),
		Cloud:     memprovider.New("cloudchat"),
		QR:        memprovider.New("qrchat"),
	}
	acct := c.account
	k.Account = &acct
	if err := k.Accounts.Add(k.Account, APIKey); err != nil {
		return nil, err
	}
	if err := k.Wallet.Open(acct.ID, notify.Money{Minor: c.balance, Currency: acct.Currency}); err != nil {
		return nil, err
	}
	k.Ledger = memstore.NewLedger(k.Wallet)
	var err error
	k.Queue, err = memqueue.New(memqueue.Config{Ledger: k.Ledger, Now: c.now})
	if err != nil {
		return nil, err
	}
	k.Renderer, err = template.New(k.Templates)
	if err != nil {
		return nil, err
	}
	smsCh, err := sms.New(sms.Config{Provider: k.SMS, Renderer: k.Renderer, Numbers: c.numbers})
	if err != nil {
		return nil, err
	}
	chatCh, err := chat.New(chat.Config{Cloud: k.Cloud, QR: k.QR, Renderer: k.Renderer, Resolver: c.resolver,
		CloudOTPTemplate: CloudOTPTemplate, Numbers: c.numbers})
	if err != nil {
		return nil, err
	}
	emailCh, err := email.New(email.Config{Provider: k.Email, Renderer: k.Renderer})
	if err != nil {
		return nil, err
	}
	base := []notify.Option{
		notify.WithChannel(smsCh),
		notify.WithChannel(chatCh),
		notify.WithChannel(emailCh),
		notify.WithPrices(c.prices),
		notify.WithIdempotency(memstore.NewIdempotency(time.Hour)),
		notify.WithQueue(k.Queue),
		notify.WithClock(c.now),
		// Fast retries: tests should not wait for production backoff.
		notify.WithRetry(notify.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}),
	}
	k.Notifier, err = notify.New(k.Accounts, k.Ledger, append(base, c.extra...)...)
	if err != nil {
		return nil, err
	}
	k.Queued = queued.New(k.Notifier)
	return k, nil
}

// RunQueue runs every send due on the kit's clock (Kit.Queue), one at a
// time in the caller's goroutine, as a worker would, and returns how many
// jobs ran.
func (k *Kit) RunQueue(t testing.TB) int {
	t.Helper()
	return k.Queue.RunDue(context.Background(), k.Queued)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("notifytest: %v", err)
	}
}

// Balance returns the account's balance in minor units.
func (k *Kit) Balance(t testing.TB) int64 {
	t.Helper()
	b, err := k.Wallet.Balance(context.Background(), k.Account.ID)
	must(t, err)
	return b.Available.Minor
}

// AssertBalance fails t unless the account's balance is want minor units.
func (k *Kit) AssertBalance(t testing.TB, want int64) {
	t.Helper()
	if got := k.Balance(t); got != want {
		t.Errorf("notifytest: balance is %d minor units, want %d (%+d)", got, want, got-want)
	}
}

// Message returns the record of the kit's account's message id (a
// Receipt's MessageID, or a leg's): its state and history, cost, provider
// and error. It fails t if there is none.
func (k *Kit) Message(t testing.TB, id string) *record.Message {
	t.Helper()
	m, err := k.Notifier.Message(context.Background(), k.Account.ID, id)
	must(t, err)
	return m
}

// SentSMS returns the SMS envelopes captured so far, oldest first.
func (k *Kit) SentSMS() []*notify.Envelope { return k.SMS.Sent() }

// SentEmail returns the e-mail envelopes captured so far.
func (k *Kit) SentEmail() []*notify.Envelope { return k.Email.Sent() }

// SentChat returns the chat envelopes captured so far, cloud gateway's
// first, then the QR gateway's.
func (k *Kit) SentChat() []*notify.Envelope { return append(k.Cloud.Sent(), k.QR.Sent()...) }

// LastSMS returns the last SMS sent, failing t if there is none.
func (k *Kit) LastSMS(t testing.TB) *notify.Envelope { t.Helper(); return last(t, "SMS", k.SentSMS()) }

// LastEmail returns the last e-mail sent, failing t if there is none.
func (k *Kit) LastEmail(t testing.TB) *notify.Envelope {
	t.Helper()
	return last(t, "e-mail", k.SentEmail())
}

// LastChat returns the last chat message sent through either gateway,
// failing t if there is none.
func (k *Kit) LastChat(t testing.TB) *notify.Envelope {
	t.Helper()
	return last(t, "chat message", k.SentChat())
}

// AssertSent fails t unless exactly n messages of kind were sent.
func (k *Kit) AssertSent(t testing.TB, kind notify.Kind, n int) {
	t.Helper()
	var got int
	switch kind {
	case sms.Kind:
		got = k.SMS.Len()
	case email.Kind:
		got = k.Email.Len()
	case chat.Kind:
		got = k.Cloud.Len() + k.QR.Len()
	default:
		t.Fatalf("notifytest: AssertSent of unknown kind %q", kind)
	}
	if got != n {
		t.Errorf("notifytest: %d %s messages sent, want %d", got, kind, n)
	}
}

func last(t testing.TB, what string, sent []*notify.Envelope) *notify.Envelope {
	t.Helper()
	if len(sent) == 0 {
		t.Fatalf("notifytest: no %s was sent", what)
	}
	return sent[len(sent)-1]
}

// Summary describes a send in one line, for a first program or a test's
// log, from what Notifier.Send returned: the receipt's kind, recipient,
// status, provider and error code, its cost and the balance after when it
// was metered, then the error, if any ("sms to +14155550100: sent via
// sms, cost 0.01 USD, balance 4.99 USD"). It shows no content and no
// code.
func Summary(r *notify.Receipt, err error) string {
	var b strings.Builder
	if r != nil {
		fmt.Fprintf(&b, "%s to %s: %s", r.Kind, r.To, r.Status)
		if via := cmp.Or(r.Provider, r.Gateway); via != "" {
			b.WriteString(" via " + via)
		}
		if r.ErrorCode != "" {
			b.WriteString(" (" + string(r.ErrorCode) + ")")
		}
		if r.Metered {
			fmt.Fprintf(&b, ", cost %s, balance %s", r.Cost, r.Balance)
		}
	}
	if err != nil {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}
