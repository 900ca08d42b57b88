package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/store"
)

// Templates is an in-memory store.Templates of per-account custom
// templates. It is safe for concurrent use. Templates are copied on the
// way in and on the way out (storeutil.CloneTemplate: their Variables,
// Bodies and Locales too, each variant's bodies included), so neither the
// caller of PutTemplate nor a reader can change what the store holds.
// Bodies and variants are kept as given, for any kind and under any tag:
// template.Check judges them, not the store.
type Templates struct {
	mu        sync.RWMutex
	byAccount map[string]map[string]*store.Template
}

// NewTemplates returns an empty store.
func NewTemplates() *Templates {
	return &Templates{byAccount: make(map[string]map[string]*store.Template)}
}

// Template returns a copy of the account's template with the slug, or
// ErrNotFound.
func (s *Templates) Template(ctx context.Context, account, slug string) (*store.Template, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("template", err)
	}
	s.mu.RLock()
	t, ok := s.byAccount[account][slug]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("memstore: account %q has no template %q: %w", account, slug, store.ErrNotFound)
	}
	return storeutil.CloneTemplate(t), nil
}

// PutTemplate stores a copy of t under t.Slug, replacing any template of
// the account with that slug. An empty account, a nil template or an
// empty slug is ErrInvalid.
func (s *Templates) PutTemplate(ctx context.Context, account string, t *store.Template) error {
	if err := ctx.Err(); err != nil {
		return ctxError("put template", err)
	}
	switch {
	case account == "":
		return fmt.Errorf("memstore: put template: empty account: %w", store.ErrInvalid)
	case t == nil || t.Slug == "":
		return fmt.Errorf("memstore: put template: a template needs a slug: %w", store.ErrInvalid)
	}
	c := storeutil.CloneTemplate(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byAccount[account]
	if m == nil {
		m = make(map[string]*store.Template)
		s.byAccount[account] = m
	}
	m[c.Slug] = c
	return nil
}

// DeleteTemplate removes the account's template with the slug, or returns
// ErrNotFound.
func (s *Templates) DeleteTemplate(ctx context.Context, account, slug string) error {
	if err := ctx.Err(); err != nil {
		return ctxError("delete template", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byAccount[account]
	if _, ok := m[slug]; !ok {
		return fmt.Errorf("memstore: account %q has no template %q: %w", account, slug, store.ErrNotFound)
	}
	delete(m, slug)
	if len(m) == 0 {
		delete(s.byAccount, account)
	}
	return nil
}

// Templates returns copies of the account's templates sorted by slug; an
// account without templates gets an empty list and no error.
func (s *Templates) Templates(ctx context.Context, account string) ([]*store.Template, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError("templates", err)
	}
	s.mu.RLock()
	out := make([]*store.Template, 0, len(s.byAccount[account]))
	for _, t := range s.byAccount[account] {
		out = append(out, storeutil.CloneTemplate(t))
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *store.Template) int { return strings.Compare(a.Slug, b.Slug) })
	return out, nil
}

// Interface guards
var _ store.Templates = (*Templates)(nil)
