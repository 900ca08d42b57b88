package notify

import (
	"context"
	"encoding/json"
	"time"

	"github.com/notifykit/notify/record"
)

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
