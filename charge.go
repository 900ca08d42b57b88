package notify

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// The charge step: the record and its debit, one atomic step of the
// ledger (WalletStore is the wallet as a host app sees it).

// WalletStore is an account's prepaid wallet as a host app sees it: its
// balance, its top-ups and the statement of its movements. It is one of
// the card's four contracts, beside Channel, Provider and
// TemplateRenderer.
//
// The Notifier charges and refunds sends through the store.Ledger it is
// given, which keeps the records and the money together (a record and its
// debit are one atomic step); every store.Ledger is a WalletStore, over
// the same wallets, so that what a host app reads and tops up is what
// the sends are charged against. memstore.Ledger, memstore.Wallet and
// pgstore.Store implement it; storetest.RunWallet and RunLedger are its
// conformance suites.
//
// Methods are safe for concurrent use and do not retain their
// arguments. Amounts are in the account's currency (record.Account's
// Currency): another currency is store.ErrInvalid, and nothing moves.
// Errors are package store's sentinels as each method says; any other
// error is the store failing, and a Credit it answers so may or may not
// have happened: retry it with the same ref.
type WalletStore interface {
	// Balance returns the account's balance; an account without a
	// wallet is store.ErrNotFound.
	Balance(ctx context.Context, account string) (record.Balance, error)

	// Credit adds amount (> 0) to the account's wallet under ref
	// (non-empty, else store.ErrInvalid): a top-up. A ref is idempotent:
	// a ref already recorded with the same amount returns the balance
	// recorded with it and moves no money, so a retried call never
	// credits twice; the same ref with another amount is
	// store.ErrConflict. A credit that would overflow int64 fails and
	// moves nothing. An account without a wallet is store.ErrNotFound.
	// The refs the Notifier uses for its own refunds and price cuts
	// (store.RefundRefPrefix, store.AdjustRefPrefix) are the ledger's:
	// a top-up should not start with them.
	Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error)

	// Statement returns up to limit (> 0; otherwise an empty list) of
	// the account's movements whose Seq is greater than after (0 for the
	// first), in the order the money moved: each send's debit under its
	// message ID, each refund and price cut, each top-up under its ref,
	// with the balance after it. The last entry's Seq is the next call's
	// after. An account without a wallet or without movements gives an
	// empty list. A store may forget old entries (memstore's wallet
	// beyond its retention does; pgstore keeps them).
	Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error)
}

// Every ledger is the wallet it charges.
var _ WalletStore = store.Ledger(nil)

// charge is open, the ledger's debit and the record's opening, in a span;
// the message's span (the send's, or a part's) is remembered for the
// links of its reports once the record stands.
func (n *Notifier) charge(ctx context.Context, op string, acct *Account, p prepared, now time.Time) (Money, bool, error) {
	if n.tracing == nil {
		return n.open(ctx, op, acct, p, now)
	}
	cctx, sp := n.start(ctx, spanCharge, false)
	if sp.recording() {
		env := p.env
		sp.s.SetAttributes(str(keyMessageID, env.ID), num(keyPriceMinor, env.Price.Minor), str(keyCurrency, env.Price.Currency.Code))
	}
	b, charged, err := n.open(cctx, op, acct, p, now)
	sp.end(err)
	if err == nil {
		n.remember(ctx, acct.ID, p.env.ID)
	}
	return b, charged, err
}

// begin charges p and opens its record attempting: what comes before the
// vendor call. It returns the receipt to fill and whether money moved. A
// nil receipt and an error: nothing was charged or written, or, when the
// store's answer to the opening was lost, a record with its charge may
// stand, which is failed and refunded as soon as the store answers again
// (unopened). The bool is false then.
func (n *Notifier) begin(ctx context.Context, op string, acct *Account, p prepared) (*Receipt, bool, error) {
	env := p.env
	if env.ID == "" { // a part of a Composite or Bulk request has its ID already
		env.ID = n.newID()
	}

	// Charge and open the record: a caller that has gone already gets
	// nothing charged.
	if err := ctx.Err(); err != nil {
		return nil, false, wrap(op, "", CodeCanceled, err)
	}
	now := n.now()
	balance, charged, err := n.charge(ctx, op, acct, p, now)
	if err != nil {
		return nil, false, err
	}
	n.observe(ctx, Event{Type: record.StatePending, Envelope: env})

	r := n.receiptOf(acct, env, now)
	r.Balance = balance
	return r, charged, nil
}

// receiptOf returns the receipt env starts with, opened at now: what the
// message is, before any outcome.
func (n *Notifier) receiptOf(acct *Account, env *Envelope, now time.Time) *Receipt {
	return &Receipt{MessageID: env.ID, Account: acct.ID, Kind: env.Kind, To: env.To, Country: env.Country, Units: env.Units,
		Metered: n.pricer != nil, Domain: env.Domain, IdempotencyKey: env.IdempotencyKey, CreatedAt: now,
		Provider: env.Provider}
}

// open writes the message's record, opened at now, and its charge,
// env.Price (zero when unmetered), in one step. It reports the balance
// after the charge and whether money moved.
//
// The record opens attempting (record.OpenStates): the vendor call follows
// at once, and one write fewer per send is a third of a send's commits on
// PostgreSQL. A crash after the opening leaves the record attempting,
// which the reconciler settles unknown with its charge, as it would after
// a crash during the vendor call; a record that opened pending and was
// then marked attempting left the same window between the mark and the
// call. When the store's answer is lost (unreachable, context ended
// mid-call), unopened fails the record, which refunds it if it is there:
// money never stays taken without a record.
func (n *Notifier) open(ctx context.Context, op string, acct *Account, p prepared, now time.Time) (Money, bool, error) {
	env := p.env
	m := &record.Message{ID: env.ID, Account: acct.ID, Kind: env.Kind, Request: p.via, To: env.To, Country: env.Country,
		Provider: env.Provider, IdempotencyKey: env.IdempotencyKey, Domain: env.Domain,
		Units: env.Units, Metered: n.pricer != nil, Charge: env.Price, Note: p.note, CreatedAt: now, UpdatedAt: now,
		State: record.StateAttempting}
	m.Resend, m.Fallback = env.Resend, p.fallback
	if m.Request == "" {
		m.Request = env.Kind
	}
	var b record.Balance
	var err error
	if l := p.listed; l.stopping != nil {
		var e store.Suppression
		b, e, err = n.ledger.OpenUnlisted(ctx, m, l.to, l.stopping)
		if err == nil && e.Reason != "" {
			return Money{}, false, suppressedError(op, env, e.Reason) // nothing written
		}
	} else {
		b, err = n.ledger.Open(ctx, m)
	}
	if err == nil {
		return b.Available, env.Price.Minor > 0, nil // not m's: Open took m
	}
	switch CodeOf(err) {
	case CodeInsufficientFunds, CodeNotFound, CodeInvalidArgument, CodeConflict:
		return Money{}, false, storeFailure(op, "ledger", err) // definite: nothing written
	}
	e := storeFailure(op, "ledger", err)
	n.unopened(ctx, acct, env, now, e)
	return Money{}, false, e
}

// unopened settles the record of env, whose opening's answer was lost
// (e): the record and its debit are both there or both missing, and the
// vendor was not called. Failing the record refunds it if it is there,
// by the steps fail takes for a refusal: back to pending, the durable
// mark that nothing is in flight, then into failed, retried in the
// background while the store fails for a reason that may pass. A record
// left pending is refunded by the reconciler; what stays open is what
// settle.go says of a refusal's refund (moveLater).
func (n *Notifier) unopened(ctx context.Context, acct *Account, env *Envelope, now time.Time, e *Error) {
	_ = n.markAll(ctx, []*Envelope{env}, record.StatePending)
	u := store.Update{State: record.StateFailed, At: n.now(), ErrorCode: string(e.Code),
		Error: "the record could not be confirmed: " + e.Error()}
	_, err := n.move(ctx, acct.ID, env.ID, u)
	if err == nil || !passing(err) {
		return // failed and refunded, or never written (NotFound)
	}
	r := n.receiptOf(acct, env, now)
	r.Status, r.Cost, r.ErrorCode, r.Error = record.StateFailed, env.Price, e.Code, e.Error()
	refusal := *e
	n.moveLater(ctx, &lateMove{account: acct.ID, id: env.ID, u: u, refusal: &refusal, receipt: *r})
}

// newMessageID returns a random (version 4) UUID in its 36-character text
// form. The bits come from math/rand/v2's runtime generator, which is
// ChaCha8 seeded from the operating system per thread: unpredictable
// enough for IDs that are shown to their owner anyway, unique with 122
// random bits, and about ten times cheaper than reading crypto/rand on
// every send.
func newMessageID() string {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	// The five groups encoded apart: a loop over the 16 bytes that asks
	// at each where a dash goes cost a send some 300 instructions more
	// (bench/instructions).
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], u[10:16])
	return string(s[:])
}
