// Command apicount prints how many exported names and exported types a
// package declares: the size of the API a reader has to learn.
//
//	go run ./internal/tools/apicount .             # this repository's root package
//	go run ./internal/tools/apicount ./metrics     # any package directory
//	go run ./internal/tools/apicount database/sql  # or a standard-library package
//	go run ./internal/tools/apicount -v .          # and list what it counted
//
// It prints one line per argument, such as ". exports 121 names, 24 types".
//
// The rule, from the package's non-test files that build on this machine
// (go/build's build constraints for the host's GOOS, GOARCH and tags):
//
//   - names: every exported top-level const, var, func and type (aliases
//     included), plus every exported method of an exported type;
//   - types: the exported top-level types alone.
//
// Struct fields and interface methods are not counted: they belong to the
// type that declares them. The rule reproduces the figures issue 27
// quotes: database/sql 121 names, 24 types and log/slog 136 names, 15
// types with go1.26's standard library (go1.27 adds sql.ConvertAssign:
// 122 names), and 198 names, 71 types for this repository's root package
// before RetryPolicy.Longest.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
)

// api is what a package exports.
type api struct {
	names []string // "Open", "DB", "DB.Close", ...
	types []string // "DB", "Tx", ...
}

func main() {
	verbose := flag.Bool("v", false, "list each counted name")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: apicount [-v] package-dir-or-import-path...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	for _, arg := range flag.Args() {
		a, err := count(arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "apicount: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("%s exports %d names, %d types\n", arg, len(a.names), len(a.types))
		if *verbose {
			for _, n := range a.names {
				fmt.Printf("\t%s\n", n)
			}
		}
	}
}

// load finds the package that arg names: a directory when it is a
// relative path ("." or "./x", "../x") or an absolute one, otherwise an
// import path resolved from the current directory (a standard-library
// package, or one of the module there).
func load(arg string) (*build.Package, error) {
	if build.IsLocalImport(arg) || filepath.IsAbs(arg) {
		return build.ImportDir(arg, 0)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return build.Import(arg, wd, 0)
}

// count applies the rule in the package comment to the package arg.
func count(arg string) (api, error) {
	p, err := load(arg)
	if err != nil {
		return api{}, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range append(slices.Clone(p.GoFiles), p.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return api{}, err
		}
		files = append(files, f)
	}
	return exports(files), nil
}

// exports counts the exported API that files, one package, declares.
func exports(files []*ast.File) api {
	var a api
	exportedType := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				a.addSpecs(g.Specs, exportedType)
			}
		}
	}
	// Methods once every type is known: a method may come before its
	// type, or in another file.
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok {
				a.addFunc(fn, exportedType)
			}
		}
	}
	slices.Sort(a.names)
	slices.Sort(a.types)
	return a
}

// addSpecs counts the exported names of one const, var or type
// declaration: a type is a name and a type, and is noted in
// exportedType so that its methods count; each const or var is a name.
func (a *api) addSpecs(specs []ast.Spec, exportedType map[string]bool) {
	for _, s := range specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			if s.Name.IsExported() {
				exportedType[s.Name.Name] = true
				a.types = append(a.types, s.Name.Name)
				a.names = append(a.names, s.Name.Name)
			}
		case *ast.ValueSpec: // const or var
			for _, n := range s.Names {
				if n.IsExported() {
					a.names = append(a.names, n.Name)
				}
			}
		}
	}
}

// addFunc counts fn when it is exported: a function by its name, a method
// as Type.Method when its receiver is an exported type (one of
// exportedType, complete by now); a method of an unexported type is not
// part of the API a reader learns by name.
func (a *api) addFunc(fn *ast.FuncDecl, exportedType map[string]bool) {
	if !fn.Name.IsExported() {
		return
	}
	if fn.Recv == nil {
		a.names = append(a.names, fn.Name.Name)
		return
	}
	if recv := receiverType(fn.Recv); exportedType[recv] {
		a.names = append(a.names, recv+"."+fn.Name.Name)
	}
}

// receiverType returns the name of a method's receiver type: T for T,
// *T, T[K] and *T[K, V].
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
