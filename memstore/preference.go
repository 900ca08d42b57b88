package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// Preferences is an in-memory store.Preferences, for one process; use
// pgstore's to share categories, choices and recipients' locales between
// processes.
//
// Memory: unbounded. Every category and choice is kept until
// RemoveCategory takes the category off, with its choices (about 100 bytes
// a choice): a recipient's "no" must not be forgotten; a recipient's
// locale is kept until SetLocale forgets it. RemoveCategory
// walks the account's choices, O(n) for n choices; the other methods
// read one category and one choice per recipient.
//
// The zero value is empty, ready to use; a Ledger holds one (see
// Ledger.PutCategory). Methods are safe for concurrent use. An ended ctx
// is its Canceled or DeadlineExceeded error, with nothing changed.
type Preferences struct {
	// mu is read-locked by the lookup a send that names a category makes,
	// so that sends do not queue behind one another.
	mu       sync.RWMutex
	accounts map[string]*accountPreferences
}

// accountPreferences are one account's categories, by name, and its
// recipients' choices.
type accountPreferences struct {
	categories map[string]store.Category
	choices    map[choiceKey]bool
	locales    map[string]string // by recipient
}

// choiceKey names one recipient's choice of one category on one channel.
type choiceKey struct {
	kind         record.Kind
	to, category string
}

// NewPreferences returns an empty store of categories and choices.
func NewPreferences() *Preferences { return &Preferences{} }

// PutCategory defines or replaces c, as store.Preferences documents.
func (s *Preferences) PutCategory(ctx context.Context, c store.Category) (store.Category, error) {
	if err := ctx.Err(); err != nil {
		return store.Category{}, ctxError("put category", err)
	}
	if err := storeutil.CheckCategory(c); err != nil {
		return store.Category{}, fmt.Errorf("memstore: put category: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account(c.Account).categories[c.Name] = c
	return c, nil
}

// account returns the preferences of account, made when it has none;
// s.mu must be held for writing.
func (s *Preferences) account(account string) *accountPreferences {
	if s.accounts == nil {
		s.accounts = make(map[string]*accountPreferences)
	}
	a := s.accounts[account]
	if a == nil {
		a = &accountPreferences{categories: make(map[string]store.Category), choices: make(map[choiceKey]bool),
			locales: make(map[string]string)}
		s.accounts[account] = a
	}
	return a
}

// Categories lists the account's categories by name, as
// store.Preferences documents.
func (s *Preferences) Categories(ctx context.Context, account string) ([]store.Category, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("categories", err)
	}
	if account == "" {
		return nil, fmt.Errorf("memstore: categories: %w", store.InvalidField("account", "is required"))
	}
	s.mu.RLock()
	var out []store.Category
	if a := s.accounts[account]; a != nil {
		out = slices.Collect(maps.Values(a.categories))
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(x, y store.Category) int { return cmp.Compare(x.Name, y.Name) })
	return out, nil
}

// RemoveCategory deletes the category and its choices, as
// store.Preferences documents.
func (s *Preferences) RemoveCategory(ctx context.Context, account, name string) error {
	if err := ctx.Err(); err != nil {
		return ctxError("remove category", err)
	}
	if err := storeutil.CheckCategoryKey(account, name); err != nil {
		return fmt.Errorf("memstore: remove category: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[account]
	if a == nil {
		return noCategory(name)
	}
	if _, ok := a.categories[name]; !ok {
		return noCategory(name)
	}
	delete(a.categories, name)
	maps.DeleteFunc(a.choices, func(k choiceKey, _ bool) bool { return k.category == name })
	return nil
}

// SetChoice records the recipient's choice, as store.Preferences
// documents.
func (s *Preferences) SetChoice(ctx context.Context, account string, kind record.Kind, to, category string, allowed bool) error {
	if err := ctx.Err(); err != nil {
		return ctxError("set choice", err)
	}
	if err := storeutil.CheckChoice(account, kind, to, category); err != nil {
		return fmt.Errorf("memstore: set choice: %w", err)
	}
	if category == "" {
		return fmt.Errorf("memstore: set choice: %w", store.InvalidField("category", "is required"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[account]
	if a == nil {
		return noCategory(category)
	}
	if _, ok := a.categories[category]; !ok {
		return noCategory(category)
	}
	a.choices[choiceKey{kind, to, category}] = allowed
	return nil
}

// Choices answers the recipient's choices by category, as
// store.Preferences documents.
func (s *Preferences) Choices(ctx context.Context, account string, kind record.Kind, to string) (map[string]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("choices", err)
	}
	if err := storeutil.CheckChoice(account, kind, to, ""); err != nil {
		return nil, fmt.Errorf("memstore: choices: %w", err)
	}
	out := make(map[string]bool)
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[account]
	if a == nil {
		return out, nil
	}
	for name := range a.categories {
		if allowed, ok := a.choices[choiceKey{kind, to, name}]; ok {
			out[name] = allowed
		}
	}
	return out, nil
}

// LookupChoices answers the category and the recipients' choices of it
// under one read lock, as store.Preferences documents.
func (s *Preferences) LookupChoices(ctx context.Context, account, category string, kind record.Kind, tos []string) (store.Category, map[string]bool, error) {
	if err := ctx.Err(); err != nil {
		return store.Category{}, nil, ctxError("lookup choices", err)
	}
	keys, err := storeutil.CheckLookupChoices(account, category, kind, tos)
	if err != nil {
		return store.Category{}, nil, fmt.Errorf("memstore: lookup choices: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[account]
	if a == nil {
		return store.Category{}, nil, noCategory(category)
	}
	c, ok := a.categories[category]
	if !ok {
		return store.Category{}, nil, noCategory(category)
	}
	out := make(map[string]bool)
	for _, to := range keys {
		if allowed, ok := a.choices[choiceKey{kind, to, category}]; ok && to != "" {
			out[to] = allowed
		}
	}
	return c, out, nil
}

// SetLocale records or forgets the recipient's locale, as
// store.Preferences documents.
func (s *Preferences) SetLocale(ctx context.Context, account, to, locale string) error {
	if err := ctx.Err(); err != nil {
		return ctxError("set locale", err)
	}
	tag, err := storeutil.CheckLocale(account, to, locale)
	if err != nil {
		return fmt.Errorf("memstore: set locale: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tag == "" {
		if a := s.accounts[account]; a != nil {
			delete(a.locales, to)
		}
		return nil
	}
	s.account(account).locales[to] = tag
	return nil
}

// Locales answers the recipients' recorded locales under one read lock,
// as store.Preferences documents.
func (s *Preferences) Locales(ctx context.Context, account string, tos []string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("locales", err)
	}
	keys, err := storeutil.CheckLocales(account, tos)
	if err != nil {
		return nil, fmt.Errorf("memstore: locales: %w", err)
	}
	out := make(map[string]string)
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[account]
	if a == nil {
		return out, nil
	}
	for _, to := range keys {
		if tag, ok := a.locales[to]; ok && to != "" {
			out[to] = tag
		}
	}
	return out, nil
}

// noCategory is the answer for a category the account has not defined.
func noCategory(name string) error {
	return fmt.Errorf("memstore: category %q: %w", name, store.ErrNotFound)
}

// PutCategory defines a category in the Ledger's preferences; see
// Preferences.
func (s *Ledger) PutCategory(ctx context.Context, c store.Category) (store.Category, error) {
	return s.preferences.PutCategory(ctx, c)
}

// Categories lists the Ledger's categories of an account; see
// Preferences.
func (s *Ledger) Categories(ctx context.Context, account string) ([]store.Category, error) {
	return s.preferences.Categories(ctx, account)
}

// RemoveCategory deletes a category from the Ledger's preferences; see
// Preferences.
func (s *Ledger) RemoveCategory(ctx context.Context, account, name string) error {
	return s.preferences.RemoveCategory(ctx, account, name)
}

// SetChoice records a recipient's choice in the Ledger's preferences; see
// Preferences.
func (s *Ledger) SetChoice(ctx context.Context, account string, kind record.Kind, to, category string, allowed bool) error {
	return s.preferences.SetChoice(ctx, account, kind, to, category, allowed)
}

// Choices reads a recipient's choices from the Ledger's preferences; see
// Preferences.
func (s *Ledger) Choices(ctx context.Context, account string, kind record.Kind, to string) (map[string]bool, error) {
	return s.preferences.Choices(ctx, account, kind, to)
}

// LookupChoices reads a category and its recipients' choices from the
// Ledger's preferences; see Preferences.
func (s *Ledger) LookupChoices(ctx context.Context, account, category string, kind record.Kind, tos []string) (store.Category, map[string]bool, error) {
	return s.preferences.LookupChoices(ctx, account, category, kind, tos)
}

// SetLocale records or forgets a recipient's locale in the Ledger's
// preferences; see Preferences.
func (s *Ledger) SetLocale(ctx context.Context, account, to, locale string) error {
	return s.preferences.SetLocale(ctx, account, to, locale)
}

// Locales reads recipients' locales from the Ledger's preferences; see
// Preferences.
func (s *Ledger) Locales(ctx context.Context, account string, tos []string) (map[string]string, error) {
	return s.preferences.Locales(ctx, account, tos)
}

var (
	_ store.Preferences = (*Preferences)(nil)
	_ store.Preferences = (*Ledger)(nil)
)
