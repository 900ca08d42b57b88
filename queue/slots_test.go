package queue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/notifykit/notify/queue"
)

func TestSlots(t *testing.T) {
	ctx := context.Background()
	s := queue.NewSlots(2)
	for range 2 {
		if err := s.Take(ctx); err != nil {
			t.Fatalf("Take with a slot free: %v", err)
		}
	}
	if s.Len() != 2 {
		t.Fatalf("Len %d after two Takes, want 2", s.Len())
	}
	// Full: Take waits, and gives up with its context, taking nothing.
	ended, cancel := context.WithCancelCause(ctx)
	cause := errors.New("the run's time is up")
	cancel(cause)
	if err := s.Take(ended); !errors.Is(err, cause) {
		t.Fatalf("Take with no slot free and its context ended: %v; want its cause", err)
	}
	if s.Len() != 2 {
		t.Fatalf("Len %d after a Take that gave up, want 2", s.Len())
	}
	// A waiting Take gets the slot a Give frees.
	got := make(chan error, 1)
	go func() { got <- s.Take(ctx) }()
	s.Give()
	if err := <-got; err != nil || s.Len() != 2 {
		t.Fatalf("a waiting Take after a Give: %v, Len %d; want the freed slot", err, s.Len())
	}
	s.Give()
	s.Give()
	if s.Len() != 0 {
		t.Fatalf("Len %d after every Give, want 0", s.Len())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a Give without a Take did not panic")
		}
	}()
	s.Give()
}

func TestSlotsNilAndAtLeastOne(t *testing.T) {
	var none *queue.Slots
	if err := none.Take(context.Background()); err != nil || none.Len() != 0 {
		t.Fatalf("nil Slots: Take %v, Len %d; want no bound", err, none.Len())
	}
	none.Give()
	s := queue.NewSlots(0)
	if err := s.Take(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Take(ended); err == nil {
		t.Fatal("NewSlots(0) took a second slot; want one slot")
	}
}

func ExampleSlots() {
	// A queue runs more jobs than it lets send at once: each holds a
	// slot only from its claim to the vendor's answer.
	slots := queue.NewSlots(16)
	job := queue.Job{Account: "acme", Message: "msg_1", Slots: slots}
	ctx := context.Background()
	if err := job.Slots.Take(ctx); err != nil {
		return // the run ended before a slot came free: nothing was claimed
	}
	// ... claim the record, call the vendor ...
	job.Slots.Give()
	// ... write the outcome ...
	fmt.Println(slots.Len())
	// Output: 0
}
