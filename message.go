package notify

import "github.com/notifykit/notify/record"

// StateRefused is no record's state: it is the state of an Event of a
// send a limit refused before anything was charged or recorded
// (WithRateLimit, WithOTPThrottle).
const StateRefused record.State = "refused"

// receiptStatus is the receipt status of a record in state s.
func receiptStatus(s record.State) record.State {
	switch s {
	case record.StateSent, record.StateDelivered, record.StateRead:
		return record.StateSent
	case record.StateFailed:
		return record.StateFailed
	case record.StateQueued, record.StateScheduled:
		return s
	}
	return record.StateUnknown
}

// recordReceipt returns the receipt of the record m as the Notifier reports
// it. Its Balance is zero: a record does not keep the balance of the
// moment.
func recordReceipt(m *record.Message) *Receipt {
	return &Receipt{
		MessageID:         m.ID,
		Account:           m.Account,
		Kind:              m.Kind,
		To:                m.To,
		Country:           m.Country,
		Status:            receiptStatus(m.State),
		Provider:          m.Provider,
		ProviderMessageID: m.ProviderMessageID,
		Gateway:           m.Gateway,
		Note:              m.Note,
		Units:             m.Units,
		Cost:              m.Cost(),
		Metered:           m.Metered,
		Attempts:          m.Attempts,
		Tried:             m.Tried,
		ErrorCode:         Code(m.ErrorCode),
		Error:             m.Error,
		Domain:            m.Domain,
		IdempotencyKey:    m.IdempotencyKey,
		CreatedAt:         m.CreatedAt,
		SendAt:            m.SendAt,
		Fallback:          m.Fallback,
	}
}
