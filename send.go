package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/record"
)

// Send, the path of one message through the Notifier, a step a file:
// the account and the idempotency key here (the receipts kept under a key
// are encoded here too), then prepare.go (the channel checks and prices
// the request), admit.go (suppression, send windows, rate limits),
// charge.go (the record and its debit), deliver.go (the provider calls,
// retries, failover and breakers) and settle.go (the outcome's move,
// refund and events). dispatch runs the last three in order.

// Send sends req through the channel of its kind, or, for a Composite or
// Bulk request, each of its parts. On success it returns the receipt. On
// failure it returns an *Error and, when the message got as far as a
// delivery attempt, its receipt too: StateFailed with the charge
// refunded when the vendor certainly did not take it, or StateUnknown
// with the charge kept and CodeOutcomeUnknown when it may have (never
// retried; a repeat with the same idempotency key returns that receipt
// and error again).
//
// A ctx that ends before the vendor is called cancels the send and
// nothing stays charged; once the vendor call is in flight, its outcome
// decides, as the provider reports it. Send is safe for concurrent use.
//
// A message outside its channel's send window (Envelope.Window: by
// default, a promotional SMS to India outside 09:00-21:00 IST) is not
// sent now: with a queue (WithQueue) it is charged and scheduled for the
// window's opening, and the receipt is StateScheduled with SendAt; without
// one it is refused CodeRateLimited with the wait as RetryAfter.
func (n *Notifier) Send(ctx context.Context, req Request) (*Receipt, error) {
	const op = "notify.Send"
	if nilness.Is(req) {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "request", Message: "is required"}}}
	}
	switch r := req.(type) {
	case Bulk:
		return n.sendBulk(ctx, op, r)
	case Composite:
		return n.sendComposite(ctx, op, r)
	}
	return n.send(ctx, op, req)
}

// fingerprintOf returns a hex SHA-256 digest of a request's Fingerprint.
func fingerprintOf(r Request) string {
	h := sha256.New()
	r.Fingerprint(h)
	return hex.EncodeToString(h.Sum(nil))
}

// send is Send's pipeline (sendRequest) for one message, in a span.
func (n *Notifier) send(ctx context.Context, op string, req Request) (*Receipt, error) {
	ctx, sp := n.startRequest(ctx, spanSend, req.AccountID(), req.Kind())
	r, err := n.sendRequest(ctx, op, req)
	sp.endReceipt(r, err)
	return r, err
}

// sendRequest runs one request through the whole pipeline: idempotency,
// prepare, limits, charge, deliver, settle, record (send traces it).
func (n *Notifier) sendRequest(ctx context.Context, op string, req Request) (*Receipt, error) {
	acct, err := n.account(ctx, op, req.AccountID())
	if err != nil {
		return nil, err
	}
	run := func() (*Receipt, error) {
		p, err := n.prepare(ctx, op, acct, req)
		if err != nil {
			return nil, err // no receipt: the key is released
		}
		if until := n.heldUntil(p.env, n.now()); !until.IsZero() {
			return n.hold(ctx, op, acct, req, p, until)
		}
		undo, err := n.admitOne(ctx, op, acct, req.Kind(), &p)
		if err != nil {
			return nil, err
		}
		r, err := n.dispatch(ctx, op, acct, p)
		undo.unless(r)
		return r, err
	}
	return n.keyed(ctx, op, acct, req.Key(), req, run)
}

// keyed runs fn under the caller's idempotency key, if the request has
// one. The key is looked up first: a repeat gets the first receipt without
// being prepared again (see fingerprintOf). A key on a Notifier without an
// store.Keys is refused, not ignored: its caller counts on a repeat
// never sending twice.
func (n *Notifier) keyed(ctx context.Context, op string, acct *Account, key string, req Request, fn func() (*Receipt, error)) (*Receipt, error) {
	switch {
	case key == "":
		return fn()
	case n.idem == nil:
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "idempotency_key",
			Message: "needs an idempotency store: configure the Notifier with notify.WithIdempotency"}}}
	}
	return n.idempotent(ctx, op, acct, key, fingerprintOf(req), fn)
}

// idempotent runs fn once per (account, key). A repeat of a send that was
// accepted, or whose outcome is unknown, returns the first receipt (and,
// for an unknown one, its error again) and never sends twice; only a send
// that certainly went nowhere frees the key for another try.
func (n *Notifier) idempotent(ctx context.Context, op string, acct *Account, key, fp string, fn func() (*Receipt, error)) (*Receipt, error) {
	res, err := n.idem.Reserve(ctx, acct.ID, key, fp)
	if err != nil {
		return nil, storeFailure(op, "idempotency", err)
	}
	if res.Receipt != nil {
		first, err := decodeReceipt(res.Receipt)
		if err != nil {
			return nil, storeFailure(op, "idempotency", err)
		}
		return first, replayError(op, first)
	}
	if !res.Abandoned.IsZero() {
		// The key's last holder died mid-send: settle what it left first,
		// and answer with its receipt if its message went out or may have.
		// Until that is known nothing is sent, and the key stays held
		// until its lease runs out.
		prev, err := n.settleKey(ctx, acct, key, res.Abandoned)
		if err != nil {
			return nil, storeFailure(op, "ledger", err)
		}
		if prev != nil {
			sctx := detached(ctx)
			defer sctx.release()
			_ = n.complete(sctx, acct.ID, key, prev)
			return prev, replayError(op, prev)
		}
	}
	r, sendErr := fn()
	// The key is settled even when the caller has gone meanwhile.
	sctx := detached(ctx)
	defer sctx.release()
	if r == nil || r.Status == record.StateFailed {
		// Nothing went out, so the key is freed for a retry; money stays
		// taken only when the refund failed, which the receipt says (the
		// durable record that will settle it is still to come). If the
		// release fails the key stays reserved until the store lets it go,
		// and repeats get Conflict: never a double send.
		_ = n.idem.Release(sctx, acct.ID, key)
		return r, sendErr
	}
	if err := n.complete(sctx, acct.ID, key, r); err != nil {
		// The message went out (or may have) and is paid for; failing now
		// would invite a second send. The key stays reserved, so repeats
		// get Conflict. Observers may hold r already, so the note goes on
		// a copy.
		c := *r
		c.Note = joinNote(c.Note, "idempotency record failed: "+err.Error())
		r = &c
	}
	return r, sendErr
}

// unknownError classifies err, an unknown outcome, as CodeOutcomeUnknown,
// keeping err (a context error, a provider's own code) as the cause.
func unknownError(op, provider string, err error) *Error {
	if e, ok := err.(*Error); ok && e.Code == CodeOutcomeUnknown {
		return wrap(op, provider, CodeOutcomeUnknown, err)
	}
	return &Error{Code: CodeOutcomeUnknown, Op: op, Provider: provider, Err: err}
}

// replayError is the error that goes with a receipt returned to a repeat:
// none for a sent one; StateUnknown again for an unknown one, so that a
// repeat is answered as the first request was.
func replayError(op string, r *Receipt) error {
	if r.Status != record.StateUnknown {
		return nil
	}
	what := "message " + r.MessageID
	if r.MessageID == "" {
		what = "an abandoned send"
	}
	return &Error{Code: CodeOutcomeUnknown, Op: op, Provider: r.Provider,
		Err: fmt.Errorf("a repeat of %s, whose outcome is unknown: %s", what, r.Error)}
}

// dispatch charges, delivers, settles and records one prepared message.
// Its receipt's status is the outcome: sent, failed (refunded) or unknown
// (charged).
func (n *Notifier) dispatch(ctx context.Context, op string, acct *Account, p prepared) (*Receipt, error) {
	r, charged, err := n.begin(ctx, op, acct, p)
	if r == nil || err != nil {
		return r, err
	}
	// Deliver, with retries of certain, temporary refusals.
	res, attempts, outcome, derr := n.deliver(ctx, p.ch, p.env, &r.Tried)
	return n.settle(ctx, op, acct, p.env, r, charged, res, attempts, outcome, derr)
}

// account loads an account and refuses disabled ones.
func (n *Notifier) account(ctx context.Context, op, id string) (*Account, error) {
	if id == "" {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Fields: []record.FieldError{{Field: "account", Message: "is required"}}}
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap(op, "", CodeCanceled, err)
	}
	acct, err := n.accounts.Account(ctx, id)
	if err != nil {
		return nil, storeFailure(op, "accounts", err)
	}
	if acct.Disabled {
		return nil, &Error{Code: CodePermissionDenied, Op: op, Err: fmt.Errorf("account %q is disabled", id)}
	}
	return acct, nil
}

// receiptJSON is the stored form of a Receipt: what the Notifier hands a
// store.Keys to keep, and reads back on a repeat. Its own tags keep stored
// receipts readable when Go field names change (pgstore's rows hold this
// form since before the store package).
type receiptJSON struct {
	MessageID         string         `json:"message_id"`
	Account           string         `json:"account"`
	Kind              string         `json:"kind"`
	To                string         `json:"to,omitempty"`
	Country           string         `json:"country,omitempty"`
	Status            string         `json:"status"`
	Provider          string         `json:"provider,omitempty"`
	ProviderMessageID string         `json:"provider_message_id,omitempty"`
	Gateway           string         `json:"gateway,omitempty"`
	Note              string         `json:"note,omitempty"`
	Units             int            `json:"units"`
	Cost              moneyJSON      `json:"cost"`
	Balance           moneyJSON      `json:"balance"`
	Metered           bool           `json:"metered"`
	Attempts          int            `json:"attempts"`
	Tried             []attemptJSON  `json:"tried,omitempty"`
	ErrorCode         string         `json:"error_code,omitempty"`
	Error             string         `json:"error,omitempty"`
	Domain            string         `json:"domain,omitempty"`
	IdempotencyKey    string         `json:"idempotency_key,omitempty"`
	CreatedAt         time.Time      `json:"created_at"`
	SendAt            time.Time      `json:"send_at,omitzero"`
	Fallback          string         `json:"fallback,omitempty"`
	Legs              []*receiptJSON `json:"legs,omitempty"`
}

// attemptJSON is an Attempt as a stored receipt keeps it.
type attemptJSON struct {
	Provider  string    `json:"provider"`
	Outcome   string    `json:"outcome"`
	ErrorCode string    `json:"error_code,omitempty"`
	At        time.Time `json:"at"`
}

type moneyJSON struct {
	Minor    int64  `json:"minor"`
	Code     string `json:"code"`
	Symbol   string `json:"symbol"`
	Exponent int    `json:"exponent"`
}

func toMoneyJSON(m Money) moneyJSON {
	return moneyJSON{Minor: m.Minor, Code: m.Currency.Code, Symbol: m.Currency.Symbol, Exponent: m.Currency.Exponent}
}

func (m moneyJSON) money() Money {
	return Money{Minor: m.Minor, Currency: record.Currency{Code: m.Code, Symbol: m.Symbol, Exponent: m.Exponent}}
}

func toReceiptJSON(r *Receipt) *receiptJSON {
	if r == nil {
		return nil
	}
	j := &receiptJSON{
		MessageID: r.MessageID, Account: r.Account, Kind: string(r.Kind), To: r.To, Country: r.Country,
		Status: string(r.Status), Provider: r.Provider, ProviderMessageID: r.ProviderMessageID,
		Gateway: string(r.Gateway), Note: r.Note, Units: r.Units, Cost: toMoneyJSON(r.Cost),
		Balance: toMoneyJSON(r.Balance), Metered: r.Metered, Attempts: r.Attempts,
		ErrorCode: string(r.ErrorCode), Error: r.Error, Domain: r.Domain,
		IdempotencyKey: r.IdempotencyKey, CreatedAt: r.CreatedAt, SendAt: r.SendAt, Fallback: r.Fallback,
	}
	for _, a := range r.Tried {
		j.Tried = append(j.Tried, attemptJSON{Provider: a.Provider, Outcome: string(a.Outcome), ErrorCode: a.ErrorCode, At: a.At})
	}
	for _, leg := range r.Legs {
		j.Legs = append(j.Legs, toReceiptJSON(leg))
	}
	return j
}

func (j *receiptJSON) receipt() *Receipt {
	if j == nil {
		return nil
	}
	r := &Receipt{
		MessageID: j.MessageID, Account: j.Account, Kind: Kind(j.Kind), To: j.To, Country: j.Country,
		Status: record.State(j.Status), Provider: j.Provider, ProviderMessageID: j.ProviderMessageID,
		Gateway: j.Gateway, Note: j.Note, Units: j.Units, Cost: j.Cost.money(),
		Balance: j.Balance.money(), Metered: j.Metered, Attempts: j.Attempts,
		ErrorCode: Code(j.ErrorCode), Error: j.Error, Domain: j.Domain,
		IdempotencyKey: j.IdempotencyKey, CreatedAt: j.CreatedAt, SendAt: j.SendAt, Fallback: j.Fallback,
	}
	for _, a := range j.Tried {
		r.Tried = append(r.Tried, record.Attempt{Provider: a.Provider, Outcome: record.State(a.Outcome), ErrorCode: a.ErrorCode, At: a.At})
	}
	for _, leg := range j.Legs {
		r.Legs = append(r.Legs, leg.receipt())
	}
	return r
}

// encodeReceipt is the stored form of r. It fails only on a time JSON
// cannot carry (a year outside 0-9999, from a clock gone wrong).
func encodeReceipt(r *Receipt) ([]byte, error) { return json.Marshal(toReceiptJSON(r)) }

// complete stores r as the receipt of account's key (store.Keys.Complete),
// encoded. ctx is the caller's detached context.
func (n *Notifier) complete(ctx context.Context, account, key string, r *Receipt) error {
	body, err := encodeReceipt(r)
	if err != nil {
		return err
	}
	return n.idem.Complete(ctx, account, key, body)
}

// decodeReceipt reads a receipt encodeReceipt wrote.
func decodeReceipt(body []byte) (*Receipt, error) {
	var j receiptJSON
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, err
	}
	return j.receipt(), nil
}
