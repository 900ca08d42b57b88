// Package settings decodes the per-kind settings of accounts
// (notify.Account.Settings) for the channels that own them, and keeps
// what it decoded, so that a send decodes nothing.
package settings

import (
	"encoding/json"
	"sync"

	"github.com/notifykit/notify"
)

// Decode decodes acct's settings of kind into a T: the zero T when it has
// none, an Internal error (the account's configuration is broken, not the
// request) when they are not the JSON of a T.
func Decode[T any](acct *notify.Account, kind notify.Kind) (T, error) {
	var v T
	raw := acct.Settings[kind]
	if len(raw) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		var zero T
		return zero, notify.Errorf(notify.CodeInternal, "%s: the %s settings of account %q do not decode: %v", kind, kind, acct.ID, err)
	}
	return v, nil
}

// Map returns the Settings map of an account whose only settings are v,
// of kind. v must encode as JSON (the channels' settings types, of
// strings and slices, always do); it panics otherwise.
func Map(kind notify.Kind, v any) map[notify.Kind]json.RawMessage {
	body, err := json.Marshal(v)
	if err != nil {
		panic(string(kind) + ": settings do not encode: " + err.Error())
	}
	return map[notify.Kind]json.RawMessage{kind: body}
}

// The cache's bounds: at most maxCached entries of at most maxCachedBytes
// of JSON together; past either it starts again (a churn of accounts
// costs decodes, not memory). Settings larger than maxCachedEntry are
// decoded on each call rather than kept (an account with a thousand DLT
// templates is one such).
const (
	maxCached      = 4096
	maxCachedBytes = 16 << 20
	maxCachedEntry = 256 << 10
)

// Cache keeps decoded settings of one kind by their JSON: accounts'
// settings change seldom, and accounts with the same JSON share an entry.
// The zero value is ready to use; it is safe for concurrent use.
type Cache[T any] struct {
	mu    sync.Mutex
	m     map[string]*T
	bytes int // the JSON kept as m's keys
	none  T   // the settings of an account that has none
}

// Of returns acct's settings of kind, decoded once per distinct JSON (see
// Decode). Callers must not modify what it returns.
func (c *Cache[T]) Of(acct *notify.Account, kind notify.Kind) (*T, error) {
	raw := acct.Settings[kind]
	if len(raw) == 0 {
		return &c.none, nil
	}
	if len(raw) > maxCachedEntry {
		v, err := Decode[T](acct, kind)
		return &v, err
	}
	c.mu.Lock()
	v, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	decoded, err := Decode[T](acct, kind)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCached || c.bytes+len(raw) > maxCachedBytes {
		c.m, c.bytes = make(map[string]*T), 0
	}
	c.m[string(raw)] = &decoded
	c.bytes += len(raw)
	return &decoded, nil
}
