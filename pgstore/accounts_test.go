package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/store"
)

// keyWorks reports whether key authenticates account.
func keyWorks(t *testing.T, s interface {
	AccountByKey(context.Context, string) (*notify.Account, error)
}, key, account string) bool {
	t.Helper()
	a, err := s.AccountByKey(context.Background(), key)
	if errors.Is(err, store.ErrUnauthenticated) {
		return false
	}
	must(t, err)
	if a.ID != account {
		t.Fatalf("key of %q authenticates %q", account, a.ID)
	}
	return true
}

// TestReplaceAPIKeys: the keys given become the account's only keys;
// other accounts' keys are untouched; a refused replacement changes
// nothing.
func TestReplaceAPIKeys(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	must(t, s.PutAccount(ctx, &notify.Account{ID: "acme", Name: "Acme"}, "old-one", "old-two", "kept"))
	must(t, s.PutAccount(ctx, &notify.Account{ID: "beta", Name: "Beta"}, "beta-key"))

	must(t, s.ReplaceAPIKeys(ctx, "acme", "kept", "new-one", "new-one"))
	for key, want := range map[string]bool{"old-one": false, "old-two": false, "kept": true, "new-one": true} {
		if got := keyWorks(t, s, key, "acme"); got != want {
			t.Errorf("after the replacement, %q authenticates: %v, want %v", key, got, want)
		}
	}
	if !keyWorks(t, s, "beta-key", "beta") {
		t.Error("another account's key was revoked")
	}
	var n int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_api_keys WHERE account = 'acme'`).Scan(&n))
	if n != 2 {
		t.Errorf("acme has %d keys, want 2", n)
	}

	// Again with the same keys: nothing changes.
	must(t, s.ReplaceAPIKeys(ctx, "acme", "new-one", "kept"))
	if !keyWorks(t, s, "kept", "acme") || !keyWorks(t, s, "new-one", "acme") {
		t.Error("repeating the replacement lost a key")
	}

	// A key of another account: Conflict, and nothing was revoked.
	wantErr(t, s.ReplaceAPIKeys(ctx, "acme", "newest", "beta-key"), store.ErrConflict)
	if !keyWorks(t, s, "kept", "acme") || keyWorks(t, s, "newest", "acme") || !keyWorks(t, s, "beta-key", "beta") {
		t.Error("a refused replacement changed the keys")
	}

	wantErr(t, s.ReplaceAPIKeys(ctx, "nobody", "k"), store.ErrNotFound)
	wantErr(t, s.ReplaceAPIKeys(ctx, "acme", "ok", ""), store.ErrInvalid)
	if !keyWorks(t, s, "kept", "acme") {
		t.Error("an invalid replacement changed the keys")
	}

	// No keys: the account keeps none.
	must(t, s.ReplaceAPIKeys(ctx, "acme"))
	if keyWorks(t, s, "kept", "acme") || keyWorks(t, s, "new-one", "acme") {
		t.Error("an empty replacement kept a key")
	}
}

// TestReplaceAPIKeysConcurrent: replacements of one account racing each
// other leave exactly one caller's set, never a union.
func TestReplaceAPIKeysConcurrent(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	must(t, s.PutAccount(ctx, &notify.Account{ID: "acme"}, "start"))
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- s.ReplaceAPIKeys(ctx, "acme", fmt.Sprintf("key-%d", i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	var keys int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_api_keys WHERE account = 'acme'`).Scan(&keys))
	if keys != 1 {
		t.Fatalf("acme has %d keys after %d racing replacements, want 1", keys, n)
	}
}

// TestAddAPIKeyIfNone: the first key is attached, later candidates are
// not, and asking again with the attached key answers true (a retry after
// a lost commit must not make the caller think its key was refused).
func TestAddAPIKeyIfNone(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	must(t, s.PutAccount(ctx, &notify.Account{ID: "acme"}))
	must(t, s.PutAccount(ctx, &notify.Account{ID: "beta"}, "beta-key"))

	added, err := s.AddAPIKeyIfNone(ctx, "acme", "first")
	if err != nil || !added {
		t.Fatalf("first key: %v, %v; want added", added, err)
	}
	if added, err = s.AddAPIKeyIfNone(ctx, "acme", "first"); err != nil || !added {
		t.Fatalf("the same key again: %v, %v; want true", added, err)
	}
	if added, err = s.AddAPIKeyIfNone(ctx, "acme", "second"); err != nil || added {
		t.Fatalf("a second key: %v, %v; want it not added", added, err)
	}
	if !keyWorks(t, s, "first", "acme") || keyWorks(t, s, "second", "acme") {
		t.Fatal("the keys are not the first one alone")
	}

	_, err = s.AddAPIKeyIfNone(ctx, "nobody", "k")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.AddAPIKeyIfNone(ctx, "acme", "")
	wantErr(t, err, store.ErrInvalid)
	must(t, s.PutAccount(ctx, &notify.Account{ID: "gamma"}))
	_, err = s.AddAPIKeyIfNone(ctx, "gamma", "beta-key")
	wantErr(t, err, store.ErrConflict)
}

// TestAddAPIKeyIfNoneConcurrent: instances starting together on a fresh
// database each offer a key; exactly one is attached, and exactly its
// caller is told so.
func TestAddAPIKeyIfNoneConcurrent(t *testing.T) {
	s, pool := newStore(t)
	ctx := context.Background()
	must(t, s.PutAccount(ctx, &notify.Account{ID: "acme"}))
	const n = 8
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { won[i], errs[i] = s.AddAPIKeyIfNone(ctx, "acme", fmt.Sprintf("key-%d", i)) })
	}
	wg.Wait()
	winners := 0
	for i := range n {
		must(t, errs[i])
		if won[i] {
			winners++
			if !keyWorks(t, s, fmt.Sprintf("key-%d", i), "acme") {
				t.Errorf("key-%d was reported added but does not work", i)
			}
		}
	}
	var keys int
	must(t, pool.QueryRow(ctx, `SELECT count(*) FROM notify_api_keys WHERE account = 'acme'`).Scan(&keys))
	if winners != 1 || keys != 1 {
		t.Fatalf("%d callers told their key was added, %d keys stored; want 1 and 1", winners, keys)
	}
}
