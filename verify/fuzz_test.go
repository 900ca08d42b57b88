package verify

import (
	"testing"
)

// FuzzCheck checks that the only code whose hash matches a verification's
// is the code derived for it, whatever the input, and that a code's hash
// matches no other verification, recipient or purpose.
func FuzzCheck(f *testing.F) {
	k := keyed{secret: []byte("fuzz-secret-fuzz-secret-fuzz-secret-32")}
	f.Add("482913", "7c9e6679-7425-40de-944b-e07fc1f90ae7", "+919876543210", "login", 6)
	f.Add("", "", "", "", 4)
	f.Add("0000000000", "id", "a@example.com", "", 10)
	f.Add("48291\x00", "id\x00x", "+91", "lo\x00gin", 6)
	f.Fuzz(func(t *testing.T, guess, id, to, purpose string, length int) {
		length = MinLength + abs(length)%(MaxLength-MinLength+1)
		code := k.code(id, to, purpose, length)
		if !digits(code, length) {
			t.Fatalf("code %q is not %d digits", code, length)
		}
		hash := k.hash(id, to, purpose, code)
		if got, want := k.matches(id, to, purpose, guess, hash), guess == code; got != want {
			t.Fatalf("guess %q against code %q: matches %v", guess, code, got)
		}
		if !k.matches(id, to, purpose, code, hash) {
			t.Fatal("the code does not match its own hash")
		}
		// Moving one byte between the bound fields makes another hash.
		if id != "" && k.matches(id[1:], id[:1]+to, purpose, code, hash) {
			t.Fatal("the hash does not bind the verification and the recipient apart")
		}
		if k.matches(id, to, purpose+"x", code, hash) {
			t.Fatal("the hash does not bind the purpose")
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // the most negative int
			return 0
		}
		return -n
	}
	return n
}
