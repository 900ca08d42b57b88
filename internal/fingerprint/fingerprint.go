// Package fingerprint writes a request's content into a hash for
// notify.Request.Fingerprint, the one way every request type does it: each
// field length-prefixed, so that no two different field lists hash alike;
// variables in key order; mobile numbers normalised.
package fingerprint

import (
	"hash"
	"maps"
	"slices"
	"strconv"

	"github.com/notifykit/notify/internal/phone"
)

// Fields writes each field length-prefixed.
func Fields(h hash.Hash, fields ...string) {
	var n [8]byte
	for _, f := range fields {
		l := len(f)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(f))
	}
}

// Vars writes variables in key order, preceded by their count.
func Vars(h hash.Hash, v map[string]string) {
	keys := slices.Sorted(maps.Keys(v))
	Fields(h, strconv.Itoa(len(keys)))
	for _, k := range keys {
		Fields(h, k, v[k])
	}
}

// Mobile is a number as a fingerprint sees it: normalised when it is a
// mobile number, as given otherwise (Prepare will refuse it).
func Mobile(s string) string {
	if n, err := phone.Normalize(s); err == nil {
		return n
	}
	return s
}
