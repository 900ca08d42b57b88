package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/errtext"
	"github.com/notifykit/notify/record"
)

// messageJSON is the wire form of a message record (GET
// /messages/{id}, beyond the spec): its state, what it cost, who carried
// it and when each state was reached.
type messageJSON struct {
	MessageID string `json:"message_id"`
	Channel   string `json:"channel"`
	// Request is "otp" for a leg of a dual OTP, else the channel.
	Request           string `json:"request"`
	To                string `json:"to"`
	Country           string `json:"country,omitempty"`
	Status            string `json:"status"`
	Provider          string `json:"provider,omitempty"`
	ProviderMessageID string `json:"provider_message_id,omitempty"`
	Gateway           string `json:"gateway,omitempty"`
	Units             int    `json:"units,omitempty"`
	Metered           bool   `json:"metered"`
	// Cost is what stays charged (zero once refunded); Charged is what was
	// debited when the message was opened.
	Cost           string          `json:"cost"`
	CostMinor      int64           `json:"cost_minor"`
	Charged        string          `json:"charged"`
	ChargedMinor   int64           `json:"charged_minor"`
	Refunded       bool            `json:"refunded"`
	Currency       currencyJSON    `json:"currency"`
	Attempts       int             `json:"attempts"`
	Tried          []attemptJSON   `json:"tried,omitempty"`
	ErrorCode      string          `json:"error_code,omitempty"`
	Error          string          `json:"error,omitempty"`
	VendorCode     string          `json:"vendor_code,omitempty"`
	Note           string          `json:"note,omitempty"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Domain         string          `json:"domain,omitempty"`
	History        []stateStepJSON `json:"history"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	// SendAt is when a scheduled message is (or was) due; absent when it
	// was not scheduled.
	SendAt time.Time `json:"send_at,omitzero"`
}

type currencyJSON struct {
	Code     string `json:"code"`
	Symbol   string `json:"symbol"`
	Exponent int    `json:"exponent"`
}

// attemptJSON is one provider call of a message that had several
// providers to try.
type attemptJSON struct {
	Provider  string    `json:"provider"`
	Outcome   string    `json:"outcome"`
	ErrorCode string    `json:"error_code,omitempty"`
	At        time.Time `json:"at"`
}

type stateStepJSON struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
}

// EncodeMessage returns the JSON wire form of a message record, as GET
// /messages/{id} answers it in "data" (docs/api.md): its state, what it
// cost, who carried it and when each state was reached. Other adapters
// (the admin API) answer records in the same form.
func EncodeMessage(m *record.Message) json.RawMessage {
	b, err := json.Marshal(toMessageJSON(m))
	if err != nil { // strings, numbers and times only: cannot fail
		panic("httpapi: encoding a message record: " + err.Error())
	}
	return b
}

func toMessageJSON(m *record.Message) messageJSON {
	cost, cur := m.Cost(), m.Charge.Currency
	out := messageJSON{
		MessageID: m.ID, Channel: string(m.Kind), Request: string(m.Request), To: specNumber(m.To), Country: m.Country,
		Status: string(m.State), SendAt: utcOrZero(m.SendAt), Provider: m.Provider, ProviderMessageID: m.ProviderMessageID,
		Gateway: string(m.Gateway), Units: m.Units, Metered: m.Metered,
		Cost: cost.Decimal(), CostMinor: cost.Minor, Charged: m.Charge.Decimal(), ChargedMinor: m.Charge.Minor,
		Refunded: m.Refunded, VendorCode: m.VendorCode,
		Currency: currencyJSON{Code: cur.Code, Symbol: cur.Symbol, Exponent: cur.Exponent},
		Attempts: m.Attempts, ErrorCode: string(m.ErrorCode), Error: recordError(notify.Code(m.ErrorCode), m.Error),
		Note: errtext.PublicNote(m.Note), IdempotencyKey: m.IdempotencyKey, Domain: m.Domain,
		History:   make([]stateStepJSON, len(m.History)),
		CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC(),
	}
	for i, h := range m.History {
		out.History[i] = stateStepJSON{Status: string(h.State), At: h.At.UTC()}
	}
	for _, a := range m.Tried {
		out.Tried = append(out.Tried, attemptJSON{Provider: a.Provider, Outcome: string(a.Outcome), ErrorCode: a.ErrorCode, At: a.At.UTC()})
	}
	return out
}

// message answers GET /messages/{id}: the record of one of the caller's
// messages. Another account's message is 404, as a missing one is, so an
// ID reveals nothing about other accounts.
func (h *Handler) message(x *exchange, r *http.Request, acct *notify.Account) {
	h.answerMessage(r.Context(), x, r, acct, r.PathValue("id"))
}

// answerMessage answers the record of the caller's message id, as GET
// /messages/{id} does.
func (h *Handler) answerMessage(ctx context.Context, x *exchange, r *http.Request, acct *notify.Account, id string) {
	m, err := h.n.Message(ctx, acct.ID, id)
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	body, err := json.Marshal(struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
	}{true, EncodeMessage(m)})
	if err != nil {
		writeErr(x, r, notify.WithCode(notify.CodeInternal, err), nil)
		return
	}
	writeJSON(x, http.StatusOK, append(body, '\n'))
}

// utcOrZero returns t in UTC, or the zero time.
func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
