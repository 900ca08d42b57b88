package memstore

import (
	"hash/maphash"
	"sync"

	"github.com/notifykit/notify/record"
)

// msgIndex finds records by a key of theirs (a provider's message ID; an
// account and an idempotency key), over independently locked shards, so
// that concurrent sends seldom wait for each other on it.
//
// It maps the key's 64-bit hash to the records themselves (a recSet),
// not the key to their IDs: every send writes an entry, and tens of
// thousands of them are kept, so they are best small and with few
// pointers for the collector to trace (see recSet). An entry can thus
// name a record of another key with the same hash, or of a key the
// record has since changed: lookups check each record against the key,
// under the record's lock (see Ledger.indexed).
//
// Its entries live in the generations of the Ledger's records (see
// Ledger): an entry is written into the current generation, and the
// Ledger turns every shard of it with its own (turn), carrying the
// entries of the open records into the new current generation (carry), so
// that an entry is never forgotten before its record. Nothing is deleted
// from it one entry at a time but by carry, so its maps see no churn.
type msgIndex struct {
	seed   maphash.Seed
	shards [messageShards]indexShard
	// sizes holds, per shard, how many hashes the generation that last
	// turned held, the size fresh makes the next one's map. The Ledger's
	// turnMu guards it, as it does the Ledger's own (see Ledger.turn).
	sizes [messageShards]int
}

type indexShard struct {
	mu  sync.Mutex
	cur recSet
	old recSet // the previous generation; empty before the first turn
}

func newMsgIndex() *msgIndex {
	x := &msgIndex{seed: maphash.MakeSeed()}
	for i := range x.shards {
		x.shards[i].cur = newRecSet(0)
	}
	return x
}

// hash returns the hash of a key of one string.
func (x *msgIndex) hash(k string) uint64 { return maphash.String(x.seed, k) }

// hash2 returns the hash of a key of two strings, a and b.
func (x *msgIndex) hash2(a, b string) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	h.WriteString(a)
	h.WriteByte(0) // ("ab", "c") is not ("a", "bc")
	h.WriteString(b)
	return h.Sum64()
}

func (x *msgIndex) shard(h uint64) *indexShard {
	return &x.shards[h&(messageShards-1)]
}

// add adds rec under h, in the current generation.
func (x *msgIndex) add(h uint64, rec *record.Message) {
	sh := x.shard(h)
	sh.mu.Lock()
	sh.cur.add(h, rec)
	sh.mu.Unlock()
}

// get returns the records under h: those of the previous generation in
// the order they were added, then those of the current one. The caller
// checks them against its key.
func (x *msgIndex) get(h uint64) []*record.Message {
	sh := x.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.cur.appendTo(sh.old.appendTo(nil, h), h)
}

// fresh returns the sets of a new generation, sized like the last.
func (x *msgIndex) fresh() [messageShards]recSet {
	var next [messageShards]recSet
	for i := range next {
		next[i] = newRecSet(x.sizes[i])
	}
	return next
}

// turn forgets the previous generation and makes next, from fresh, the
// current one. The Ledger calls it with every shard of its records
// locked, so no entry is added meanwhile; each of the index's shards
// turns under its own lock, so a reader sees an entry in the one
// generation or the other.
func (x *msgIndex) turn(next *[messageShards]recSet) {
	for i := range x.shards {
		sh := &x.shards[i]
		sh.mu.Lock()
		x.sizes[i] = sh.cur.len()
		sh.old, sh.cur = sh.cur, next[i]
		sh.mu.Unlock()
	}
}

// carry moves rec under h from the previous generation into the current
// one, for a record turn carries. Other records under h stay where they
// are.
func (x *msgIndex) carry(h uint64, rec *record.Message) {
	sh := x.shard(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.old.remove(h, rec)
	sh.cur.add(h, rec)
}
