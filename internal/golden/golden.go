// Package golden compares what a test produced with a file under its
// testdata, for the tests of the providers' wire formats. Run the tests
// with -update to rewrite the files after a deliberate change.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of the test binaries that import golden.
var update = flag.Bool("update", false, "rewrite the golden files from what the tests produce now")

// Check reports whether got equals the file at path, failing t with both
// when it does not. With -update it writes got to path first (creating
// its directory), so the check passes.
func Check(t testing.TB, path string, got []byte) bool {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
		return false
	}
	return true
}
