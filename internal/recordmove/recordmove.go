// Package recordmove is the rule a ledger's Move applies to a record:
// memstore keeps its records by it, and the Notifier tells by it how a
// delivery report's move left a record it has just read, without
// reading the record again.
package recordmove

import (
	"slices"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Apply moves rec to u.State at u.At, appends that step to its history,
// sets u's non-empty fields, and drops rec's Payload when it leaves the
// live states (it may hold a one-time code: kept only while the message
// may be sent). The money (a refund, a reprice) is the ledger's, and
// the caller's to set.
func Apply(rec *record.Message, u store.Update) {
	rec.State = u.State
	rec.UpdatedAt = u.At
	rec.History = append(rec.History, record.StateChange{State: u.State, At: u.At})
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&rec.Provider, u.Provider)
	set(&rec.ProviderMessageID, u.ProviderMessageID)
	set(&rec.Error, u.Error)
	set(&rec.VendorCode, u.VendorCode)
	set(&rec.Note, u.Note)
	set(&rec.Gateway, u.Gateway)
	set(&rec.ErrorCode, u.ErrorCode)
	if u.Attempts != 0 {
		rec.Attempts = u.Attempts
	}
	if u.Tried != nil {
		rec.Tried = slices.Clone(u.Tried)
	}
	if !rec.State.Live() {
		rec.Payload = nil
	}
}
