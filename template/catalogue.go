package template

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// stockFS holds the stock catalogue: one <slug>.tmpl file per template and
// the HTML layout every stock e-mail is wrapped in. It is read-only.
//
//go:embed catalogue/*.tmpl catalogue/layout.html
var stockFS embed.FS

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
// returning them by slug and the sorted slugs.
func loadStock(fsys fs.FS) (map[string]*tmpl, []string, error) {
	layout, err := fs.ReadFile(fsys, "catalogue/layout.html")
	if err != nil {
		return nil, nil, fmt.Errorf("template: catalogue: %w", err)
	}
	if strings.Count(string(layout), layoutMarker) != 1 {
		return nil, nil, fmt.Errorf("template: catalogue/layout.html must hold %q exactly once", layoutMarker)
	}
	files, err := fs.Glob(fsys, "catalogue/*.tmpl")
	if err != nil {
		return nil, nil, fmt.Errorf("template: catalogue: %w", err)
	}
	stock := make(map[string]*tmpl, len(files))
	slugs := make([]string, 0, len(files))
	for _, f := range files {
		slug := strings.TrimSuffix(path.Base(f), ".tmpl")
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, nil, fmt.Errorf("template: catalogue: %w", err)
		}
		t, err := parseStock(slug, string(src), string(layout))
		if err != nil {
			return nil, nil, fmt.Errorf("template: catalogue/%s.tmpl: %w", slug, err)
		}
		stock[slug] = t
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	return stock, slugs, nil
}

// parseStock parses one catalogue file: "key: value" header lines, then
// sections that each start with a line "--- <name>". See doc.go.
func parseStock(slug, src, layout string) (*tmpl, error) {
	if !validSlug(slug) {
		return nil, fmt.Errorf("bad slug %q: use lower-case letters, digits, '-' and '_'", slug)
	}
	t := &tmpl{slug: slug, cloudName: cloudName(slug), cloudLang: "en_US"}
	bodies := make(map[string]string)
	var required, optional []string
	var cur string
	var buf []string
	flush := func() {
		if cur != "" {
			bodies[cur] = strings.Trim(strings.Join(buf, "\n"), "\n")
		}
		buf = buf[:0]
	}
	for n, line := range strings.Split(src, "\n") {
		if name, ok := strings.CutPrefix(line, "--- "); ok {
			flush()
			cur = strings.TrimSpace(name)
			if _, _, _, known := sectionPart(cur); !known {
				return nil, fmt.Errorf("line %d: unknown section %q (want chat, sms, email.subject, email.html, email.text)", n+1, cur)
			}
			if _, dup := bodies[cur]; dup {
				return nil, fmt.Errorf("line %d: section %q given twice", n+1, cur)
			}
			continue
		}
		if cur != "" {
			buf = append(buf, line)
			continue
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want \"key: value\" or a \"--- section\" line", n+1)
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "about":
			t.about = val
		case "class":
			t.class = record.PriceClass(val)
			if t.class != record.Transactional && t.class != record.Promotional {
				return nil, fmt.Errorf("line %d: class must be transactional or promotional", n+1)
			}
		case "variables":
			required = strings.Fields(val)
		case "optional":
			optional = strings.Fields(val)
		case "cloud":
			f := strings.Fields(val)
			if len(f) != 2 {
				return nil, fmt.Errorf("line %d: cloud wants a template name and a language, as in \"cloud: standard_otp en_US\"", n+1)
			}
			t.cloudName, t.cloudLang = f[0], f[1]
		default:
			return nil, fmt.Errorf("line %d: unknown key %q (want about, class, variables, optional, cloud)", n+1, key)
		}
	}
	flush()
	if t.class == "" {
		return nil, fmt.Errorf("no \"class:\" line")
	}
	for _, name := range required {
		if defaultFor(name) != noDefault {
			return nil, fmt.Errorf("variable %s has a default: list it under optional", name)
		}
		if err := t.declare(name); err != nil {
			return nil, err
		}
	}
	for _, name := range optional {
		if defaultFor(name) == noDefault {
			return nil, fmt.Errorf("optional variable %s has no default (only ACTION and BRAND_NAME do)", name)
		}
		if err := t.declare(name); err != nil {
			return nil, err
		}
	}
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
			return nil, fmt.Errorf("section %q is missing or empty", name)
		}
		if name == "email.html" {
			src = strings.Replace(layout, layoutMarker, src, 1)
		}
		b, err := compileBody(name, src, bf, index)
		if err != nil {
			return nil, err
		}
		if t.forms == nil {
			t.forms = make(map[notify.Kind]*form, len(builtinKinds))
		}
		f := t.forms[kind]
		if f == nil {
			f = &form{}
			t.forms[kind] = f
		}
		switch part {
		case partSubject:
			f.subject = b
		case partHTML:
			f.html = b
		case partText:
			f.text = b
		}
	}
	t.finish()
	return t, nil
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
