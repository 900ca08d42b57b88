package memstore

import (
	"hash/maphash"
	"slices"
	"sync"
)

// msgIndex maps keys (an idempotency key, a provider's message ID) to
// message IDs in the order they were added, over independently locked
// shards, so that concurrent sends seldom wait for each other on it.
type msgIndex[K comparable] struct {
	seed   maphash.Seed
	shards [messageShards]indexShard[K]
}

type indexShard[K comparable] struct {
	mu  sync.Mutex
	ids map[K][]string
}

func newMsgIndex[K comparable]() *msgIndex[K] {
	x := &msgIndex[K]{seed: maphash.MakeSeed()}
	for i := range x.shards {
		x.shards[i].ids = make(map[K][]string)
	}
	return x
}

func (x *msgIndex[K]) shard(k K) *indexShard[K] {
	return &x.shards[maphash.Comparable(x.seed, k)&(messageShards-1)]
}

func (x *msgIndex[K]) add(k K, id string) {
	sh := x.shard(k)
	sh.mu.Lock()
	sh.ids[k] = append(sh.ids[k], id)
	sh.mu.Unlock()
}

// get returns a copy of k's IDs.
func (x *msgIndex[K]) get(k K) []string {
	sh := x.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return slices.Clone(sh.ids[k])
}

func (x *msgIndex[K]) drop(k K, id string) {
	sh := x.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ids := slices.DeleteFunc(sh.ids[k], func(x string) bool { return x == id })
	if len(ids) == 0 {
		delete(sh.ids, k)
		return
	}
	sh.ids[k] = ids
}
