package memstore

import "math"

// refTable remembers the refs of one wallet shard: a log of entries in the
// order they were applied, the ref bytes in an arena, and an
// open-addressing index of 8-byte slots. Against a map[string]record it is
// kinder to the cache and to the garbage collector: a probe touches one
// small slot, the index grows without reading a single ref, the log and
// the arena are written sequentially, nothing in them is a pointer for the
// collector to trace, and reset lets a retention-bounded wallet reuse a
// table without allocating. It is not safe for concurrent use; the
// shard's mutex guards it.
type refTable struct {
	// slots holds, per used slot, the top 32 bits of the ref's hash and
	// the entry's log position plus one, so 0 means empty. The home slot
	// is given by the hash's top bits too, so grow works from slots alone.
	slots []uint64
	shift uint // 64 - log2(len(slots))
	n     int  // entries in use
	// log holds the entries: chunk 0 grows up to logChunk entries, the
	// others have exactly logChunk. Chunks stay allocated across reset.
	log [][]refEntry
	// arena holds the ref bytes; ac is the chunk being filled.
	arena [][]byte
	ac    int
}

// refEntry is one recorded debit (amount < 0) or credit. It holds no
// pointers: the ref's bytes are arena[refAt>>32][uint32(refAt):][:refLen].
type refEntry struct {
	amount int64
	after  int64
	seq    uint64
	refAt  uint64
	refLen uint32
}

const (
	minSlots   = 16
	logChunk   = 256
	arenaChunk = 16 << 10
)

// newRefTable returns a table sized for about n refs before its index
// grows.
func newRefTable(n int) *refTable {
	t := &refTable{}
	t.sizeIndex(n)
	return t
}

func (t *refTable) sizeIndex(n int) {
	size, shift := minSlots, uint(64-4)
	for size < 2*n {
		size, shift = size<<1, shift-1
	}
	t.slots, t.shift = make([]uint64, size), shift
}

// reset empties t for reuse, keeping its memory.
func (t *refTable) reset() {
	clear(t.slots)
	t.n = 0
	for i := range t.arena {
		t.arena[i] = t.arena[i][:0]
	}
	t.ac = 0
}

func (t *refTable) entry(pos uint32) *refEntry {
	return &t.log[pos/logChunk][pos%logChunk]
}

func (t *refTable) ref(e *refEntry) []byte {
	return t.arena[e.refAt>>32][uint32(e.refAt):][:e.refLen]
}

// find returns the entry of ref, whose hash is h, or nil and the slot
// where it belongs.
func (t *refTable) find(h uint64, ref string) (*refEntry, int) {
	mask := uint64(len(t.slots) - 1)
	fp := h >> 32
	for i := h >> t.shift; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return nil, int(i)
		}
		if s>>32 == fp {
			if e := t.entry(uint32(s) - 1); string(t.ref(e)) == ref {
				return e, int(i)
			}
		}
	}
}

// full reports whether the table cannot take another entry: positions
// are 32 bits wide. (That is some 160 GiB of entries in one shard.)
func (t *refTable) full() bool { return t.n >= math.MaxUint32-1 }

// add records e for ref at slot, which find returned for ref and hash h.
func (t *refTable) add(h uint64, slot int, ref string, e refEntry) {
	e.refAt, e.refLen = t.store(ref), uint32(len(ref))
	pos := t.n
	c := pos / logChunk
	switch {
	case c == len(t.log):
		size := logChunk
		if c == 0 {
			size = minSlots
		}
		t.log = append(t.log, make([]refEntry, size))
	case c == 0 && pos == len(t.log[0]):
		grown := make([]refEntry, min(2*pos, logChunk))
		copy(grown, t.log[0])
		t.log[0] = grown
	}
	t.log[c][pos%logChunk] = e
	t.n++
	t.slots[slot] = h>>32<<32 | uint64(pos+1)
	if 2*t.n > len(t.slots) {
		t.grow()
	}
}

// store copies ref into the arena and returns its address. Chunk 0 grows
// by appending up to arenaChunk bytes; later chunks are allocated at
// arenaChunk bytes, or at the ref's length for a longer ref.
func (t *refTable) store(ref string) uint64 {
	for {
		if t.ac == len(t.arena) {
			size := arenaChunk
			if t.ac == 0 {
				size = 256
			}
			t.arena = append(t.arena, make([]byte, 0, max(size, len(ref))))
		}
		c := &t.arena[t.ac]
		limit := cap(*c)
		if t.ac == 0 {
			limit = max(limit, arenaChunk)
		}
		if len(*c)+len(ref) <= limit {
			off := len(*c)
			*c = append(*c, ref...)
			return uint64(t.ac)<<32 | uint64(off)
		}
		t.ac++
	}
}

// grow doubles the index. Each slot carries its hash's top bits, which are
// also its home, so nothing but the slots is read.
func (t *refTable) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	t.shift--
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := s >> t.shift
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// each calls fn for every entry and its ref, in log order.
func (t *refTable) each(fn func(e *refEntry, ref string)) {
	for pos := 0; pos < t.n; pos++ {
		e := t.entry(uint32(pos))
		fn(e, string(t.ref(e)))
	}
}
