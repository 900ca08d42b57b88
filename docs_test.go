package notify_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citation matches references to files a user of the module does not
// have: the specification and design notes the project was built from
// live outside the repository. docs/api.md is the reference users get.
var citation = regexp.MustCompile(`gateway-api\.md|DESIGN\.md|\bspec \d+\.\d+`)

// TestDocsCiteOnlyWhatUsersHave walks every Go and Markdown file of the
// module: doc comments, error texts and guides may point only at files
// that ship with it.
func TestDocsCiteOnlyWhatUsersHave(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) || path == "docs_test.go" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := citation.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, which users do not have", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFirstHourFiles checks what a new user looks for first: a licence,
// an install line and the scope of the library, up front.
func TestFirstHourFiles(t *testing.T) {
	if _, err := os.Stat("LICENSE"); err != nil {
		t.Errorf("no LICENSE: %v", err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	head := string(readme)
	if len(head) > 4000 {
		head = head[:4000]
	}
	for _, want := range []string{"go get github.com/notifykit/notify", "Scope", "any country", "ISO 4217", "DLT", "docs/api.md"} {
		if !strings.Contains(head, want) {
			t.Errorf("the README's first screens lack %q", want)
		}
	}
}

// TestNotifierLivesInNotifyGo: the product's card names notify.go as the
// Notifier's home, and a reader opening it must find the type and New.
func TestNotifierLivesInNotifyGo(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "notify.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				found[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					found[ts.Name.Name] = true
				}
			}
		}
	}
	for _, name := range []string{"Notifier", "New", "Option"} {
		if !found[name] {
			t.Errorf("notify.go does not declare %s", name)
		}
	}
}
