package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
)

// The labels that keep the two uses of the secret apart: the code a
// verification sends and the hash a store keeps are different HMACs.
const (
	codeLabel  = "notify/verify/code/v1"
	checkLabel = "notify/verify/check/v1"
)

// keyed is the server secret, ready to derive codes and their hashes.
type keyed struct{ secret []byte }

// mac returns the HMAC-SHA256 of the label and parts, each part after
// its length, so that no two lists of parts run together alike.
func (k keyed) mac(label string, parts ...string) []byte {
	m := hmac.New(sha256.New, k.secret)
	var n [8]byte
	for _, p := range append([]string{label}, parts...) {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		m.Write(n[:])
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// code derives the code of the verification id, to and purpose, length
// digits long. It is the same every time, so a resend sends the code of
// the first send without keeping it anywhere; without the secret it
// cannot be told from a random one. Reducing 64 bits modulo 10^length
// (at most 10^10) biases no digit by more than 10^10/2^64, about 5e-10.
func (k keyed) code(id, to, purpose string, length int) string {
	sum := k.mac(codeLabel, id, to, purpose)
	mod := uint64(1)
	for range length {
		mod *= 10
	}
	n := binary.BigEndian.Uint64(sum[:8]) % mod
	s := strconv.FormatUint(n, 10)
	return strings.Repeat("0", length-len(s)) + s
}

// hash returns what a store keeps of code: an HMAC bound to the
// verification, its recipient and its purpose, so that a copy of the
// database reveals no code and a hash is good for no other verification.
func (k keyed) hash(id, to, purpose, code string) []byte {
	return k.mac(checkLabel, id, to, purpose, code)
}

// matches reports, in time that does not depend on where they differ,
// whether code is the one whose hash is want.
func (k keyed) matches(id, to, purpose, code string, want []byte) bool {
	return hmac.Equal(k.hash(id, to, purpose, code), want)
}

// digits reports whether s is length ASCII digits.
func digits(s string, length int) bool {
	if len(s) != length {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
