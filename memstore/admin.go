package memstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Admin puts the in-memory stores of one process together as an
// store.Admin, for the admin API (package adminapi). It is for
// development and tests, like every store of this package. Make one with
// NewAdmin. An Admin is safe for concurrent use.
type Admin struct {
	accounts  *Accounts
	wallet    *Wallet
	messages  *Ledger
	templates *Templates

	// credits remembers every ref Credit took, for the life of the
	// process: the wallet forgets old refs (WithRefRetention) and a top-up
	// repeated after that would credit twice. Top-ups are few, made by
	// operators, so keeping them all is cheap.
	mu      sync.Mutex
	credits map[creditKey]creditRecord
}

type creditKey struct{ account, ref string }

// creditRecord is a credit as Credit answered it.
type creditRecord struct {
	amount  record.Money
	balance record.Balance
}

// NewAdmin returns an Admin over the stores the Notifier uses, so that a
// change made through it (a disabled account, a replaced key, a top-up)
// applies to the next send. All four are required: a nil one is
// ErrInvalid.
func NewAdmin(accounts *Accounts, wallet *Wallet, messages *Ledger, templates *Templates) (*Admin, error) {
	if accounts == nil || wallet == nil || messages == nil || templates == nil {
		return nil, fmt.Errorf("memstore: new admin: every store is required: %w", store.ErrInvalid)
	}
	return &Admin{accounts: accounts, wallet: wallet, messages: messages, templates: templates,
		credits: make(map[creditKey]creditRecord)}, nil
}

// Account returns the account with the ID, or ErrNotFound.
func (a *Admin) Account(ctx context.Context, id string) (*record.Account, error) {
	return a.accounts.Account(ctx, id)
}

// CreateAccount adds acct with apiKey to Accounts and opens its wallet
// with the opening balance, as store.Admin documents. An ID that has
// a wallet already is ErrConflict, and the account is then not added.
func (a *Admin) CreateAccount(ctx context.Context, acct *record.Account, apiKey string, opening record.Money) error {
	if err := ctx.Err(); err != nil {
		return ctxError("create account", err)
	}
	if apiKey == "" {
		return store.InvalidField("api_key", "must not be empty")
	}
	if err := a.accounts.Add(acct, apiKey); err != nil {
		return err
	}
	if err := a.wallet.Open(acct.ID, opening); err != nil {
		a.accounts.remove(acct.ID)
		return err
	}
	return nil
}

// Accounts returns up to limit accounts with an ID after after, in byte
// order. It reads every account (this store is for small numbers).
func (a *Admin) Accounts(ctx context.Context, after string, limit int) ([]*record.Account, error) {
	return a.accounts.list(ctx, after, limit)
}

// UpdateAccount changes the account through update, as store.Admin
// documents.
func (a *Admin) UpdateAccount(ctx context.Context, id string, update func(*record.Account) error) (*record.Account, error) {
	return a.accounts.UpdateFunc(ctx, id, update)
}

// ReplaceAPIKeys makes apiKeys the account's only keys.
func (a *Admin) ReplaceAPIKeys(ctx context.Context, account string, apiKeys ...string) error {
	return a.accounts.ReplaceAPIKeys(ctx, account, apiKeys...)
}

// Balance returns the account's balance, or ErrNotFound.
func (a *Admin) Balance(ctx context.Context, account string) (record.Balance, error) {
	return a.wallet.Balance(ctx, account)
}

// Credit adds amount under ref, as Wallet.Credit does, and remembers the
// ref for as long as the Admin lives, however few refs the wallet keeps:
// the same ref and amount again answers the balance recorded with it and
// moves nothing; another amount is ErrConflict.
func (a *Admin) Credit(ctx context.Context, account string, amount record.Money, ref string) (record.Balance, error) {
	key := creditKey{account, ref}
	a.mu.Lock()
	rec, seen := a.credits[key]
	a.mu.Unlock()
	if seen {
		if rec.amount != amount {
			return record.Balance{}, fmt.Errorf("memstore: credit %q: ref %q was recorded with another amount: %w", account, ref, store.ErrConflict)
		}
		return rec.balance, nil
	}
	// Two first calls with one ref both reach the wallet, which still
	// remembers the ref and credits once.
	bal, err := a.wallet.Credit(ctx, account, amount, ref)
	if err == nil {
		a.mu.Lock()
		if _, ok := a.credits[key]; !ok {
			a.credits[key] = creditRecord{amount, bal}
		}
		a.mu.Unlock()
	}
	return bal, err
}

// Statement is the Wallet's (Wallet.Statement).
func (a *Admin) Statement(ctx context.Context, account string, after int64, limit int) ([]record.LedgerEntry, error) {
	return a.wallet.Statement(ctx, account, after, limit)
}

// AccountMessages returns up to limit of the account's records older than
// before, newest first, by Ledger.ByAccount.
func (a *Admin) AccountMessages(ctx context.Context, account string, before store.MessageCursor, limit int) ([]*record.Message, error) {
	return a.messages.ByAccount(ctx, account, before, limit)
}

// Template returns the account's custom template, or ErrNotFound.
func (a *Admin) Template(ctx context.Context, account, slug string) (*store.Template, error) {
	return a.templates.Template(ctx, account, slug)
}

// PutTemplate creates or replaces the account's template t.Slug.
func (a *Admin) PutTemplate(ctx context.Context, account string, t *store.Template) error {
	return a.templates.PutTemplate(ctx, account, t)
}

// DeleteTemplate removes the account's template, or returns ErrNotFound.
func (a *Admin) DeleteTemplate(ctx context.Context, account, slug string) error {
	return a.templates.DeleteTemplate(ctx, account, slug)
}

// Templates lists the account's templates by slug.
func (a *Admin) Templates(ctx context.Context, account string) ([]*store.Template, error) {
	return a.templates.Templates(ctx, account)
}

// list returns up to limit accounts with an ID after after, by ID.
func (a *Accounts) list(ctx context.Context, after string, limit int) ([]*record.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("accounts", err)
	}
	var out []*record.Account
	a.byID.Range(func(k, v any) bool {
		if k.(string) > after {
			out = append(out, v.(*record.Account))
		}
		return true
	})
	slices.SortFunc(out, func(x, y *record.Account) int { return strings.Compare(x.ID, y.ID) })
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// UpdateFunc calls update with a copy of the account and stores the
// result, keeping the account's API keys; updates of the store run one
// after the other, so none is lost. An error of update is returned as it
// is and changes nothing; update must not change the ID
// (ErrInvalid). An unknown account is ErrNotFound. It returns the
// stored account, which callers must not modify.
func (a *Accounts) UpdateFunc(ctx context.Context, id string, update func(*record.Account) error) (*record.Account, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("update account", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.byID.Load(id)
	if !ok {
		return nil, fmt.Errorf("memstore: update account: no account %q: %w", id, store.ErrNotFound)
	}
	c := storeutil.CloneAccount(v.(*record.Account))
	if err := update(c); err != nil {
		return nil, err
	}
	if c.ID != id {
		return nil, store.InvalidField("id", "cannot be changed")
	}
	c = storeutil.CloneAccount(c) // update may keep c's settings
	a.byID.Store(id, c)
	return c, nil
}

// ReplaceAPIKeys makes apiKeys the account's only keys: every other key
// of the account stops authenticating before it returns. An unknown
// account is ErrNotFound, an empty key ErrInvalid, a key of another
// account ErrConflict; on error nothing changes. It reads every key of the
// store.
func (a *Accounts) ReplaceAPIKeys(ctx context.Context, account string, apiKeys ...string) error {
	if err := ctx.Err(); err != nil {
		return ctxError("replace API keys", err)
	}
	digests := make([][sha256.Size]byte, 0, len(apiKeys))
	for i, k := range apiKeys {
		if k == "" {
			return fmt.Errorf("memstore: replace API keys of %q: API key %d is empty: %w", account, i, store.ErrInvalid)
		}
		digests = append(digests, sha256.Sum256([]byte(k)))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.byID.Load(account); !ok {
		return fmt.Errorf("memstore: replace API keys: no account %q: %w", account, store.ErrNotFound)
	}
	for i, d := range digests {
		if v, ok := a.byKey.Load(d); ok && v.(*apiKeyRecord).account != account {
			return fmt.Errorf("memstore: replace API keys of %q: API key %d belongs to another account: %w", account, i, store.ErrConflict)
		}
	}
	a.byKey.Range(func(k, v any) bool {
		if v.(*apiKeyRecord).account == account && !slices.Contains(digests, k.([sha256.Size]byte)) {
			a.byKey.Delete(k)
		}
		return true
	})
	for _, d := range digests {
		a.byKey.Store(d, &apiKeyRecord{digest: d, account: account})
	}
	return nil
}

// remove forgets the account and its keys.
func (a *Accounts) remove(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.byID.Delete(id)
	a.byKey.Range(func(k, v any) bool {
		if v.(*apiKeyRecord).account == id {
			a.byKey.Delete(k)
		}
		return true
	})
}

// ByAccount returns copies of up to limit of the account's records that
// are older than before (all of them for the zero cursor), newest first:
// by CreatedAt descending, then ID descending. It scans every record the
// store keeps, of both generations (a bounded number: WithMessageCapacity),
// and holds at most limit of them at a time.
func (s *Ledger) ByAccount(ctx context.Context, account string, before store.MessageCursor, limit int) ([]*record.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("messages by account", err)
	}
	if limit <= 0 {
		return []*record.Message{}, nil
	}
	newer := func(x, y *record.Message) int { // newest first
		return cmp.Or(y.CreatedAt.Compare(x.CreatedAt), strings.Compare(y.ID, x.ID))
	}
	// top keeps the limit newest records seen so far, newest first.
	top := make([]*record.Message, 0, min(limit, 1024))
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		keep := func(rec *record.Message) {
			if rec.Account != account || !storeutil.Older(before, rec) {
				return
			}
			if len(top) == limit && newer(rec, top[len(top)-1]) >= 0 {
				return
			}
			j, _ := slices.BinarySearchFunc(top, rec, newer)
			if len(top) == limit {
				top = top[:limit-1]
			}
			top = slices.Insert(top, j, rec)
		}
		sh.cur.all(keep)
		sh.old.all(keep)
		for j, rec := range top {
			if rec.Account == account && s.shard(s.hashID(rec.ID)) == sh {
				top[j] = cloneMessage(rec) // copy under the shard's lock
			}
		}
		sh.mu.Unlock()
	}
	return top, nil
}

// Interface guards
var _ store.Admin = (*Admin)(nil)
