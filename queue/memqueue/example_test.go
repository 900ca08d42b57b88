package memqueue_test

import (
	"context"
	"fmt"
	"time"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/record"
)

// printWorker is a queue.Worker that prints the jobs it runs; a Notifier
// is the real one.
type printWorker struct{}

func (printWorker) Work(_ context.Context, job queue.Job) (time.Time, error) {
	fmt.Println("send", job.Message, "due", job.At.Format("15:04"))
	return time.Time{}, nil
}

// A scheduled record runs when the test's clock reaches its time.
func Example() {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	q, _ := memqueue.New(memqueue.Config{Ledger: memstore.NewLedger(nil), Now: func() time.Time { return now }})
	ctx := context.Background()
	_, _ = q.Open(ctx, &record.Message{ID: "m-1", Account: "acme", Kind: "sms", State: record.StateScheduled,
		SendAt: now.Add(time.Hour), CreatedAt: now})

	fmt.Println("ran", q.RunDue(ctx, printWorker{}))
	now = now.Add(time.Hour)
	q.Tick() // a running Run would look again; RunDue reads the clock itself
	fmt.Println("ran", q.RunDue(ctx, printWorker{}))
	// Output:
	// ran 0
	// send m-1 due 11:00
	// ran 1
}
