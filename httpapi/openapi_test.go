package httpapi

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/prefpage"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/verify"
)

// These tests keep openapi.json in step with the Handler:
//
//   - the routes: every method and path the Handler registers (read from
//     this package's source, so a route added without the document fails)
//     is an operation of the document, and every operation of the document
//     is answered by the Handler with something other than 404 or 405;
//   - the request fields: every JSON field of the struct a POST route
//     decodes its body into is a property of the operation's request
//     schema, and every property is such a field;
//   - the error codes: every code the API can answer (the notify codes and
//     this package's own) is in the ErrorCode enum, and nothing else is.

// wireBodies maps each send route's body shape (sendRoute.body) to the
// struct it decodes the body into. A POST route of a shape missing here
// fails the test: add its wire struct.
var wireBodies = map[string]reflect.Type{
	"sms":   reflect.TypeFor[smsBody](),
	"otp":   reflect.TypeFor[otpBody](),
	"email": reflect.TypeFor[emailBody](),
	"chat":  reflect.TypeFor[chatBody](),
	// The verification routes, by their handlers' names.
	"startVerification":  reflect.TypeFor[verifyStartBody](),
	"checkVerification":  reflect.TypeFor[verifyCheckBody](),
	"resendVerification": reflect.TypeFor[verifyResendBody](),
	// Bulk SMS, by its handler's name.
	"bulkSMS": reflect.TypeFor[bulkBody](),
	// The preference routes, by their handlers' names.
	"lookupPreferences": reflect.TypeFor[preferenceLookupBody](),
	"setPreferences":    reflect.TypeFor[preferenceSetBody](),
	"preferenceLink":    reflect.TypeFor[preferenceLinkBody](),
	// Push (push.go): POST /push by its body shape, the others by their
	// handlers' names.
	"push":           reflect.TypeFor[pushBody](),
	"pushBulk":       reflect.TypeFor[pushBulkBody](),
	"confirmPush":    reflect.TypeFor[pushConfirmBody](),
	"registerDevice": reflect.TypeFor[deviceBody](),
	"lookupDevices":  reflect.TypeFor[deviceLookupBody](),
	"deleteDevice":   reflect.TypeFor[deviceDeleteBody](),
}

// servedRoute is one method and path the Handler registers, with the
// handler method that serves it ("" for a plain function).
type servedRoute struct {
	method, path string // path relative to BasePath
	handler      string
	pos          string
}

// loadOpenAPI parses the embedded document.
func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	return doc
}

// obj returns m[key] as an object, failing the test if it is not one.
func obj(t *testing.T, m map[string]any, key, where string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("openapi.json: %s.%s is not an object", where, key)
	}
	return v
}

// resolve follows a local $ref ("#/components/schemas/X").
func resolve(t *testing.T, doc, v map[string]any) map[string]any {
	t.Helper()
	for i := 0; i < 10; i++ {
		ref, ok := v["$ref"].(string)
		if !ok {
			return v
		}
		cur := doc
		for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = obj(t, cur, seg, ref)
		}
		v = cur
	}
	t.Fatalf("openapi.json: $ref chain too long")
	return nil
}

// sourceFiles parses this package's non-test Go files.
func sourceFiles(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return files
}

// stringConsts returns the package-level string constants of files whose
// values are literals or sums of them.
func stringConsts(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for changed := true; changed; {
		changed = false
		for _, f := range files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						if _, done := consts[name.Name]; done {
							continue
						}
						if s, ok := evalString(vs.Values[i], consts, ""); ok {
							consts[name.Name] = s
							changed = true
						}
					}
				}
			}
		}
	}
	return consts
}

// hole stands for a helper's path parameter in a pattern.
const hole = "\x00"

// evalString evaluates a string expression made of literals, known
// constants, + and, when param is not "", the identifier param (as hole).
func evalString(e ast.Expr, consts map[string]string, param string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		if param != "" && e.Name == param {
			return hole, true
		}
		s, ok := consts[e.Name]
		return s, ok
	case *ast.ParenExpr:
		return evalString(e.X, consts, param)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok := evalString(e.X, consts, param)
		if !ok {
			return "", false
		}
		y, ok := evalString(e.Y, consts, param)
		return x + y, ok
	}
	return "", false
}

// handlerName returns the method name of a route's handler argument:
// h.sendSMS, or the innermost h.x of a wrapper such as h.authed(h.balance).
func handlerName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.CallExpr:
		for _, a := range e.Args {
			if n := handlerName(a); n != "" {
				return n
			}
		}
		return handlerName(e.Fun)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// isRegistration reports whether call is mux.Handle(...) or
// mux.HandleFunc(...).
func isRegistration(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") || len(call.Args) != 2 {
		return false
	}
	// slog.Handler's Handle(ctx, record) registers nothing.
	id, isIdent := call.Args[0].(*ast.Ident)
	return !isIdent || id.Name != "ctx"
}

// servedRoutes reads the routes the Handler registers from this package's
// source: every Handle and HandleFunc call with a method in its pattern,
// and every call of a route helper, a function literal assigned to a name
// that registers patterns built from its first (string) parameter, such
// as routes' post. Patterns without a method (the JSON 405 and 404
// catch-alls) are not routes. A pattern the test cannot evaluate fails it.
func servedRoutes(t *testing.T) []servedRoute {
	t.Helper()
	fset := token.NewFileSet()
	files := sourceFiles(t, fset, ".")
	consts := stringConsts(files)

	// Route helpers: name -> patterns with a hole for the path.
	helpers := map[string][]string{}
	inHelper := map[*ast.CallExpr]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			name, ok := as.Lhs[0].(*ast.Ident)
			lit, ok2 := as.Rhs[0].(*ast.FuncLit)
			if !ok || !ok2 || len(lit.Type.Params.List) == 0 || len(lit.Type.Params.List[0].Names) == 0 {
				return true
			}
			param := lit.Type.Params.List[0].Names[0].Name
			ast.Inspect(lit.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isRegistration(call) {
					return true
				}
				if p, ok := evalString(call.Args[0], consts, param); ok && strings.Contains(p, hole) {
					helpers[name.Name] = append(helpers[name.Name], p)
					inHelper[call] = true
				}
				return true
			})
			return true
		})
	}

	var routes []servedRoute
	add := func(pattern, handler string, pos token.Pos) {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			return // a catch-all for every method: the JSON 405 or 404
		}
		path = strings.TrimSpace(path)
		rel, ok := strings.CutPrefix(path, BasePath)
		if !ok {
			t.Errorf("%s: route %q is outside %s", fset.Position(pos), pattern, BasePath)
			return
		}
		routes = append(routes, servedRoute{method: method, path: rel, handler: handler, pos: fset.Position(pos).String()})
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || inHelper[call] {
				return true
			}
			if isRegistration(call) {
				p, ok := evalString(call.Args[0], consts, "")
				if !ok {
					t.Errorf("%s: the test cannot read this route's pattern; build it from string literals and constants, or teach servedRoutes",
						fset.Position(call.Pos()))
					return true
				}
				add(p, handlerName(call.Args[1]), call.Pos())
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok || helpers[id.Name] == nil || len(call.Args) == 0 {
				return true
			}
			if sel, ok := call.Args[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "path" {
				return true // the send table's loop: its routes are added below
			}
			arg, ok := evalString(call.Args[0], consts, "")
			if !ok {
				t.Errorf("%s: the test cannot read the path of this %s call", fset.Position(call.Pos()), id.Name)
				return true
			}
			handler := ""
			if len(call.Args) > 1 {
				handler = handlerName(call.Args[1])
			}
			for _, p := range helpers[id.Name] {
				add(strings.ReplaceAll(p, hole, arg), handler, call.Pos())
			}
			return true
		})
	}
	for _, rt := range specRoutes() {
		routes = append(routes, servedRoute{method: http.MethodPost, path: rt.path, handler: rt.body, pos: "specRoutes " + rt.path})
	}
	if len(routes) == 0 {
		t.Fatal("found no routes in the package source: the reader is broken")
	}
	return routes
}

func TestOpenAPIIsValidJSON31(t *testing.T) {
	doc := loadOpenAPI(t)
	if v := doc["openapi"]; v != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", v)
	}
	info := obj(t, doc, "info", "")
	if info["title"] == nil || info["version"] == nil {
		t.Error("info needs a title and a version")
	}
	// Every local $ref points at something.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if !strings.HasPrefix(ref, "#/") {
					t.Errorf("$ref %q is not local", ref)
				} else {
					cur := doc
					for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
						next, ok := cur[seg].(map[string]any)
						if !ok {
							t.Errorf("$ref %q points at nothing", ref)
							return
						}
						cur = next
					}
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
}

// TestOpenAPIRoutes checks that the document's operations are the
// Handler's routes, both ways.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	paths := obj(t, doc, "paths", "")

	documented := map[string]bool{} // "GET /balance"
	for path, item := range paths {
		ops, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("paths[%q] is not an object", path)
		}
		for m := range ops {
			switch m {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				documented[strings.ToUpper(m)+" "+path] = true
			}
		}
	}

	served := map[string]bool{}
	for _, r := range servedRoutes(t) {
		key := r.method + " " + r.path
		served[key] = true
		if !documented[key] {
			t.Errorf("%s: the Handler serves %s %s%s, which openapi.json does not document", r.pos, r.method, BasePath, r.path)
		}
	}
	for key := range documented {
		if !served[key] {
			t.Errorf("openapi.json documents %s, which the Handler does not register", key)
		}
	}

	// And by asking a real Handler: every documented operation is routed
	// (without a key: 401 for the authenticated ones, 200 for the rest).
	h := newOpenAPITestHandler(t)
	for key := range documented {
		method, path, _ := strings.Cut(key, " ")
		path = strings.NewReplacer("{", "", "}", "").Replace(path) // a {param} becomes a literal segment
		req := httptest.NewRequest(method, BasePath+path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed {
			t.Errorf("%s %s%s: %d %s, want it routed", method, BasePath, path, rec.Code, rec.Body)
		}
	}
}

// TestOpenAPIRequestFields checks that each POST operation's request
// schema has exactly the JSON fields of the struct its handler decodes.
func TestOpenAPIRequestFields(t *testing.T) {
	doc := loadOpenAPI(t)
	paths := obj(t, doc, "paths", "")
	checked := map[reflect.Type]bool{}
	for _, r := range servedRoutes(t) {
		if r.method != http.MethodPost {
			continue
		}
		typ, ok := wireBodies[r.handler]
		if !ok {
			t.Errorf("%s: POST %s is served by %q, whose body struct the test does not know: add it to wireBodies", r.pos, r.path, r.handler)
			continue
		}
		checked[typ] = true
		item, ok := paths[r.path].(map[string]any)
		if !ok {
			continue // TestOpenAPIRoutes reports it
		}
		op := obj(t, item, "post", r.path)
		body := obj(t, op, "requestBody", r.path+".post")
		content := obj(t, body, "content", r.path+".post.requestBody")
		media := obj(t, content, "application/json", r.path+".post.requestBody.content")
		schema := resolve(t, doc, obj(t, media, "schema", r.path+".post.requestBody.content.application/json"))
		props, _ := schema["properties"].(map[string]any)

		fields := bodyKeys(typ) // the strict decoder's keys, embedded structs' included
		for _, name := range fields {
			if name == "" || name == "-" {
				t.Errorf("%s has a field without a JSON name", typ.Name())
				continue
			}
			if _, ok := props[name]; !ok {
				t.Errorf("POST %s: the Handler decodes %q (%s), which the request schema does not list", r.path, name, typ.Name())
			}
		}
		for name := range props {
			if !slices.Contains(fields, name) {
				t.Errorf("POST %s: the request schema lists %q, which the Handler does not decode (%s)", r.path, name, typ.Name())
			}
		}
		if req, ok := schema["required"].([]any); ok {
			for _, name := range req {
				if _, ok := props[name.(string)]; !ok {
					t.Errorf("POST %s: required %q is not a property", r.path, name)
				}
			}
		}
	}
	for name, typ := range wireBodies {
		if !checked[typ] {
			t.Errorf("wireBodies[%q] (%s) serves no POST route: remove it", name, typ.Name())
		}
	}
}

// TestOpenAPIAddressFormat checks that every e-mail address field (a
// field of email.Request under the mailbox rule) is documented as
// "idn-email" (RFC 6531 addresses: the API takes internationalised ones),
// and that no property claims the ASCII-only "email" format.
func TestOpenAPIAddressFormat(t *testing.T) {
	doc := loadOpenAPI(t)
	paths := obj(t, doc, "paths", "")
	var props map[string]any
	for _, r := range servedRoutes(t) {
		if r.method != http.MethodPost || r.handler != "email" {
			continue
		}
		item, ok := paths[r.path].(map[string]any)
		if !ok {
			continue // TestOpenAPIRoutes reports it
		}
		op := obj(t, item, "post", r.path)
		body := obj(t, op, "requestBody", r.path+".post")
		media := obj(t, obj(t, body, "content", r.path), "application/json", r.path)
		props, _ = resolve(t, doc, obj(t, media, "schema", r.path))["properties"].(map[string]any)
		break
	}
	if props == nil {
		t.Fatal("found no request schema of the e-mail route")
	}
	var addresses []string
	for f := range reflect.TypeFor[email.Request]().Fields() {
		if slices.Contains(strings.Split(f.Tag.Get("validate"), ","), "mailbox") {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			addresses = append(addresses, name)
		}
	}
	if len(addresses) < 2 {
		t.Fatalf("found %d address fields in email.Request (%v): the reader is broken", len(addresses), addresses)
	}
	for _, name := range addresses {
		p, _ := props[name].(map[string]any)
		if p["format"] != "idn-email" {
			t.Errorf("e-mail request property %q has format %v, want idn-email", name, p["format"])
		}
	}
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["format"] == "email" {
				t.Errorf("%s has format email, which allows ASCII addresses only: use idn-email", where)
			}
			for k, e := range v {
				walk(where+"."+k, e)
			}
		case []any:
			for i, e := range v {
				walk(where+"["+strconv.Itoa(i)+"]", e)
			}
		}
	}
	walk("openapi.json", doc)
}

// TestOpenAPIErrorCodes checks that the ErrorCode enum lists the codes
// the API can answer: every notify code and every code of this package.
func TestOpenAPIErrorCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	schemas := obj(t, obj(t, doc, "components", ""), "schemas", "components")
	enum, _ := obj(t, schemas, "ErrorCode", "components.schemas")["enum"].([]any)
	inDoc := map[string]bool{}
	for _, c := range enum {
		inDoc[c.(string)] = true
	}

	fset := token.NewFileSet()
	var codes []string
	for _, dir := range []string{"..", "."} {
		for _, f := range sourceFiles(t, fset, dir) {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					if !isCodeType(vs.Type) {
						continue
					}
					for _, v := range vs.Values {
						if s, ok := evalString(v, nil, ""); ok {
							codes = append(codes, s)
						}
					}
				}
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d error codes in the source (%v): the reader is broken", len(codes), codes)
	}
	sort.Strings(codes)
	for _, c := range codes {
		if !inDoc[c] {
			t.Errorf("error code %q is not in openapi.json's ErrorCode enum", c)
		}
		if c != string(notify.CodeInternal) && StatusOf(notify.Code(c)) == http.StatusInternalServerError {
			t.Errorf("error code %q has no status of its own in StatusOf", c)
		}
	}
	for c := range inDoc {
		if !slices.Contains(codes, c) {
			t.Errorf("openapi.json's ErrorCode enum lists %q, which is no error code", c)
		}
	}
}

// isCodeType reports whether a constant's declared type is notify.Code
// (or Code, in package notify).
func isCodeType(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "Code"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "notify" && e.Sel.Name == "Code"
	}
	return false
}

// TestOpenAPIServed checks GET /api/v1/openapi.json: 200 without a key,
// JSON, and the embedded bytes.
func TestOpenAPIServed(t *testing.T) {
	h := newOpenAPITestHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + BasePath + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET openapi.json: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if resp.Header.Get("X-Request-ID") == "" {
		t.Error("no X-Request-ID")
	}
	want, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) || !bytes.Equal(OpenAPI(), want) {
		t.Error("the served document is not openapi.json")
	}

	// OpenAPI returns a copy: changing it changes nothing served.
	doc := OpenAPI()
	doc[0] = 'x'
	if !bytes.Equal(OpenAPI(), want) {
		t.Error("OpenAPI() does not return a copy")
	}

	req, err := http.NewRequest(http.MethodPost, srv.URL+BasePath+"/openapi.json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" {
		t.Errorf("POST openapi.json: %d, Allow %q; want 405 with Allow", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// newOpenAPITestHandler returns a Handler over a Notifier with one
// account and no channels, and the verification, preference and link routes:
// enough to route.
func newOpenAPITestHandler(t *testing.T) *Handler {
	t.Helper()
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}, "openapi-test-key"); err != nil {
		t.Fatal(err)
	}
	ledger := memstore.NewLedger(nil)
	n, err := notify.New(accounts, ledger)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := verify.New(verify.Config{Notifier: n, Accounts: accounts, Store: memstore.NewVerifications(),
		Secret: []byte("openapi-test-secret-of-at-least-32-bytes")})
	if err != nil {
		t.Fatal(err)
	}
	page, err := prefpage.New(prefpage.Config{Secret: []byte("openapi-test-secret-of-at-least-32-bytes"), Preferences: ledger, Recipients: n})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := push.NewRegistry(memstore.NewPushDevices(), ledger)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(n, accounts, WithVerifications(svc), WithPreferences(ledger), WithPreferenceLinks(page, ""),
		WithPush(PushConfig{Registry: reg, VAPIDPublicKey: "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U"}))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
