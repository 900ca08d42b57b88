// Package wrapcheck shows that a store.Ledger wrapped the way a host app
// wraps one (a struct embedding the contract, for logging or metrics,
// forwarding nothing by hand) keeps every guarantee the Notifier gives:
// the suppression list is enforced, a provider's hard bounce is kept,
// bulk sends read the list at once, a recipient's preferences are read, and the wallet reads and tops up
// through it as notify.WalletStore. Every ability the Notifier uses is a
// method of store.Ledger, so a wrapper cannot hide one; before that was
// so, a wrapped ledger passed the ledger suite and still sent to a
// hard-bounced recipient. memstore and pgstore run Run from their tests.
package wrapcheck

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// Opening is the balance, in paise, of the account NewLedger funds.
const Opening = 100_000

// NewLedger returns the ledger under test with a wallet for account
// opened at Opening paise in INR; the account's ID is new to the store.
type NewLedger func(t *testing.T, account string) store.Ledger

// loggingLedger is the wrapper a host app writes: it embeds the contract
// and overrides one method to count the charges, as a logging or metrics
// wrapper does.
type loggingLedger struct {
	store.Ledger
	opens atomic.Int64
}

func (l *loggingLedger) Open(ctx context.Context, m *record.Message) (record.Balance, error) {
	l.opens.Add(1)
	return l.Ledger.Open(ctx, m)
}

// OpenUnlisted counts as Open does: a wrapper that watches the openings
// watches both, since the Notifier opens a message with one recipient
// through OpenUnlisted (the list's read and the opening in one step).
func (l *loggingLedger) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	b, e, err := l.Ledger.OpenUnlisted(ctx, m, to, stopping)
	if e.Reason == "" {
		l.opens.Add(1)
	}
	return b, e, err
}

// bounce is a provider's error for an address that does not exist: a
// certain refusal that carries store.Bounce.
type bounce struct{ to string }

func (b *bounce) Error() string { return "mailbox unavailable" }
func (b *bounce) BounceReason() (store.SuppressionReason, string) {
	return store.SuppressHardBounce, b.to
}

// rig is a Notifier on a wrapped ledger, with an SMS channel whose
// provider answers a hard bounce for a number ending in 0000.
type rig struct {
	n       *notify.Notifier
	ledger  *loggingLedger
	vendor  *memprovider.Provider
	account string
}

// Run checks the guarantees through a wrapper of the ledger newLedger
// makes.
func Run(t *testing.T, newLedger NewLedger) {
	t.Run("SuppressionEnforced", func(t *testing.T) { checkSuppressionEnforced(t, newRig(t, newLedger)) })
	t.Run("BulkReadsTheList", func(t *testing.T) { checkBulk(t, newRig(t, newLedger)) })
	t.Run("PreferencesRead", func(t *testing.T) { checkPreferences(t, newRig(t, newLedger)) })
	t.Run("BounceKept", func(t *testing.T) { checkBounceKept(t, newRig(t, newLedger)) })
	t.Run("WalletStore", func(t *testing.T) { checkWalletStore(t, newRig(t, newLedger)) })
}

func newRig(t *testing.T, newLedger NewLedger) *rig {
	t.Helper()
	account := "wrap-" + rand.Text()[:12] // new to a store shared by tests
	r := &rig{ledger: &loggingLedger{Ledger: newLedger(t, account)}, vendor: memprovider.New("memsms"), account: account}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: account, Name: "Wrapped", Currency: record.INR(),
		Settings: sms.Settings{SenderID: "ACMEIN"}.Map()}); err != nil {
		t.Fatal(err)
	}
	r.vendor.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
		if strings.HasSuffix(env.To, "0000") {
			return nil, notify.WithCode(notify.CodeRejected, &bounce{})
		}
		return &notify.Result{ProviderMessageID: "mem-" + env.ID}, nil
	})
	ch, err := sms.New(sms.Config{Provider: r.vendor})
	if err != nil {
		t.Fatal(err)
	}
	r.n, err = notify.New(accounts, r.ledger, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) suppress(t *testing.T, to string, reason store.SuppressionReason) {
	t.Helper()
	if _, err := r.ledger.AddSuppression(context.Background(), store.Suppression{Account: r.account, Kind: sms.Kind,
		To: to, Reason: reason, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) wantBalance(t *testing.T, want int64) {
	t.Helper()
	b, err := r.n.Balance(context.Background(), r.account)
	if err != nil || b.Available.Minor != want {
		t.Fatalf("balance %v, %v; want %d", b.Available, err, want)
	}
}

// checkSuppressionEnforced: a hard-bounced number is refused before any
// charge, through the wrapper, and another number still goes.
func checkSuppressionEnforced(t *testing.T, r *rig) {
	ctx := context.Background()
	r.suppress(t, "+919876543210", store.SuppressHardBounce)
	_, err := r.n.Send(ctx, &sms.Request{Account: r.account, To: "9876543210", Message: "Your order shipped."})
	if notify.CodeOf(err) != notify.CodeSuppressed {
		t.Fatalf("a send to a hard-bounced number through a wrapped ledger: %v; want CodeSuppressed", err)
	}
	if r.vendor.Len() != 0 || r.ledger.opens.Load() != 0 {
		t.Fatalf("the refused send reached the vendor (%d) or the ledger (%d opens)", r.vendor.Len(), r.ledger.opens.Load())
	}
	r.wantBalance(t, Opening)
	if _, err := r.n.Send(ctx, &sms.Request{Account: r.account, To: "9876543211", Message: "Your order shipped."}); err != nil {
		t.Fatalf("a send to a number not on the list: %v", err)
	}
	if r.ledger.opens.Load() != 1 {
		t.Fatalf("%d opens through the wrapper, want 1", r.ledger.opens.Load())
	}
}

// checkBulk: a bulk send reads the list through the wrapper and refuses
// the whole batch naming the recipient stopped.
func checkBulk(t *testing.T, r *rig) {
	r.suppress(t, "+919876543212", store.SuppressHardBounce)
	_, err := r.n.Send(context.Background(), &sms.BulkRequest{To: []string{"9876543213", "9876543212"},
		Message: sms.Request{Account: r.account, Message: "Your order shipped."}})
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeSuppressed || !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "to.1" {
		t.Fatalf("a bulk send to a hard-bounced number through a wrapped ledger: %v; want CodeSuppressed naming to.1", err)
	}
	if r.vendor.Len() != 0 {
		t.Fatalf("%d messages reached the vendor", r.vendor.Len())
	}
	r.wantBalance(t, Opening)
}

// checkPreferences: a recipient's "no" to a category on SMS, written
// through the wrapper, refuses a send of that category before any charge,
// alone and in a bulk send; a critical category still goes.
func checkPreferences(t *testing.T, r *rig) {
	ctx := context.Background()
	for _, c := range []store.Category{{Account: r.account, Name: "marketing"}, {Account: r.account, Name: "otp", Critical: true}} {
		if _, err := r.ledger.PutCategory(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := r.ledger.SetChoice(ctx, r.account, sms.Kind, "+919876543215", c.Name, false); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.n.Send(ctx, &sms.Request{Account: r.account, To: "9876543215", Message: "Half price today", Category: "marketing"})
	if notify.CodeOf(err) != notify.CodeDeclined {
		t.Fatalf("a send the recipient declined, through a wrapped ledger: %v; want CodeDeclined", err)
	}
	_, err = r.n.Send(ctx, &sms.BulkRequest{To: []string{"9876543216", "9876543215"},
		Message: sms.Request{Account: r.account, Message: "Half price today", Category: "marketing"}})
	var e *notify.Error
	if notify.CodeOf(err) != notify.CodeDeclined || !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "to.1" {
		t.Fatalf("a bulk send to a recipient who declined it, through a wrapped ledger: %v; want CodeDeclined naming to.1", err)
	}
	if r.vendor.Len() != 0 || r.ledger.opens.Load() != 0 {
		t.Fatalf("the refused sends reached the vendor (%d) or the ledger (%d opens)", r.vendor.Len(), r.ledger.opens.Load())
	}
	r.wantBalance(t, Opening)
	if _, err := r.n.Send(ctx, &sms.Request{Account: r.account, To: "9876543215", Route: sms.RouteOTP, Message: "4821", Category: "otp"}); err != nil {
		t.Fatalf("a critical send to the recipient: %v", err)
	}
}

// checkBounceKept: a provider's hard bounce is refunded and written to
// the list through the wrapper, so the next send is refused uncharged.
func checkBounceKept(t *testing.T, r *rig) {
	ctx := context.Background()
	req := &sms.Request{Account: r.account, To: "9876500000", Message: "Your code is ready."}
	if _, err := r.n.Send(ctx, req); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("a bounced send: %v; want CodeRejected", err)
	}
	r.wantBalance(t, Opening)
	e, ok, err := r.ledger.LookupSuppression(ctx, r.account, sms.Kind, "+919876500000")
	if err != nil || !ok || e.Reason != store.SuppressHardBounce {
		t.Fatalf("the bounce is not on the list: %+v, %v, %v", e, ok, err)
	}
	if _, err := r.n.Send(ctx, req); notify.CodeOf(err) != notify.CodeSuppressed {
		t.Fatalf("a send after the bounce: %v; want CodeSuppressed", err)
	}
	if r.ledger.opens.Load() != 1 {
		t.Fatalf("%d opens, want 1: the second send was charged", r.ledger.opens.Load())
	}
}

// checkWalletStore: the wrapper is the account's notify.WalletStore: a
// top-up by ref is idempotent and the statement lists it beside the
// send's debit.
func checkWalletStore(t *testing.T, r *rig) {
	ctx := context.Background()
	var w notify.WalletStore = r.ledger
	rec, err := r.n.Send(ctx, &sms.Request{Account: r.account, To: "9876543214", Message: "Your order shipped."})
	if err != nil {
		t.Fatal(err)
	}
	topup := notify.Money{Minor: 5_000, Currency: record.INR()}
	for range 2 {
		if _, err := w.Credit(ctx, r.account, topup, "topup:inv-7"); err != nil {
			t.Fatalf("Credit: %v", err)
		}
	}
	want := Opening - rec.Cost.Minor + topup.Minor
	if b, err := w.Balance(ctx, r.account); err != nil || b.Available.Minor != want {
		t.Fatalf("Balance = %v, %v; want %d", b.Available, err, want)
	}
	entries, err := w.Statement(ctx, r.account, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, e := range entries {
		refs = append(refs, e.Ref)
	}
	if n := len(entries); n < 2 || entries[n-2].Ref != rec.MessageID || entries[n-2].Amount.Minor != -rec.Cost.Minor ||
		entries[n-1].Ref != "topup:inv-7" || entries[n-1].Balance.Minor != want {
		t.Fatalf("statement refs %v (%+v); want the send's debit then one top-up ending at %d", refs, entries, want)
	}
}
