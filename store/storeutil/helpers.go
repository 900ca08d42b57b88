package storeutil

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// CloneAccount returns a deep copy of a: its Countries, its Settings map
// and their bytes are its own. Stores that hand out accounts callers may
// keep use it.
func CloneAccount(a *record.Account) *record.Account {
	c := *a
	c.Countries = slices.Clone(a.Countries)
	if a.Settings != nil {
		c.Settings = make(map[record.Kind]json.RawMessage, len(a.Settings))
		for k, v := range a.Settings {
			c.Settings[k] = slices.Clone(v)
		}
	}
	return &c
}

// CloneTemplate returns a deep copy of t: its Variables, Bodies and
// Locales, each variant's bodies too, are its own (a nil map stays nil).
// Stores that hand out templates callers may keep use it.
func CloneTemplate(t *store.Template) *store.Template {
	c := *t
	c.Variables = slices.Clone(t.Variables)
	c.Bodies = maps.Clone(t.Bodies)
	if t.Locales != nil {
		c.Locales = make(map[string]map[record.Kind]store.Body, len(t.Locales))
		for tag, bodies := range t.Locales {
			c.Locales[tag] = maps.Clone(bodies)
		}
	}
	return &c
}

// Repricing reports whether u asks to lower a record's charge: a move
// into StateSent with a Reprice of zero or more (store.Update.Reprice).
func Repricing(u store.Update) bool {
	return u.State == record.StateSent && u.Reprice != nil && u.Reprice.Minor >= 0
}

// RepriceMismatch reports whether u reprices a positive charge in another
// currency than the charge's, which a Ledger refuses with
// store.ErrInvalid, the move not made.
func RepriceMismatch(u store.Update, charge record.Money) bool {
	return Repricing(u) && charge.Minor > 0 && !u.Reprice.Currency.Same(charge.Currency)
}

// Older reports whether m sorts after c in a list of messages, newest
// first (store.Admin.Messages): created before c.CreatedAt, or at the
// same time with an ID before c.ID in byte order. Every record is older
// than the zero cursor.
func Older(c store.MessageCursor, m *record.Message) bool {
	if c == (store.MessageCursor{}) { // the start
		return true
	}
	if d := m.CreatedAt.Compare(c.CreatedAt); d != 0 {
		return d < 0
	}
	return m.ID < c.ID
}

// PageSize returns the number of entries q asks for: its Limit, or
// store.DefaultSuppressionPage when that is 0.
func PageSize(q store.SuppressionQuery) int {
	if q.Limit == 0 {
		return store.DefaultSuppressionPage
	}
	return q.Limit
}
