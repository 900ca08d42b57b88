package notify

import (
	"testing"

	"github.com/google/uuid"
)

func TestNewMessageID(t *testing.T) {
	seen := make(map[string]bool, 1000)
	for range 1000 {
		id := newMessageID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("%q: %v (version %d, variant %v)", id, err, u.Version(), u.Variant())
		}
		if seen[id] {
			t.Fatalf("duplicate ID %q", id)
		}
		seen[id] = true
	}
}
