package notify

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestAttemptCtxDeadlineWithoutDone(t *testing.T) {
	c := newAttemptCtx(context.Background(), time.Now().Add(-time.Millisecond))
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Err reported the deadline")
	}
}

func TestAttemptCtxDoneAtDeadline(t *testing.T) {
	c := newAttemptCtx(context.Background(), time.Now().Add(10*time.Millisecond))
	defer c.release()
	if c.Err() != nil {
		t.Fatalf("Err before the deadline = %v", c.Err())
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done never closed")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v", c.Err())
	}
}

func TestAttemptCtxParentCancel(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	c := newAttemptCtx(parent, time.Now().Add(time.Hour))
	defer c.release()
	done := c.Done()
	if c.Value(key{}) != "v" {
		t.Fatal("values of the parent are lost")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("parent cancel did not reach Done")
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err = %v", c.Err())
	}
	// A context derived from it follows it too.
	child, stop := context.WithTimeout(c, time.Hour)
	defer stop()
	<-child.Done()
}

func TestAttemptCtxReleaseAndRaces(t *testing.T) {
	for range 50 {
		c := newAttemptCtx(context.Background(), time.Now().Add(time.Millisecond))
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.Err()
				<-c.Done()
				if c.Err() == nil {
					t.Error("Err is nil after Done closed")
				}
			}()
		}
		c.release()
		wg.Wait()
	}
}

// A detached context keeps its parent's values but not its end, as
// context.WithoutCancel does, and still ends at its own deadline and at
// release.
func TestDetachedIgnoresTheParentsEnd(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	c := detached(parent)
	if c.Err() != nil || c.Value(key{}) != "v" {
		t.Fatalf("detached from an ended parent: Err %v, value %v", c.Err(), c.Value(key{}))
	}
	if dl, ok := c.Deadline(); !ok || time.Until(dl) <= 0 || time.Until(dl) > settleTimeout {
		t.Fatalf("deadline %v, %v; want within the settle timeout", dl, ok)
	}
	done := c.Done()
	select {
	case <-done:
		t.Fatal("Done closed by the parent's end")
	default:
	}
	c.release()
	<-done // bounded: release closes it
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err after release = %v", c.Err())
	}

	// Its deadline is set when first asked for, and then holds.
	c = detached(context.Background())
	if c.Err() != nil {
		t.Fatalf("Err of a new detached context = %v", c.Err())
	}
	if _, ok := c.Deadline(); !ok {
		t.Fatal("no deadline")
	}
	c.deadline = time.Now().Add(-time.Millisecond) // as if settleTimeout had passed
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err past its own deadline = %v", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed past the deadline")
	}

	// Done alone arms the deadline too, and the timer ends it.
	c = detached(context.Background())
	done = c.Done()
	c.mu.Lock()
	armed := c.armed.Load() && time.Until(c.deadline) > 0
	c.mu.Unlock()
	if !armed {
		t.Fatal("Done did not set the deadline")
	}
	c.release()
	<-done
}
