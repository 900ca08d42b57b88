// Package pgqueue is a queue.Queue on PostgreSQL: the durable queued and
// scheduled sends of notify (queued.Sender.Enqueue, SendAt, EnqueueTx) on the
// database of a pgstore.Store, with github.com/riverqueue/river as its
// job queue.
//
// # One transaction
//
// Queue.Open writes the message's record (queued, or scheduled with its
// SendAt) and its debit through pgstore.Store, and the River job that
// delivers it, in one transaction on the pool (shared with concurrent
// Opens: Group commit, below), and commits: the record, its charge and
// its job exist together or not at all. Queue.OpenTx does the same
// inside a pgx.Tx of the caller's, without committing, so that a host's
// own write (an order, a sign-up) and the message it sends commit or
// roll back as one. Queue.OpenTxMany writes many in the caller's pgx.Tx
// (the debits in one statement, the ledger rows, the records and the
// jobs each by one COPY), and Queue.OpenMany does so in a transaction
// of its own, all or none (a queued bulk SMS). A refusal of the store (store.ErrInsufficientFunds,
// store.ErrNotFound, store.ErrInvalid, store.ErrConflict) comes back as
// the store answered it, and nothing is written.
//
// # Group commit
//
// Concurrent Opens share a transaction (Config.GroupCommit, 64 at most):
// an Open that finds none under way is sent at once; those that arrive
// while one is under way go together in the next, their records and
// debits by pgstore.Store.OpenTxMany and their jobs by one insert, one
// commit, where each alone makes five round trips and a commit. Each
// Open still answers only once its own record is durable, with the
// balance right after its own debit. No group waits longer than 100 ms
// for a wallet another transaction holds; a group that fails before its
// commit (that wait, an account that cannot pay, any error) wrote
// nothing and hands each Open back to run in a transaction of its own,
// so one Open never fails or holds its neighbours. An Open whose context
// ends while it waits for its group is withdrawn, nothing written; once
// its group is under way its outcome is unknown, as for a lone commit
// (store.ErrUnavailable). OpenTx, OpenTxMany and OpenMany are never
// grouped.
//
// A job carries only the record's account and message ID (kind
// "notify_send"). It is inserted only in the transaction that writes its
// record, so a record never has two jobs;
// the request to send (record.Message.Payload), which may hold a one-time
// code, stays on the record, and the store drops it when the record
// settles. A scheduled record's job is scheduled at its SendAt. River
// keeps a finished job's row for an hour.
//
// # Running
//
// Queue.Run starts a River client that works the jobs of Config.Queue
// with twice Config.Workers workers and calls the queue.Worker (the
// Notifier) for each. Config.Workers bounds the sends in flight: each job
// holds one of that many send slots (queue.Slots) from its claim to the
// vendor's answer only, so that reading the next records and writing the
// last outcomes overlap the vendor calls. The worker claims the record by
// moving it to attempting, so a job River runs twice sends once. A retry the worker asks for snoozes
// the job until then; an error runs the job again after queue.Backoff of
// its failed runs, up to 10,000 runs. A job whose process died after
// River took it runs again once it has been taken Config.RescueAfter, and
// within River's rescue interval (30 s) after that; RescueAfter is also
// each run's time limit. The queue.Periodic tasks (the
// Notifier's reconciliation, say) are River periodic jobs: River's
// elected leader among the processes sharing the tables enqueues each
// at its interval, so one run happens per interval whatever the number
// of processes, and a task's runs do not overlap.
//
// # Tables
//
// River's tables (river_job, river_leader, river_queue, ...) live next
// to pgstore's, in the schema of pgstore.WithSchema when the Store has one,
// else in the one the connections' search_path finds. Queue.Migrate runs
// River's own migrations (rivermigrate) there, under an advisory lock, so
// processes that start together may all call it; it is idempotent. Call
// it after pgstore.Store.Migrate.
//
// # Connections
//
// Open, OpenTx and Migrate use the pool given to New (or the caller's
// transaction). Queue.Run opens a pool of its own with the same settings,
// up to the same MaxConns, connecting lazily (River's fetches, its job
// bookkeeping, its leader election and one connection held in LISTEN
// use a few), and closes it when it returns. Its one difference is how a
// canceled statement ends: at once, on the connection's deadline, where
// pgstore.Open's pool asks the server to cancel it. River cancels its
// LISTEN connection's wait whenever it listens to another topic, which
// a cancel request does not end; see Queue.Run.
package pgqueue
