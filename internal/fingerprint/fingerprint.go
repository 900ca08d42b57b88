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

	"github.com/notifykit/notify/phone"
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

// Optional writes a field that requests gained later (category, locale)
// by name, only when it is set: a request without it keeps the
// fingerprint it had before the field existed, so an idempotency key kept
// across the upgrade still matches it. Request types write these last.
func Optional(h hash.Hash, name, value string) {
	if value != "" {
		Fields(h, name, value)
	}
}

// Mobile is a number as a fingerprint sees it: its digits in
// international form without the plus ("919876543210") for an Indian
// mobile number in any of its spellings, else its digits as given, so
// that "+1 415 555 0100" and "14155550100" agree. Prepare refuses what
// is not a number.
func Mobile(s string) string {
	if n, err := phone.Parse(s, phone.DefaultRegion, nil); err == nil {
		return n.E164[1:]
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return s // not a number at all: as given
	}
	return string(b)
}
