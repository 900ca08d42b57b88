// Package queue is the contract between a notify.Notifier and a durable
// queue of sends, as database/sql/driver is between database/sql and a
// driver: the Notifier's queue side (package queued: Enqueue, SendAt,
// EnqueueTx, ...) opens a message's record through a Queue, together with
// a job that delivers it, and a worker (the queued.Sender) runs the job
// when it is due.
//
// Two implementations pass one conformance suite (queue/queuetest):
// queue/memqueue, in memory, for development and tests, with a clock the
// tests control; and pgstore/pgqueue, on PostgreSQL through
// github.com/riverqueue/river, whose jobs are written in the same
// transaction as the record and its debit, and may join the caller's own.
//
// The queue delivers a job at least once; the record makes that safe. A
// worker claims a record by moving it from queued or scheduled to
// attempting (record.CanMove), which one worker wins; a job that finds its
// record anywhere else has nothing left to do. So a job run twice, after a
// crash or a lost acknowledgement, never sends twice, and a job whose
// worker died mid-send leaves an attempting record that the reconciler
// settles as any other (unknown, charged).
//
// The package imports only the standard library, package record and
// package store, so
// that the root package, which calls it, and the queues, which implement
// it, need not import each other.
package queue
