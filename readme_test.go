package notify_test

// TestREADMESnippetsCompile holds every ```go block of the repository's
// Markdown guides (README.md, docs/*.md, examples/gateway/README.md, any
// other .md file outside testdata and dot directories) to one rule: what
// a reader pastes is what we compile.
//
//   - Each ```go block is a complete Go source file: it starts with a
//     package clause (comments may come first) and imports everything it
//     uses. There are no fragments and no hidden wrapping.
//   - A `package main` block is a program, in a directory of its own.
//     Blocks of any other package name are files of that package: all the
//     blocks of one Markdown file that name it share one directory, in
//     the file's order, so that a provider and its test can be shown as
//     two files. Blocks of different Markdown files never share one.
//   - A block that declares a TestXxx, BenchmarkXxx, FuzzXxx or ExampleXxx
//     function is a _test.go file.
//   - Blocks are gofmt-formatted, as a reader's editor would leave them.
//
// The directories make up a temporary module that requires every module
// of the workspace (go.work: github.com/notifykit/notify, its nested
// library modules, the gateway and the benchmarks), replaced by this
// checkout, with their go.sum files; `go vet ./...` then type-checks and vets every file,
// the test files included, and `go test ./...` runs the blocks' tests and
// examples, so that a test a reader copies passes as shown. Both run
// with GOPROXY=off, GOFLAGS=-mod=mod,
// GOTOOLCHAIN=local and GOWORK=off, so it uses the module cache and never
// the network. Each file is named after the Markdown file and the line
// its block starts on (README_L42.go, docs_extending_L17.go), so a
// compiler error points at the guide. README.md and docs/extending.md
// must hold Go blocks: none found means the extraction is broken.
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
	"io/fs"
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

// markdownFiles returns the Markdown files under root, as paths relative
// to it in walk order, leaving out dot directories and testdata.
// A nested module (examples/gateway) is walked too: its guide's blocks
// compile against this checkout, which is what they import.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// guideSlug names the snippets of a Markdown file: its path without
// ".md", separators as underscores (docs/extending.md: docs_extending).
func guideSlug(rel string) string {
	slug := strings.TrimSuffix(filepath.ToSlash(rel), ".md")
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, slug)
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

// workspaceModules returns the directories go.work uses, relative to
// root ("." for the library): the modules whose packages the guides'
// blocks may import, and whose requirements the workspace's builds
// resolve together.
func workspaceModules(t *testing.T, root string) []string {
	t.Helper()
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	in := false
	for _, line := range strings.Split(string(work), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "use (":
			in = true
		case in && line == ")":
			in = false
		case in && line != "" && !strings.HasPrefix(line, "//"):
			dirs = append(dirs, filepath.Clean(line))
		}
	}
	if len(dirs) == 0 || dirs[0] != "." {
		t.Fatalf("go.work: want a use block whose first directory is . (the library), got %q", dirs)
	}
	return dirs
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
		t.Skip("compiles the Markdown guides' Go blocks with the go command; skipped under -short")
	}
	goCmd := goCommand()
	if goCmd == "" {
		t.Skip("no go command on PATH or in GOROOT")
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	guides := markdownFiles(t, root)
	for _, must := range []string{"README.md", filepath.Join("docs", "extending.md")} {
		if len(readmeGoBlocks(t, filepath.Join(root, must))) == 0 {
			t.Fatalf("%s has no ```go blocks: the extraction is broken", must)
		}
	}

	mod := t.TempDir()
	fset := token.NewFileSet()
	bad := false
	for _, guide := range guides {
		slug := guideSlug(guide)
		for _, b := range readmeGoBlocks(t, filepath.Join(root, guide)) {
			f, err := parser.ParseFile(fset, fmt.Sprintf("%s:%d", guide, b.line), b.src, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s:%d: the ```go block is not a complete Go file (%v); every block must start with a package clause and import what it uses (see readme_test.go)", guide, b.line, err)
				bad = true
				continue
			}
			if formatted, err := format.Source([]byte(b.src)); err == nil && !bytes.Equal(formatted, []byte(b.src)) {
				t.Errorf("%s:%d: the ```go block is not gofmt-formatted", guide, b.line)
			}
			pkg := f.Name.Name
			dir := filepath.Join(mod, slug+"_pkg_"+pkg)
			if pkg == "main" {
				dir = filepath.Join(mod, fmt.Sprintf("%s_main_L%d", slug, b.line))
			}
			name := fmt.Sprintf("%s_L%d", slug, b.line)
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
	}
	if bad {
		t.FailNow()
	}

	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	const self = "github.com/notifykit/notify"
	// The snippets' module requires what every module of the workspace
	// does, so that it selects the versions the workspace's builds
	// select: the ones whose code the module cache holds after the
	// README's test command has built them (GOPROXY is off). Without the
	// gateway's requirements it chose older versions of some of the
	// library's indirect dependencies, which a fresh machine never
	// downloads.
	var requires, replaces strings.Builder
	sums := [][]byte{}
	for _, dir := range workspaceModules(t, root) {
		path := self
		if dir != "." {
			path += "/" + dir
		}
		m, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := os.ReadFile(filepath.Join(root, dir, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
		fmt.Fprintf(&requires, "require %s v0.0.0-00010101000000-000000000000\n\n%s\n", path, requireBlocks(m))
		fmt.Fprintf(&replaces, "replace %s => %s\n", path, filepath.Join(root, dir))
	}
	modFile := fmt.Sprintf("module readmesnippets\n\ngo %s\n\n%s%s", goDirective(t, gomod), requires.String(), replaces.String())
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(modFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), bytes.Join(sums, nil), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	first := readmeGoBlocks(t, filepath.Join(root, "README.md"))[0]
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."},
		{"run", fmt.Sprintf("./README_main_L%d", first.line)}} {
		cmd := exec.CommandContext(ctx, goCmd, args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(),
			"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s of the Markdown guides' Go blocks failed (%v); file <guide>_L<n>.go is the block starting on line n of the guide (README_L42.go: README.md line 42; docs_extending_L17.go: docs/extending.md line 17):\n%s",
				args[0], err, strings.ReplaceAll(string(out), mod+string(filepath.Separator), ""))
		}
		if args[0] == "run" {
			checkFirstProgram(t, filepath.Join(root, "README.md"), first, string(out))
		}
	}
}

// checkFirstProgram holds the README's first program to its promise: at
// most 20 lines, package and imports included, and it prints what the
// README shows under it.
func checkFirstProgram(t *testing.T, readme string, first readmeBlock, out string) {
	t.Helper()
	if n := strings.Count(first.src, "\n"); n > 20 {
		t.Errorf("README.md:%d: the first program is %d lines, over 20", first.line, n)
	}
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(data), first.src)
	after = strings.TrimPrefix(strings.TrimLeft(strings.TrimPrefix(after, "```"), "\n"), "```\n")
	shown, _, ok := strings.Cut(after, "```")
	if !ok || out != shown {
		t.Errorf("README.md:%d: the first program printed\n%s\nwhere the README shows, in a plain block right after it,\n%s", first.line, out, shown)
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
