package template

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
)

// stockFS holds the stock catalogue: one <slug>.tmpl file per template,
// one <slug>.<tag>.tmpl file per variant of it, and the HTML layouts every
// stock e-mail is wrapped in (layout.html for the bases,
// layout.<language>.html for the variants in that language). It is
// read-only.
//
//go:embed catalogue/*.tmpl catalogue/layout*.html
var stockFS embed.FS

// stockLocale is the language the catalogue's bases are written in.
const stockLocale = "en"

// layoutMarker is where a stock template's email.html goes in the layout.
const layoutMarker = "<!-- BODY -->"

// sections lists the sections of a catalogue file, each holding one body.
func sections() [5]string {
	return [...]string{"chat", "sms", "email.subject", "email.html", "email.text"}
}

// sectionPart returns the kind, part and form of a section's body.
func sectionPart(name string) (kind notify.Kind, part string, form bodyForm, ok bool) {
	switch name {
	case "chat":
		return chat.Kind, partText, formText, true
	case "sms":
		return sms.Kind, partText, formText, true
	case "email.subject":
		return email.Kind, partSubject, formSubject, true
	case "email.html":
		return email.Kind, partHTML, formHTML, true
	case "email.text":
		return email.Kind, partText, formText, true
	}
	return "", "", 0, false
}

// loadStock parses and compiles every template of the catalogue in fsys,
// with its variants, returning them by slug and the sorted slugs.
func loadStock(fsys fs.FS) (map[string]*tmpl, []string, error) {
	layout, err := readLayout(fsys, "catalogue/layout.html")
	if err != nil {
		return nil, nil, err
	}
	files, err := fs.Glob(fsys, "catalogue/*.tmpl")
	if err != nil {
		return nil, nil, fmt.Errorf("template: catalogue: %w", err)
	}
	stock := make(map[string]*tmpl, len(files))
	slugs := make([]string, 0, len(files))
	var variants []string
	for _, f := range files {
		slug := strings.TrimSuffix(path.Base(f), ".tmpl")
		if strings.Contains(slug, ".") { // <slug>.<tag>: read once every base is
			variants = append(variants, f)
			continue
		}
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, nil, fmt.Errorf("template: catalogue: %w", err)
		}
		t, err := parseStock(slug, string(src), layout)
		if err != nil {
			return nil, nil, fmt.Errorf("template: catalogue/%s.tmpl: %w", slug, err)
		}
		stock[slug] = t
		slugs = append(slugs, slug)
	}
	for _, f := range variants {
		if err := loadVariant(fsys, f, stock); err != nil {
			return nil, nil, fmt.Errorf("template: %s: %w", f, err)
		}
	}
	for _, t := range stock {
		t.finish() // again: the variants' tags, and the URLs they start
	}
	slices.Sort(slugs)
	return stock, slugs, nil
}

// readLayout reads an e-mail layout of the catalogue, which must hold the
// marker exactly once.
func readLayout(fsys fs.FS, name string) (string, error) {
	layout, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", fmt.Errorf("template: catalogue: %w", err)
	}
	if strings.Count(string(layout), layoutMarker) != 1 {
		return "", fmt.Errorf("template: %s must hold %q exactly once", name, layoutMarker)
	}
	return string(layout), nil
}

// loadVariant parses the variant file f, <slug>.<tag>.tmpl, and adds it
// to its base in stock. The tag is written canonically, so that a file's
// name is the tag it serves; its e-mail is wrapped in the layout of the
// tag's language, layout.<language>.html, which must exist: the base's
// layout would frame a Hindi e-mail in English.
func loadVariant(fsys fs.FS, f string, stock map[string]*tmpl) error {
	slug, tag, _ := strings.Cut(strings.TrimSuffix(path.Base(f), ".tmpl"), ".")
	canon, ok := locale.Canonical(tag)
	switch {
	case !ok:
		return fmt.Errorf("%q is not a locale: name a variant <slug>.<tag>.tmpl, as in standard-otp.hi.tmpl", tag)
	case canon != tag:
		return fmt.Errorf("write the locale canonically: %s.%s.tmpl", slug, canon)
	}
	base := stock[slug]
	switch {
	case base == nil:
		return fmt.Errorf("a variant of %s, which has no catalogue/%s.tmpl", slug, slug)
	case tag == base.baseLocale:
		return fmt.Errorf("%s is the language of %s.tmpl, its base: reword the base instead", tag, slug)
	}
	layout, err := readLayout(fsys, "catalogue/layout."+locale.Language(tag)+".html")
	if err != nil {
		return err
	}
	src, err := fs.ReadFile(fsys, f)
	if err != nil {
		return fmt.Errorf("template: catalogue: %w", err)
	}
	v, err := parseVariant(base, tag, string(src), layout)
	if err != nil {
		return err
	}
	if base.variants == nil {
		base.variants = make(map[string]*variant)
	}
	base.variants[tag] = v
	return nil
}

// parseVariant parses a variant file of base: header lines "cloud" and
// "action" only (the class and the variables are the base's), then the
// same five sections as a base file. Each section uses exactly the
// variables of the base's section: a stock variant says in its language
// all that its base says.
func parseVariant(base *tmpl, tag, src, layout string) (*variant, error) {
	v := &variant{tag: tag, cloudName: base.cloudName, cloudLang: locale.Cloud(tag)}
	p := stockParser{t: base, variant: v, bodies: make(map[string]string)}
	for n, line := range strings.Split(src, "\n") {
		if err := p.line(n+1, line); err != nil {
			return nil, err
		}
	}
	p.flush()
	if _, ok := base.index["ACTION"]; v.action != "" && !ok {
		return nil, fmt.Errorf("an \"action:\" line, but %s has no ACTION variable", base.slug)
	}
	index := func(name string) (int, error) {
		if i, ok := base.index[name]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("{{%s}} is not a variable of %s.tmpl", name, base.slug)
	}
	v.forms = make(map[notify.Kind]*form, len(builtinKinds))
	for _, name := range sections() {
		kind, part, bf, _ := sectionPart(name)
		src, ok := p.bodies[name]
		if !ok || src == "" {
			return nil, fmt.Errorf("section %q is missing or empty", name)
		}
		if name == "email.html" {
			src = strings.Replace(layout, layoutMarker, src, 1)
		}
		b, err := compileBody(name, src, bf, index)
		if err != nil {
			return nil, err
		}
		if v.forms[kind] == nil {
			v.forms[kind] = &form{}
		}
		v.forms[kind].setPart(part, b)
		if mine, theirs := usedNames(base, b), usedNames(base, base.forms[kind].part(part)); !slices.Equal(mine, theirs) {
			return nil, fmt.Errorf("section %q uses %v, its base's %v: a variant's section uses the variables of its base's", name, mine, theirs)
		}
	}
	return v, nil
}

// usedNames lists the variables b uses, in declaration order.
func usedNames(t *tmpl, b *body) []string {
	var names []string
	for i, used := range b.uses(len(t.vars)) {
		if used {
			names = append(names, t.vars[i].name)
		}
	}
	return names
}

// parseStock parses one catalogue file: "key: value" header lines, then
// sections that each start with a line "--- <name>". See doc.go.
func parseStock(slug, src, layout string) (*tmpl, error) {
	if !validSlug(slug) {
		return nil, fmt.Errorf("bad slug %q: use lower-case letters, digits, '-' and '_'", slug)
	}
	t := &tmpl{slug: slug, cloudName: cloudName(slug), cloudLang: "en_US", baseLocale: stockLocale}
	p := stockParser{t: t, bodies: make(map[string]string)}
	for n, line := range strings.Split(src, "\n") {
		if err := p.line(n+1, line); err != nil {
			return nil, err
		}
	}
	p.flush()
	if t.class == "" {
		return nil, fmt.Errorf("no \"class:\" line")
	}
	if err := t.declareStock(p.required, p.optional); err != nil {
		return nil, err
	}
	if err := t.compileStock(p.bodies, layout); err != nil {
		return nil, err
	}
	t.finish()
	return t, nil
}

// stockParser reads a catalogue file line by line: the header lines go
// into t and the variable lists, the lines of each section into bodies.
// It keeps the parse's state between lines so each kind of line has its
// own method.
type stockParser struct {
	t                  *tmpl
	variant            *variant          // the variant being read, nil for a base file
	bodies             map[string]string // section name -> body
	required, optional []string          // the "variables" and "optional" lists
	cur                string            // the section being read; "" in the header
	buf                []string          // the lines of cur so far
}

// line takes line n (counted from 1) of the file: a "--- <name>" line
// starts a section, any other line inside a section belongs to it, and
// before the first section it is a header line, a comment or blank.
func (p *stockParser) line(n int, line string) error {
	if name, ok := strings.CutPrefix(line, "--- "); ok {
		return p.section(n, name)
	}
	if p.cur != "" {
		p.buf = append(p.buf, line)
		return nil
	}
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return nil
	}
	return p.header(n, line)
}

// section ends the section being read and starts the one named on line n,
// refusing unknown and repeated names.
func (p *stockParser) section(n int, name string) error {
	p.flush()
	p.cur = strings.TrimSpace(name)
	if _, _, _, known := sectionPart(p.cur); !known {
		return fmt.Errorf("line %d: unknown section %q (want chat, sms, email.subject, email.html, email.text)", n, p.cur)
	}
	if _, dup := p.bodies[p.cur]; dup {
		return fmt.Errorf("line %d: section %q given twice", n, p.cur)
	}
	return nil
}

// flush stores the lines of the section being read, if any, as its body
// without its leading and trailing blank lines.
func (p *stockParser) flush() {
	if p.cur != "" {
		p.bodies[p.cur] = strings.Trim(strings.Join(p.buf, "\n"), "\n")
	}
	p.buf = p.buf[:0]
}

// header applies the trimmed "key: value" header line n.
func (p *stockParser) header(n int, line string) error {
	key, val, ok := strings.Cut(line, ":")
	if !ok {
		return fmt.Errorf("line %d: want \"key: value\" or a \"--- section\" line", n)
	}
	val = strings.TrimSpace(val)
	if p.variant != nil {
		return p.variantHeader(n, strings.TrimSpace(key), val)
	}
	t := p.t
	switch strings.TrimSpace(key) {
	case "about":
		t.about = val
	case "class":
		t.class = record.PriceClass(val)
		if t.class != record.Transactional && t.class != record.Promotional {
			return fmt.Errorf("line %d: class must be transactional or promotional", n)
		}
	case "variables":
		p.required = strings.Fields(val)
	case "optional":
		p.optional = strings.Fields(val)
	case "cloud":
		f := strings.Fields(val)
		if len(f) != 2 {
			return fmt.Errorf("line %d: cloud wants a template name and a language, as in \"cloud: standard_otp en_US\"", n)
		}
		t.cloudName, t.cloudLang = f[0], f[1]
	default:
		return fmt.Errorf("line %d: unknown key %q (want about, class, variables, optional, cloud)", n, key)
	}
	return nil
}

// variantHeader applies the header line n of a variant file: key and its
// value val. A variant has its own cloud template (its name and
// language) and may have its own ACTION default; everything else is its
// base's.
func (p *stockParser) variantHeader(n int, key, val string) error {
	switch key {
	case "cloud":
		f := strings.Fields(val)
		if len(f) != 2 {
			return fmt.Errorf("line %d: cloud wants a template name and a language, as in \"cloud: standard_otp hi\"", n)
		}
		p.variant.cloudName, p.variant.cloudLang = f[0], f[1]
	case "action":
		if val == "" {
			return fmt.Errorf("line %d: action wants ACTION's default in this language", n)
		}
		p.variant.action = val
	case "about", "class", "variables", "optional":
		return fmt.Errorf("line %d: %q is the base's: a variant has only cloud and action lines", n, key)
	default:
		return fmt.Errorf("line %d: unknown key %q (a variant has cloud and action)", n, key)
	}
	return nil
}

// declareStock declares a stock template's variables: required first, in
// order, then optional. A stock template lists every variable it uses, so
// a required one must have no default and an optional one must have one.
func (t *tmpl) declareStock(required, optional []string) error {
	for _, name := range required {
		if defaultFor(name) != noDefault {
			return fmt.Errorf("variable %s has a default: list it under optional", name)
		}
		if err := t.declare(name); err != nil {
			return err
		}
	}
	for _, name := range optional {
		if defaultFor(name) == noDefault {
			return fmt.Errorf("optional variable %s has no default (only ACTION and BRAND_NAME do)", name)
		}
		if err := t.declare(name); err != nil {
			return err
		}
	}
	return nil
}

// compileStock compiles every section of a stock template, in sections()
// order, into the part of its kind's form; email.html is wrapped in
// layout first. Every section must be there, and its placeholders must
// name declared variables.
func (t *tmpl) compileStock(bodies map[string]string, layout string) error {
	index := func(name string) (int, error) {
		if i, ok := t.index[name]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("{{%s}} is not declared under variables or optional", name)
	}
	for _, name := range sections() {
		kind, part, bf, _ := sectionPart(name)
		src, ok := bodies[name]
		if !ok || src == "" {
			return fmt.Errorf("section %q is missing or empty", name)
		}
		if name == "email.html" {
			src = strings.Replace(layout, layoutMarker, src, 1)
		}
		b, err := compileBody(name, src, bf, index)
		if err != nil {
			return err
		}
		t.stockForm(kind).setPart(part, b)
	}
	return nil
}

// stockForm returns the form of kind in t, adding it (and t's map of
// forms) on first use.
func (t *tmpl) stockForm(kind notify.Kind) *form {
	if t.forms == nil {
		t.forms = make(map[notify.Kind]*form, len(builtinKinds))
	}
	f := t.forms[kind]
	if f == nil {
		f = &form{}
		t.forms[kind] = f
	}
	return f
}

// part returns f's part (partSubject, partHTML or partText), nil when
// it has none.
func (f *form) part(part string) *body {
	switch part {
	case partSubject:
		return f.subject
	case partHTML:
		return f.html
	}
	return f.text
}

// setPart puts b in f as its part (partSubject, partHTML or partText).
func (f *form) setPart(part string, b *body) {
	switch part {
	case partSubject:
		f.subject = b
	case partHTML:
		f.html = b
	case partText:
		f.text = b
	}
}

// validSlug reports whether s may name a template: 1-64 of a-z, 0-9, '-'
// and '_', starting with a letter or digit.
func validSlug(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' || s[0] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// cloudName is the cloud template name of a slug: '-' becomes '_', since
// cloud template names are lower-case letters, digits and underscores.
func cloudName(slug string) string { return strings.ReplaceAll(slug, "-", "_") }
