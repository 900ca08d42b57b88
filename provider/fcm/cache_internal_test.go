package fcm

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/notifykit/notify"
)

// gate is a fetcher a test steers: each fetch reports its context on
// started and answers what the test sends on answer.
type gate struct {
	started chan context.Context
	answer  chan *oauth2.Token
}

func newGate() *gate {
	return &gate{started: make(chan context.Context, 4), answer: make(chan *oauth2.Token, 4)}
}

func (g *gate) fetch(ctx context.Context) (*oauth2.Token, error) {
	g.started <- ctx
	select {
	case tok := <-g.answer:
		return tok, nil
	case <-ctx.Done():
		return nil, notSent(ctx, "fetching")
	}
}

func token(s string) *oauth2.Token {
	return &oauth2.Token{AccessToken: s, Expiry: time.Now().Add(time.Hour)}
}

// TestCacheLeaderEnds: when the send that fetches ends, a send waiting
// for its token fetches again with its own context, and gets a token.
func TestCacheLeaderEnds(t *testing.T) {
	g := newGate()
	c := &tokenCache{fetch: g.fetch}
	leaderCtx, cancelLeader := context.WithCancel(t.Context())
	leader := make(chan error, 1)
	go func() {
		_, err := c.token(leaderCtx)
		leader <- err
	}()
	<-g.started // the leader's fetch is under way
	waiter := make(chan *oauth2.Token, 1)
	go func() {
		tok, err := c.token(t.Context())
		if err != nil {
			t.Error(err)
		}
		waiter <- tok
	}()
	// The waiter waits on the flight; end the leader's send.
	cancelLeader()
	if err := <-leader; !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("leader: %v", err)
	}
	// Whether the waiter joined the flight before it ended or came after,
	// it fetches now, with its own context.
	ctx := <-g.started
	if ctx.Err() != nil {
		t.Fatal("the second fetch runs on an ended context")
	}
	g.answer <- token("second")
	if tok := <-waiter; tok == nil || tok.AccessToken != "second" {
		t.Fatalf("waiter got %v", tok)
	}
	if tok, err := c.token(t.Context()); err != nil || tok.AccessToken != "second" {
		t.Fatalf("cached: %v, %v", tok, err)
	}
}

// TestCacheWaiterEnds: a send waiting for another's fetch leaves when its
// own context ends, and the fetch goes on for the others.
func TestCacheWaiterEnds(t *testing.T) {
	g := newGate()
	c := &tokenCache{fetch: g.fetch}
	leader := make(chan *oauth2.Token, 1)
	go func() {
		tok, _ := c.token(t.Context())
		leader <- tok
	}()
	<-g.started
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.token(ctx); !errors.Is(err, context.DeadlineExceeded) || notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("waiter: %v", err)
	}
	g.answer <- token("first")
	if tok := <-leader; tok.AccessToken != "first" {
		t.Fatalf("leader got %v", tok)
	}
}

// TestCacheDrop: only the token refused is dropped, not one fetched since.
func TestCacheDrop(t *testing.T) {
	g := newGate()
	c := &tokenCache{fetch: g.fetch}
	g.answer <- token("a")
	a, err := c.token(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	<-g.started
	c.drop(token("stale"))
	if tok, _ := c.token(t.Context()); tok != a {
		t.Fatal("a stale token's drop dropped the current one")
	}
	c.drop(a)
	g.answer <- token("b")
	if tok, _ := c.token(t.Context()); tok.AccessToken != "b" {
		t.Fatalf("after the drop: %v", tok)
	}
}

// TestCacheEmptyToken: a fetch that brings no access token is an error,
// and nothing is cached.
func TestCacheEmptyToken(t *testing.T) {
	g := newGate()
	c := &tokenCache{fetch: g.fetch}
	g.answer <- &oauth2.Token{}
	if _, err := c.token(t.Context()); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("empty token: %v", err)
	}
	if c.tok != nil {
		t.Fatal("an empty token was cached")
	}
}
