package memstore

import (
	"slices"

	"github.com/notifykit/notify/record"
)

// recSet maps 64-bit hashes (of a record's ID, or of a key of its) to
// records: the Ledger's record maps and its indexes are made of them. A
// map of integers to one pointer each is smaller than one keyed by
// strings, skips hashing the string again (its hash chose the shard
// already), and gives the collector one pointer to trace per entry. Two
// keys can share a hash, so an entry names a record of its hash, not of
// its key: readers check the record they find (find does, for IDs). Most
// hashes have one record, kept without a slice of its own. It is not
// safe for concurrent use.
type recSet struct {
	first map[uint64]*record.Message
	more  map[uint64][]*record.Message // nil until a hash has a second record
}

// newRecSet returns an empty recSet with room for about n hashes.
func newRecSet(n int) recSet {
	return recSet{first: make(map[uint64]*record.Message, n)}
}

// add adds rec under h, after the records there.
func (g *recSet) add(h uint64, rec *record.Message) {
	if _, ok := g.first[h]; !ok {
		g.first[h] = rec
		return
	}
	if g.more == nil {
		g.more = make(map[uint64][]*record.Message)
	}
	g.more[h] = append(g.more[h], rec)
}

// find returns the record under h whose ID is id, or nil.
func (g *recSet) find(h uint64, id string) *record.Message {
	rec, ok := g.first[h]
	if !ok || rec.ID == id {
		return rec
	}
	for _, rec := range g.more[h] {
		if rec.ID == id {
			return rec
		}
	}
	return nil
}

// appendTo appends the records under h to out, in the order they were
// added.
func (g *recSet) appendTo(out []*record.Message, h uint64) []*record.Message {
	if rec, ok := g.first[h]; ok {
		out = append(append(out, rec), g.more[h]...)
	}
	return out
}

// remove removes rec from under h; the others there keep their order.
func (g *recSet) remove(h uint64, rec *record.Message) {
	more := g.more[h]
	switch {
	case g.first[h] == rec && len(more) == 0:
		delete(g.first, h)
		return
	case g.first[h] == rec:
		g.first[h] = more[0]
		more = more[1:]
	default:
		more = slices.DeleteFunc(more, func(r *record.Message) bool { return r == rec })
	}
	if len(more) == 0 {
		delete(g.more, h)
	} else {
		g.more[h] = more
	}
}

// all calls fn with every record.
func (g *recSet) all(fn func(*record.Message)) {
	for _, rec := range g.first {
		fn(rec)
	}
	for _, recs := range g.more {
		for _, rec := range recs {
			fn(rec)
		}
	}
}

// len returns how many hashes have records.
func (g *recSet) len() int { return len(g.first) }
