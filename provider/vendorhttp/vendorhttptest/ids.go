package vendorhttptest

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// IDs hands out the IDs a fake vendor gives what it accepts (request IDs,
// message SIDs): random, and never the same twice from one IDs. The zero
// value is ready to use; it is safe for concurrent use.
type IDs struct {
	mu   sync.Mutex
	used map[string]bool
}

// New returns a fresh ID: prefix and n random bytes in lower-case hex
// (2n digits), such as New("SM", 16) for a Twilio message SID.
func (ids *IDs) New(prefix string, n int) string {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ids.used == nil {
		ids.used = make(map[string]bool)
	}
	b := make([]byte, n)
	for {
		_, _ = rand.Read(b)
		if id := prefix + hex.EncodeToString(b); !ids.used[id] {
			ids.used[id] = true
			return id
		}
	}
}
