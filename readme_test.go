package notify_test

// TestREADMESnippetsCompile holds every ```go block of README.md to one
// rule: what a reader pastes is what we compile.
//
//   - Each ```go block is a complete Go source file: it starts with a
//     package clause (comments may come first) and imports everything it
//     uses. There are no fragments and no hidden wrapping.
//   - A `package main` block is a program, in a directory of its own.
//     Blocks of any other package name are files of that package: all the
//     blocks that name it share one directory, in README order, so that a
//     provider and its test can be shown as two files.
//   - A block that declares a TestXxx, BenchmarkXxx, FuzzXxx or ExampleXxx
//     function is a _test.go file.
//   - Blocks are gofmt-formatted, as a reader's editor would leave them.
//
// The directories make up a temporary module that requires
// github.com/notifykit/notify, replaced by this checkout, with the
// checkout's go.sum; `go vet ./...` then type-checks and vets every file,
// the test files included. It runs with GOPROXY=off, GOFLAGS=-mod=mod,
// GOTOOLCHAIN=local and GOWORK=off, so it uses the module cache and never
// the network. Each file is named after the README line its block starts
// on (readme_L42.go), so a compiler error points at the README.
//
// The test is skipped under -short and when no go command is found.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// readmeBlock is one ```go block of README.md.
type readmeBlock struct {
	line int // line of the block's first line of code
	src  string
}

// readmeGoBlocks returns the ```go blocks of a Markdown file.
func readmeGoBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks []readmeBlock
		cur    *readmeBlock
		fence  string
		buf    strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && fence == "" && strings.HasPrefix(trimmed, "```"):
			fence = "```"
			lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			if lang == "go" || lang == "golang" {
				cur = &readmeBlock{line: n + 1}
				buf.Reset()
			}
		case fence != "" && trimmed == fence:
			if cur != nil {
				cur.src = buf.String()
				blocks = append(blocks, *cur)
				cur = nil
			}
			fence = ""
		case cur != nil:
			buf.WriteString(line)
			buf.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: the ```go block is never closed", path, cur.line-1)
	}
	return blocks
}

// goCommand returns the go command that builds this test, or "".
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	//lint:ignore SA1019 the fallback for a PATH without go; go test sets up GOROOT.
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if runtime.GOOS == "windows" {
		p += ".exe"
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// goDirective returns the go version of a go.mod file.
func goDirective(t *testing.T, gomod []byte) string {
	t.Helper()
	for _, line := range strings.Split(string(gomod), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod has no go directive")
	return ""
}

// requireBlocks returns the require directives of a go.mod, as written.
func requireBlocks(gomod []byte) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(gomod), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "require ("):
			in = true
		case in && trimmed == ")":
			in = false
			b.WriteString(line + "\n")
			continue
		case !in && !strings.HasPrefix(trimmed, "require "):
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func TestREADMESnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles README.md's Go blocks with the go command; skipped under -short")
	}
	goCmd := goCommand()
	if goCmd == "" {
		t.Skip("no go command on PATH or in GOROOT")
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeGoBlocks(t, filepath.Join(root, "README.md"))
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```go blocks: the extraction is broken")
	}

	mod := t.TempDir()
	fset := token.NewFileSet()
	bad := false
	for _, b := range blocks {
		f, err := parser.ParseFile(fset, fmt.Sprintf("README.md:%d", b.line), b.src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("README.md:%d: the ```go block is not a complete Go file (%v); every block must start with a package clause and import what it uses (see readme_test.go)", b.line, err)
			bad = true
			continue
		}
		if formatted, err := format.Source([]byte(b.src)); err == nil && !bytes.Equal(formatted, []byte(b.src)) {
			t.Errorf("README.md:%d: the ```go block is not gofmt-formatted", b.line)
		}
		pkg := f.Name.Name
		dir := filepath.Join(mod, "pkg_"+pkg)
		if pkg == "main" {
			dir = filepath.Join(mod, fmt.Sprintf("main_L%d", b.line))
		}
		name := fmt.Sprintf("readme_L%d", b.line)
		if declaresTests(f) {
			name += "_test"
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".go"), []byte(b.src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if bad {
		t.FailNow()
	}

	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	const self = "github.com/notifykit/notify"
	// The snippets' module requires what notify's does, so that its
	// module graph is notify's, pruned as notify's is: the go command
	// then needs no go.mod beyond those notify's own build reads, which
	// the module cache holds after any build (GOPROXY is off).
	modFile := fmt.Sprintf("module readmesnippets\n\ngo %s\n\nrequire %s v0.0.0-00010101000000-000000000000\n\n%s\nreplace %s => %s\n",
		goDirective(t, gomod), self, requireBlocks(gomod), self, root)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(modFile), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(),
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go vet of README.md's Go blocks failed (%v); file readme_L<n>.go is the block starting on README.md line n:\n%s",
			err, strings.ReplaceAll(string(out), mod+string(filepath.Separator), ""))
	}
}

// declaresTests reports whether f declares a function that only a
// _test.go file may: TestXxx, BenchmarkXxx, FuzzXxx or ExampleXxx.
func declaresTests(f *ast.File) bool {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		for _, prefix := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
			if strings.HasPrefix(fn.Name.Name, prefix) {
				return true
			}
		}
	}
	return false
}
