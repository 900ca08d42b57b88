package memstore

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"slices"
	"sync"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Accounts is an in-memory store.Accounts. It is safe for concurrent
// use; lookups take no lock.
//
// API keys are kept only as SHA-256 digests. AccountByKey finds a key by
// its digest, whose value says nothing useful about the key, and confirms
// it with a constant-time comparison, so its timing does not reveal how
// much of a guessed key was right.
//
// Accounts are copied on the way in, so changing an account after Add does
// not change the store. Lookups return the stored account itself, which
// callers must not modify (the store.Accounts contract); Update
// stores a new copy instead of changing the old one, so an account a
// caller holds never changes under it. Lookups allocate nothing.
type Accounts struct {
	mu    sync.Mutex // serialises Add and Update
	byID  sync.Map   // account ID -> *record.Account
	byKey sync.Map   // [sha256.Size]byte -> *apiKeyRecord
}

// apiKeyRecord is a stored key: its digest and the ID of its account.
type apiKeyRecord struct {
	digest  [sha256.Size]byte
	account string
}

// NewAccounts returns an empty store.
func NewAccounts() *Accounts { return &Accounts{} }

// Add stores a copy of acct with the API keys that authenticate it. A nil
// account, an empty ID or an empty key is ErrInvalid; an ID or a key
// already in the store, or a key given twice, is ErrConflict. On error
// nothing is stored.
func (a *Accounts) Add(acct *record.Account, apiKeys ...string) error {
	if acct == nil || acct.ID == "" {
		return fmt.Errorf("memstore: add account: an account needs an ID: %w", store.ErrInvalid)
	}
	digests := make([][sha256.Size]byte, len(apiKeys))
	for i, k := range apiKeys {
		if k == "" {
			return fmt.Errorf("memstore: add account %q: API key %d is empty: %w", acct.ID, i, store.ErrInvalid)
		}
		digests[i] = sha256.Sum256([]byte(k))
		if slices.Contains(digests[:i], digests[i]) {
			return fmt.Errorf("memstore: add account %q: API key %d is given twice: %w", acct.ID, i, store.ErrConflict)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.byID.Load(acct.ID); ok {
		return fmt.Errorf("memstore: add account %q: the ID is taken: %w", acct.ID, store.ErrConflict)
	}
	for i, d := range digests {
		if _, ok := a.byKey.Load(d); ok {
			return fmt.Errorf("memstore: add account %q: API key %d belongs to another account: %w", acct.ID, i, store.ErrConflict)
		}
	}
	a.byID.Store(acct.ID, storeutil.CloneAccount(acct))
	for _, d := range digests {
		a.byKey.Store(d, &apiKeyRecord{digest: d, account: acct.ID})
	}
	return nil
}

// Update replaces the stored account with a copy of acct, keeping its API
// keys: use it to disable an account or change its plan. An account not
// in the store is ErrNotFound.
func (a *Accounts) Update(acct *record.Account) error {
	if acct == nil || acct.ID == "" {
		return fmt.Errorf("memstore: update account: an account needs an ID: %w", store.ErrInvalid)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.byID.Load(acct.ID); !ok {
		return fmt.Errorf("memstore: update account: no account %q: %w", acct.ID, store.ErrNotFound)
	}
	a.byID.Store(acct.ID, storeutil.CloneAccount(acct))
	return nil
}

// Account returns the account with the ID, or ErrNotFound.
func (a *Accounts) Account(ctx context.Context, id string) (*record.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("account", err)
	}
	v, ok := a.byID.Load(id)
	if !ok {
		return nil, fmt.Errorf("memstore: no account %q: %w", id, store.ErrNotFound)
	}
	return v.(*record.Account), nil
}

// AccountByKey returns the account that owns apiKey. An empty or
// unknown key is ErrUnauthenticated; the error never contains the key.
func (a *Accounts) AccountByKey(ctx context.Context, apiKey string) (*record.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("account by key", err)
	}
	if apiKey == "" {
		return nil, fmt.Errorf("memstore: no API key: %w", store.ErrUnauthenticated)
	}
	d := sha256.Sum256([]byte(apiKey))
	v, ok := a.byKey.Load(d)
	if !ok {
		return nil, fmt.Errorf("memstore: unknown API key: %w", store.ErrUnauthenticated)
	}
	k := v.(*apiKeyRecord)
	if subtle.ConstantTimeCompare(k.digest[:], d[:]) != 1 {
		return nil, fmt.Errorf("memstore: unknown API key: %w", store.ErrUnauthenticated)
	}
	acct, ok := a.byID.Load(k.account)
	if !ok {
		return nil, fmt.Errorf("memstore: unknown API key: %w", store.ErrUnauthenticated)
	}
	return acct.(*record.Account), nil
}

// Interface guards
var _ store.Accounts = (*Accounts)(nil)
