// Package queued is the queue's side of a Notifier: sends that leave the
// caller's goroutine and go out later, from a worker, in this process or
// another. A Sender, built from a Notifier that has a queue
// (notify.WithQueue), queues a request (Enqueue), queues it inside the
// caller's own database transaction (EnqueueTx, EnqueueTxMany), schedules
// it (SendAt), cancels a queued one (Cancel), sends one with a timed
// fallback to another channel (SendWithFallback), and is the worker a
// queue's Run runs (Work).
//
// Every queued send goes through the Notifier's own pipeline, as Send
// does: validated, checked against the suppression list and the limits,
// priced, charged and recorded before the call returns; only the vendor
// call waits for the worker. Its record and its job are written together,
// so a send is never lost between them, and a job run twice never sends
// twice. The outcome follows the record: read it with
// notify.Notifier.Message, or hear it through a notify.Observer.
//
//	q := memqueue.New(memqueue.Config{Ledger: ledger})
//	n, _ := notify.New(accounts, ledger, notify.WithQueue(q), notify.WithChannel(smsChannel))
//	s := queued.New(n)
//	go q.Run(ctx, s, s.ReconcileTask())
//	receipt, err := s.Enqueue(ctx, req) // StateQueued; the worker sends it
//
// docs/queue.md has the guarantees and the PostgreSQL queue (pgqueue).
package queued
