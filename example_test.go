package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// Wiring a Notifier by hand: an account store, a ledger over a wallet
// (money and records), one channel over one provider, and prices.
func Example() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()}) // ₹100.00

	provider := memprovider.New("mem") // a real one: smsgateway.New(...)
	smsCh, _ := sms.New(sms.Config{Provider: provider})
	n, err := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()))
	if err != nil {
		fmt.Println(err)
		return
	}

	r, err := n.Send(context.Background(), &sms.Request{
		Account: "acme", To: "+91 98765 43210", Message: "Your order #4411 has shipped.",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Status, r.To, r.Units, "segment, cost", r.Cost, "balance", r.Balance)
	// Output: sent +919876543210 1 segment, cost 0.25 INR balance 99.75 INR
}

// Every error is an *Error; CodeOf reads its code, and an InvalidArgument
// names every bad field.
func ExampleCodeOf() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, _ := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(smsCh))

	_, err := n.Send(context.Background(), &sms.Request{Account: "acme", To: "12345", Route: "fax"})
	fmt.Println(notify.CodeOf(err))
	var e *notify.Error
	if errors.As(err, &e) {
		for _, f := range e.Fields {
			fmt.Printf("%s: %s\n", f.Field, f.Message)
		}
	}
	// Output:
	// invalid_argument
	// to: must be 10 digits, found 5
	// route: must be sms, otp or dlt, not "fax"
	// message: is required
}

// Template variables decode from an object, a positional array or a list
// of name/value pairs.
func ExampleVars() {
	for _, in := range []string{
		`{"NAME": "Asha", "OTP": "482913"}`,
		`["Asha", "482913"]`,
		`[{"name": "NAME", "value": "Asha"}]`,
		`"Asha"`,
	} {
		var v record.Vars
		err := json.Unmarshal([]byte(in), &v)
		fmt.Println(len(v), v["NAME"], v["1"], err)
	}
	// Output:
	// 2 Asha  <nil>
	// 2  Asha <nil>
	// 1 Asha  <nil>
	// 0   variables: must be an object (name to value) or an array, not a string
}

// printer is an Observer that prints each event.
type printer struct{}

func (printer) Observe(_ context.Context, e notify.Event) {
	fmt.Println(e.Type, e.Envelope.Kind, e.Envelope.To)
}

// An observer sees every message accepted, sent or failed.
func ExampleWithObserver() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, _ := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(smsCh),
		notify.WithObserver(printer{}))
	_, _ = n.Send(context.Background(), &sms.Request{Account: "acme", To: "9876543210", Message: "hi"})
	// Output:
	// pending sms +919876543210
	// sent sms +919876543210
}

// A provider says what the vendor may have done by how it fails: a code
// of certain refusal, or anything else for "it may have the message".
// The Notifier retries, refunds or keeps the charge by OutcomeOf and
// IsRetryable.
func ExampleOutcomeOf() {
	for _, err := range []error{
		nil, // accepted
		notify.Errorf(notify.CodeUnavailable, "HTTP 503 with the vendor's 'try later' body"),
		notify.Errorf(notify.CodeRejected, "invalid number"),
		notify.Errorf(notify.CodeOutcomeUnknown, "HTTP 502 from a proxy"),
		errors.New("read: connection reset by peer"), // after the request was written
		context.DeadlineExceeded,
	} {
		fmt.Printf("%-13s retryable=%v\n", notify.OutcomeOf(err), notify.IsRetryable(err))
	}
	// Output:
	// sent          retryable=false
	// failed        retryable=true
	// failed        retryable=false
	// unknown       retryable=false
	// unknown       retryable=false
	// unknown       retryable=false
}

// A send whose outcome is unknown keeps its charge and is never retried;
// repeating it with the same idempotency key returns the same receipt.
func ExampleNotifier_Send_outcomeUnknown() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	vendor := memprovider.New("mem")
	vendor.FailNext(1, notify.CodeOutcomeUnknown) // the vendor takes it; the answer is lost
	smsCh, _ := sms.New(sms.Config{Provider: vendor})
	n, _ := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(memstore.NewIdempotency(time.Hour)))

	req := &sms.Request{Account: "acme", To: "9876543210", Message: "Your order shipped", IdempotencyKey: "ship-4411"}
	r, err := n.Send(context.Background(), req)
	fmt.Println(notify.CodeOf(err), r.Status, r.Cost)
	again, err := n.Send(context.Background(), req)
	fmt.Println(notify.CodeOf(err), again.MessageID == r.MessageID, vendor.Len())
	// Output:
	// outcome_unknown unknown 0.25 INR
	// outcome_unknown true 1
}

// Every send leaves a durable record in the Ledger, written with its
// charge; Message reads it back.
func ExampleNotifier_Message() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, _ := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()))

	ctx := context.Background()
	r, _ := n.Send(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: "Your order has shipped."})
	m, err := n.Message(ctx, "acme", r.MessageID)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, step := range m.History {
		fmt.Print(step.State, " ")
	}
	fmt.Println("| cost", m.Cost(), "via", m.Provider)
	// Output: pending attempting sent | cost 0.25 INR via mem
}

// Reconcile settles what a crashed process left: here a send whose
// process died while its vendor call was in flight (its record stays
// attempting). Once the record is older than the settle threshold, a
// Notifier over the same stores marks it unknown, keeping its charge.
func ExampleNotifier_Reconcile() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	records := memstore.NewLedger(wal)
	ctx := context.Background()

	// What the dead process left: a record charged and moved to attempting.
	opened := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	_, _ = records.Open(ctx, &record.Message{ID: "m-1", Account: "acme", Kind: sms.Kind, Request: sms.Kind,
		To: "9876543210", Metered: true, Charge: notify.Money{Minor: 25, Currency: record.INR()}, CreatedAt: opened})
	_, _ = records.Move(ctx, "acme", "m-1", store.Update{State: record.StateAttempting, At: opened})

	// The restarted process, three minutes later.
	later := func() time.Time { return opened.Add(3 * time.Minute) }
	n, _ := notify.New(accounts, records, notify.WithPrices(wallet.DefaultINR()),
		notify.WithSettleAfter(2*time.Minute), notify.WithClock(later))
	res, err := n.Reconcile(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := n.Message(ctx, "acme", "m-1")
	b, _ := n.Balance(ctx, "acme")
	fmt.Printf("refunded %d, unknown %d; m-1 is %s, balance %s\n", res.Refunded, res.Unknown, m.State, b.Available)
	// Output: refunded 0, unknown 1; m-1 is unknown, balance 99.75 INR
}

// Report takes a vendor's delivery reports; a webhook receiver such as
// cloudchat.Webhook calls it. Here a chat message the vendor accepted is
// reported failed (outside the 24-hour window): the record says so and
// the charge comes back, once, however often the report is repeated.
func ExampleNotifier_Report() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	chatCh, _ := chat.New(chat.Config{Cloud: memprovider.New("cloudchat"), CloudOTPTemplate: "otp_code"})
	n, _ := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(chatCh), notify.WithPrices(wallet.DefaultINR()))

	ctx := context.Background()
	r, _ := n.Send(ctx, &chat.Request{Account: "acme", To: "9876543210", Message: "Your order has shipped."})
	for range 2 {
		_, _ = n.Report(ctx, &notify.DeliveryReport{Provider: r.Provider, ProviderMessageID: r.ProviderMessageID,
			State: record.StateFailed, VendorCode: "131047", Error: "Re-engagement message"})
	}
	m, _ := n.Message(ctx, "acme", r.MessageID)
	b, _ := n.Balance(ctx, "acme")
	fmt.Println(m.State, m.VendorCode, "refunded:", m.Refunded, "balance:", b.Available)
	// Output: failed 131047 refunded: true balance: 100.00 INR
}

// A bulk request (sms.BulkRequest) sends one text to many numbers, each
// charged and recorded on its own; with provider/smsgateway each batch is
// one vendor call.
func ExampleNotifier_Send_bulk() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEST"}.Map(), Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("sms")})
	n, _ := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()))

	r, err := n.Send(context.Background(), &sms.BulkRequest{
		Message: sms.Request{Account: "acme", Message: "Our sale ends tonight."},
		To:      []string{"+91 98765 43210", "9876543211"},
	})
	if err != nil {
		panic(err)
	}
	for _, leg := range r.Legs {
		fmt.Println(leg.To, leg.Status, leg.Cost)
	}
	fmt.Println("total", r.Cost, "balance", r.Balance)
	// Output:
	// +919876543210 sent 0.25 INR
	// +919876543211 sent 0.25 INR
	// total 0.50 INR balance 99.50 INR
}

// Quote prices a request as Send would, without charging or sending: a
// 200-character text is two SMS segments.
func ExampleNotifier_Quote() {
	accounts := memstore.NewAccounts()
	_ = accounts.Add(&notify.Account{ID: "acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()})
	wal := memstore.NewWallet()
	_ = wal.Open("acme", notify.Money{Minor: 10000, Currency: record.INR()})
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("sms")})
	n, _ := notify.New(accounts, memstore.NewLedger(wal), notify.WithChannel(smsCh), notify.WithPrices(wallet.DefaultINR()))

	ctx := context.Background()
	price, err := n.Quote(ctx, &sms.Request{Account: "acme", To: "9876543210", Message: strings.Repeat("a", 200)})
	if err != nil {
		panic(err)
	}
	b, _ := n.Balance(ctx, "acme")
	fmt.Println("price", price, "balance", b.Available)
	// Output: price 0.50 INR balance 100.00 INR
}

// Recipient puts a recipient in the form its channel writes, the one key
// of the suppression list: write an entry through it, and the sends it
// must stop find it, however the address or number was spelled.
func ExampleNotifier_Recipient() {
	accounts := memstore.NewAccounts()
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("mem")})
	n, err := notify.New(accounts, memstore.NewLedger(nil), notify.WithChannel(smsCh))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n.Recipient(sms.Kind, "+91 98765-43210"))
	_, err = n.Recipient(sms.Kind, "98765 43210")
	fmt.Println(err)
	_, err = n.Recipient(chat.Kind, "+919876543210")
	fmt.Println(err)
	// Output:
	// +919876543210 <nil>
	// notify.Recipient: invalid_argument: to: must be a phone number in E.164 form, as +919876543210
	// notify.Recipient: invalid_argument: channel: must be a channel this notifier sends on
}

// A validation collects every bad field, then ends in one error that
// names them all (nil when none is bad).
func ExampleInvalidFields() {
	check := func(to, text string) error {
		var fe record.FieldErrors
		if to == "" {
			fe.Add("to", "is required")
		}
		if len(text) > 160 {
			fe.Addf("text", "must be at most 160 bytes, got %d", len(text))
		}
		return notify.InvalidFields(fe)
	}
	fmt.Println(check("", strings.Repeat("x", 200)))
	fmt.Println(check("+919876543210", "hello"))
	// Output:
	// invalid_argument: to: is required; text: must be at most 160 bytes, got 200
	// <nil>
}
