package storetest_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storetest"
)

// simpleWindow is a plain sliding window: it keeps every unit's time and
// counts them on each Take. With no defect it must pass RunWindowLimit;
// each defect must make it fail.
type simpleWindow struct {
	defect string
	max    int
	window time.Duration
	mu     sync.Mutex
	m      map[string][]time.Time
}

func (l *simpleWindow) key(k string) string {
	switch l.defect {
	case "global-key":
		return ""
	case "cut-at-nul":
		k, _, _ = strings.Cut(k, "\x00")
	}
	return k
}

func (l *simpleWindow) Take(ctx context.Context, key string, now time.Time) error {
	if l.defect == "real-clock" {
		now = time.Now()
	}
	k := l.key(key)
	l.mu.Lock()
	var live []time.Time
	for _, h := range l.m[k] {
		if l.defect == "no-slide" || h.After(now.Add(-l.window)) {
			live = append(live, h)
		}
	}
	if l.defect != "unsorted" {
		slices.SortFunc(live, func(a, b time.Time) int { return a.Compare(b) })
	}
	budget := l.max
	if l.defect == "off-by-one" {
		budget++
	}
	if len(live) >= budget {
		if l.defect == "refusal-counts" {
			l.m[k] = append(live, now)
		}
		l.mu.Unlock()
		retry := live[len(live)-budget].Add(l.window).Sub(now)
		if l.defect == "fixed-retry" {
			retry = l.window
		}
		switch l.defect {
		case "no-rule":
			return &store.LimitError{RetryAfter: retry}
		case "limit-is-conflict":
			return fmt.Errorf("%w: %w", store.ErrConflict, &store.LimitError{Rule: fmt.Sprintf("at most %d per %v", l.max, l.window), RetryAfter: retry})
		}
		return &store.LimitError{Rule: fmt.Sprintf("at most %d per %v", l.max, l.window), RetryAfter: retry}
	}
	if l.defect == "racy" {
		l.mu.Unlock()
		for range 10 {
			runtime.Gosched()
		}
		l.mu.Lock()
		live = l.m[k]
	}
	l.m[k] = append(live, now)
	l.mu.Unlock()
	return nil
}

func (l *simpleWindow) Undo(ctx context.Context, key string, at time.Time) error {
	if l.defect == "undo-noop" {
		return nil
	}
	k := l.key(key)
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.m[k]
	for i, x := range h {
		if x.Equal(at) || l.defect == "undo-any" {
			l.m[k] = slices.Delete(h, i, i+1)
			return nil
		}
	}
	return nil
}

// simpleRate is a plain token bucket with a float token count. With no
// defect it must pass RunRateLimit; each defect must make it fail.
type simpleRate struct {
	defect    string
	perSecond float64
	burst     int
	mu        sync.Mutex
	m         map[string]*simpleBucket
}

type simpleBucket struct {
	tokens float64
	at     time.Time // of tokens
	since  time.Time // the bucket was last found full then
}

func (l *simpleRate) bucket(key string, now time.Time) *simpleBucket {
	if l.defect == "global-key" {
		key = ""
	}
	b, ok := l.m[key]
	if !ok {
		b = &simpleBucket{tokens: float64(l.burst), at: now, since: now}
		l.m[key] = b
	}
	if now.After(b.at) {
		b.tokens += now.Sub(b.at).Seconds() * l.perSecond
		b.at = now
	}
	if b.tokens >= float64(l.burst) {
		if l.defect != "no-cap" && l.defect != "undo-unbounded" {
			b.tokens = float64(l.burst)
		}
		b.since = now
	}
	return b
}

func (l *simpleRate) Take(ctx context.Context, key string, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, now)
	if b.tokens < 1-1e-9 {
		retry := time.Duration(math.Ceil((1 - b.tokens) / l.perSecond * float64(time.Second)))
		return &store.LimitError{Rule: fmt.Sprintf("%g per second, bursts of %d", l.perSecond, l.burst), RetryAfter: retry}
	}
	b.tokens--
	return nil
}

func (l *simpleRate) Undo(ctx context.Context, key string, at time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, at)
	if at.Before(b.since) && l.defect != "undo-expired" {
		return nil
	}
	b.tokens++
	if b.tokens > float64(l.burst) && l.defect != "undo-unbounded" {
		b.tokens = float64(l.burst)
	}
	return nil
}

func runLimits(t *testing.T, defect string) {
	t.Run("RateLimit", func(t *testing.T) {
		storetest.RunRateLimit(t, storetest.RateLimitHarness{
			New: func(t *testing.T, perSecond float64, burst int) store.Limiter {
				return &simpleRate{defect: defect, perSecond: perSecond, burst: burst, m: map[string]*simpleBucket{}}
			},
			// Float token counts are exact to well within a microsecond.
			Resolution: time.Microsecond,
		})
	})
	t.Run("WindowLimit", func(t *testing.T) {
		storetest.RunWindowLimit(t, storetest.WindowLimitHarness{
			New: func(t *testing.T, max int, window time.Duration) store.Limiter {
				return &simpleWindow{defect: defect, max: max, window: window, m: map[string][]time.Time{}}
			},
		})
	})
}

// TestSimpleLimiters shows that plain, correct limiters pass the suites.
func TestSimpleLimiters(t *testing.T) {
	runLimits(t, "")
}

// TestLimitFlawedHelper runs the limiter suites against flawed limiters
// when started by TestLimitSuitesCatchDefects in a child process; its
// failure is expected.
func TestLimitFlawedHelper(t *testing.T) {
	runLimits(t, childDefect(t, "STORETEST_LIMIT_DEFECT"))
}

func TestLimitSuitesCatchDefects(t *testing.T) {
	wantDefectsCaught(t, "TestLimitFlawedHelper", "STORETEST_LIMIT_DEFECT", []flaw{
		{"off-by-one", "WindowLimit/Budget"},
		{"fixed-retry", "WindowLimit/Budget"},
		{"no-rule", "WindowLimit/Budget"},
		{"limit-is-conflict", "WindowLimit/Budget"},
		{"refusal-counts", "WindowLimit/Budget"},
		{"no-slide", "WindowLimit/Slides"},
		{"real-clock", "WindowLimit/Slides"},
		{"unsorted", "WindowLimit/OutOfOrder"},
		{"undo-noop", "WindowLimit/Undo"},
		{"undo-any", "WindowLimit/UndoUnknownOrExpired"},
		{"global-key", "WindowLimit/KeysIndependent"},
		{"global-key", "RateLimit/KeysIndependent"},
		{"cut-at-nul", "WindowLimit/KeysIndependent"},
		{"racy", "WindowLimit/Concurrent"},
		{"no-cap", "RateLimit/Refill"},
		{"undo-unbounded", "RateLimit/Undo"},
		{"undo-expired", "RateLimit/UndoUnknownOrExpired"},
	})
}
