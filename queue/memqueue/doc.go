// Package memqueue is an in-memory queue.Queue, for development and
// tests: jobs wait in a heap ordered by when they are due, on a clock the
// tests may control (Config.Now, Queue.Tick), and Queue.RunDue runs the
// due ones in the caller's goroutine, so that a test needs no goroutine
// and no waiting to see a scheduled send go.
//
// It keeps the contract's semantics but for durability: its jobs live as
// long as the process, so a crash loses the queued sends (their records,
// in a memstore.Ledger, go with them). Transactions (Begin, Tx) hold their
// records until Commit opens them; a Rollback drops them, with nothing
// charged or sent.
package memqueue
