// Package queuetest is the conformance suite of queue.Queue: a queue
// implementation passes Run, from a short conformance_test.go, as
// queue/memqueue and pgstore/pgqueue do.
//
// The suite opens records through the queue and runs them with a worker
// that claims each record as notify.Notifier does (a move from queued or
// scheduled to attempting), so it checks what the Notifier relies on:
// a record and its job are written together or not at all, inside the
// caller's transaction too; a scheduled job does not run before its time;
// a retry and a failed run run again; every job runs, and no record is
// claimed twice; periodic tasks run; Run stops with its context; and,
// OpenMany writes all of its records or none (a queue that cannot
// answers queue.ErrNoBatch, writing nothing).
package queuetest
