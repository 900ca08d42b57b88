package memstore

import (
	"hash/maphash"
	"slices"
	"sync"
)

// msgIndex maps keys (an idempotency key, a provider's message ID) to
// message IDs in the order they were added, over independently locked
// shards, so that concurrent sends seldom wait for each other on it.
// Most keys name one message, which is kept without a slice of its own.
type msgIndex[K comparable] struct {
	seed   maphash.Seed
	hash   func(maphash.Seed, K) uint64
	shards [messageShards]indexShard[K]
}

type indexShard[K comparable] struct {
	mu      sync.Mutex
	ids     map[K]idList
	deletes int // since ids was built (see churned)
}

// idList is one key's message IDs: first, then more.
type idList struct {
	first string
	more  []string
}

func newMsgIndex[K comparable](hash func(maphash.Seed, K) uint64) *msgIndex[K] {
	x := &msgIndex[K]{seed: maphash.MakeSeed(), hash: hash}
	for i := range x.shards {
		x.shards[i].ids = make(map[K]idList)
	}
	return x
}

func (x *msgIndex[K]) shard(k K) *indexShard[K] {
	return &x.shards[x.hash(x.seed, k)&(messageShards-1)]
}

func (x *msgIndex[K]) add(k K, id string) {
	sh := x.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l, ok := sh.ids[k]
	if !ok {
		sh.ids[k] = idList{first: id}
		return
	}
	l.more = append(l.more, id)
	sh.ids[k] = l
}

// get returns k's IDs, in the order they were added.
func (x *msgIndex[K]) get(k K) []string {
	sh := x.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l, ok := sh.ids[k]
	if !ok {
		return nil
	}
	return append([]string{l.first}, l.more...)
}

func (x *msgIndex[K]) drop(k K, id string) {
	sh := x.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l, ok := sh.ids[k]
	if !ok {
		return
	}
	if len(l.more) == 0 { // most keys name one message: no copy to make
		if l.first == id {
			sh.delete(k)
		}
		return
	}
	ids := slices.DeleteFunc(append([]string{l.first}, l.more...), func(x string) bool { return x == id })
	if len(ids) == 0 {
		sh.delete(k)
		return
	}
	sh.ids[k] = idList{first: ids[0], more: ids[1:]}
}

// delete removes k, rebuilding the map when its churn calls for it.
// Called with sh.mu held.
func (sh *indexShard[K]) delete(k K) {
	delete(sh.ids, k)
	if sh.deletes++; churned(sh.deletes, len(sh.ids)) {
		sh.ids, sh.deletes = rebuilt(sh.ids), 0
	}
}
