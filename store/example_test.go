package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// fixedAccounts is a store.Accounts of accounts known in advance: what a
// host with its accounts in its own database might write. It answers
// with the contract's errors, never notify's.
type fixedAccounts struct {
	mu    sync.RWMutex
	byID  map[string]*record.Account
	byKey map[string]string // API key -> account ID (a real store keeps hashes)
}

func (f *fixedAccounts) Account(ctx context.Context, id string) (*record.Account, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	a, ok := f.byID[id]
	if !ok {
		return nil, fmt.Errorf("account %q: %w", id, store.ErrNotFound)
	}
	return a, nil
}

func (f *fixedAccounts) AccountByKey(ctx context.Context, apiKey string) (*record.Account, error) {
	f.mu.RLock()
	id, ok := f.byKey[apiKey]
	f.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no account has that key: %w", store.ErrUnauthenticated) // never the key itself
	}
	return f.Account(ctx, id)
}

// A store implements the contract with nothing but package store: its
// errors match the sentinels, which the Notifier turns into codes.
func Example() {
	var accounts store.Accounts = &fixedAccounts{
		byID:  map[string]*record.Account{"acme": {ID: "acme", Name: "Acme"}},
		byKey: map[string]string{"secret": "acme"},
	}
	ctx := context.Background()
	a, err := accounts.AccountByKey(ctx, "secret")
	fmt.Println(a.Name, err)
	_, err = accounts.Account(ctx, "globex")
	fmt.Println(err, errors.Is(err, store.ErrNotFound))
	// Output:
	// Acme <nil>
	// account "globex": not found true
}

// InvalidFields names every bad argument of a call; it matches ErrInvalid.
func ExampleInvalidFields() {
	var fe record.FieldErrors
	fe.Add("amount", "must be positive")
	fe.Add("ref", "is required")
	err := store.InvalidFields(fe)
	fmt.Println(err)
	fmt.Println(errors.Is(err, store.ErrInvalid))
	// Output:
	// amount: must be positive; ref: is required
	// true
}

// An account's settings are JSON per channel kind, opaque to stores.
func ExampleAccount_SetSetting() {
	a := &record.Account{ID: "acme"}
	_ = a.SetSetting("sms", map[string]string{"sender_id": "ACMEIN"})
	c := storeutil.CloneAccount(a)
	c.Settings["sms"][0] = ' ' // the copy's bytes are its own
	fmt.Println(string(a.Settings["sms"]))
	// Output:
	// {"sender_id":"ACMEIN"}
}
