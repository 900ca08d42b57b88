package notify

import "math/rand/v2"

// newMessageID returns a random (version 4) UUID in its 36-character text
// form. The bits come from math/rand/v2's runtime generator, which is
// ChaCha8 seeded from the operating system per thread: unpredictable
// enough for IDs that are shown to their owner anyway, unique with 122
// random bits, and about ten times cheaper than reading crypto/rand on
// every send.
func newMessageID() string {
	var u [16]byte
	a, b := rand.Uint64(), rand.Uint64()
	for i := range 8 {
		u[i] = byte(a >> (8 * i))
		u[8+i] = byte(b >> (8 * i))
	}
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	const hexdigits = "0123456789abcdef"
	var s [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s[j] = '-'
			j++
		}
		s[j], s[j+1] = hexdigits[c>>4], hexdigits[c&0x0f]
		j += 2
	}
	return string(s[:])
}
