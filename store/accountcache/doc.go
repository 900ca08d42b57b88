// Package accountcache keeps the accounts a store.Accounts finds for a
// short while, so that a Notifier over a database store reads an account
// once per TTL rather than once per send.
//
// A send reads its account first (is it disabled? its channels'
// settings); on PostgreSQL that read is one of a send's three round trips.
// With a Cache in front, a change to an account (disabled, new settings)
// reaches sends within the TTL (one second unless told otherwise) instead
// of at once; money is not affected, since the ledger checks every charge
// against the wallet itself. API keys are not cached: a revoked key stops
// working at once.
//
// Wire it where the store is wired:
//
//	accounts, err := accountcache.New(pg, accountcache.WithTTL(time.Second))
//	n, err := notify.New(accounts, pg, notify.WithChannel(ch))
package accountcache
