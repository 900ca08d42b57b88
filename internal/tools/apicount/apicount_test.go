package main

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestCountFixture(t *testing.T) {
	a, err := count("./testdata/fixture")
	if err != nil {
		t.Fatal(err)
	}
	// Not counted: unexported names, _, struct fields, interface methods,
	// methods of unexported types, a file a build constraint excludes
	// (never.go) and a test file (a_test.go).
	wantNames := []string{"A", "Alias", "C", "F", "G", "G.Get", "G2", "G2.Put", "I", "T", "T.M", "T.N", "V"}
	wantTypes := []string{"Alias", "G", "G2", "I", "T"}
	if !slices.Equal(a.names, wantNames) {
		t.Errorf("names:\n got %q\nwant %q", a.names, wantNames)
	}
	if !slices.Equal(a.types, wantTypes) {
		t.Errorf("types:\n got %q\nwant %q", a.types, wantTypes)
	}
}

// TestCountStandardLibrary holds the rule to the figures it was calibrated
// on, for the Go releases whose standard library was counted.
func TestCountStandardLibrary(t *testing.T) {
	type figures struct{ names, types int }
	known := map[string]map[string]figures{
		"go1.26": {"database/sql": {121, 24}, "log/slog": {136, 15}},
		"go1.27": {"database/sql": {122, 24}, "log/slog": {136, 15}}, // + sql.ConvertAssign
	}
	release := runtime.Version()
	if i := strings.Index(release[len("go1."):], "."); i >= 0 {
		release = release[:len("go1.")+i]
	}
	want, ok := known[release]
	if !ok {
		t.Skipf("no figures for %s's standard library", runtime.Version())
	}
	for pkg, w := range want {
		a, err := count(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.names) != w.names || len(a.types) != w.types {
			t.Errorf("%s: %d names, %d types; want %d, %d", pkg, len(a.names), len(a.types), w.names, w.types)
		}
	}
}
