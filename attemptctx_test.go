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
