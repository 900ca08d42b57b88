package adminapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/httpapi"
)

// errorBody is the shape of every error answer, the public API's.
type errorBody struct {
	Success bool      `json:"success"`
	Error   errorInfo `json:"error"`
}

type errorInfo struct {
	Code    notify.Code       `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// okBody is the shape of every successful answer.
type okBody struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

// writeJSON writes v with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"success":false,"error":{"code":"internal","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeOK(w http.ResponseWriter, status int, data any) {
	writeJSON(w, status, okBody{Success: true, Data: data})
}

// writeError answers code with message; an InvalidArgument err's fields
// are listed.
func writeError(w http.ResponseWriter, code notify.Code, message string, err error) {
	body := errorBody{Error: errorInfo{Code: code, Message: message}}
	if fields := fieldsOf(err); len(fields) > 0 {
		body.Error.Fields = make(map[string]string, len(fields))
		for _, f := range fields {
			if prev, ok := body.Error.Fields[f.Field]; ok {
				body.Error.Fields[f.Field] = prev + "; " + f.Message
			} else {
				body.Error.Fields[f.Field] = f.Message
			}
		}
	}
	writeJSON(w, httpapi.StatusOf(code), body)
}

// fieldsOf returns the fields an InvalidArgument err names: those of its
// *notify.Error (the admin API's own checks), or else those of the
// record.FieldErrors a store refused a value with.
func fieldsOf(err error) []record.FieldError {
	var e *notify.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return e.Fields
	}
	var fe record.FieldErrors
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

// storeFieldsOnly reports whether err is a store's record.FieldErrors and
// nothing more (wrapped, perhaps, but with no words added): which fields
// break which rules, words a store gives for the client to see, as
// notify.InvalidField ones. errtext.Shown would take their text ("amount:
// must be positive") for a package's.
func storeFieldsOnly(err error) bool {
	var fe record.FieldErrors
	return errors.As(err, &fe) && len(fe) > 0 && err.Error() == fe.Error()
}

// fieldsMessage is the message of an InvalidArgument error: its fields
// and rules, as the public API words them.
func fieldsMessage(err error) string {
	fields := fieldsOf(err)
	if len(fields) == 0 {
		return "invalid request"
	}
	var sb strings.Builder
	sb.WriteString("invalid request: ")
	for i, f := range fields {
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(f.Field)
		sb.WriteString(" ")
		sb.WriteString(f.Message)
	}
	return sb.String()
}

type currencyJSON struct {
	Code     string `json:"code"`
	Symbol   string `json:"symbol"`
	Exponent int    `json:"exponent"`
}

func currencyOf(c record.Currency) currencyJSON {
	return currencyJSON{Code: c.Code, Symbol: c.Symbol, Exponent: c.Exponent}
}

// balanceJSON is a balance as the public API's /balance writes it.
type balanceJSON struct {
	Account      string       `json:"account"`
	Balance      string       `json:"balance"`
	BalanceMinor int64        `json:"balance_minor"`
	Currency     currencyJSON `json:"currency"`
}

type topUpJSON struct {
	balanceJSON
	Reference   string `json:"reference"`
	Amount      string `json:"amount"`
	AmountMinor int64  `json:"amount_minor"`
}

type ledgerEntryJSON struct {
	Seq          int64  `json:"seq"`
	Kind         string `json:"kind"`
	Ref          string `json:"ref"`
	Amount       string `json:"amount"`
	AmountMinor  int64  `json:"amount_minor"`
	Balance      string `json:"balance"`
	BalanceMinor int64  `json:"balance_minor"`
	At           string `json:"at,omitempty"`
}

type ledgerJSON struct {
	Account  string            `json:"account"`
	Currency *currencyJSON     `json:"currency,omitempty"`
	Entries  []ledgerEntryJSON `json:"entries"`
	Next     string            `json:"next,omitempty"`
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
