package template

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
)

// Check reports whether t is a usable custom template: a valid slug
// (1-64 of a-z, 0-9, '-', '_'), a known class (empty means transactional),
// valid and distinct variable names, at least one body, well-formed
// placeholders, a one-line subject, an e-mail subject only beside an
// e-mail body, and placeholders in the HTML body only where they can be
// escaped (text and quoted attribute values; not in <script>, <style>,
// style or on* attributes). Hosts call it before storing a template so a
// mistake shows when the template is saved, not when it is first sent.
// A bad template is InvalidArgument.
func Check(t *store.Template) error {
	_, err := compileCustom(t)
	return err
}

// compileCustom compiles an account's template. CRLF line ends become LF.
// Variables it lists come
// first, in order; variables its bodies use without listing them follow
// in order of first use, and are required unless they have a default.
func compileCustom(src *store.Template) (*tmpl, error) {
	if src == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "template: nil custom template")
	}
	bad := func(format string, args ...any) error {
		return notify.Errorf(notify.CodeInvalidArgument, "template: custom template %q: %s",
			clip(src.Slug, 64), fmt.Sprintf(format, args...))
	}
	if !validSlug(src.Slug) {
		return nil, bad("bad slug: use 1-64 lower-case letters, digits, '-' and '_'")
	}
	t := &tmpl{slug: src.Slug, class: src.Class, custom: true,
		cloudName: cloudName(src.Slug), cloudLang: "en_US"}
	switch t.class {
	case "":
		t.class = notify.Transactional
	case notify.Transactional, notify.Promotional:
	default:
		return nil, bad("class must be transactional or promotional")
	}
	if len(src.Variables) > MaxVars {
		return nil, bad("more than %d variables", MaxVars)
	}
	for _, name := range src.Variables {
		if err := t.declare(name); err != nil {
			return nil, bad("%v", err)
		}
	}
	index := func(name string) (int, error) {
		if i, ok := t.index[name]; ok {
			return i, nil
		}
		if len(t.vars) >= MaxVars {
			return 0, fmt.Errorf("more than %d variables", MaxVars)
		}
		err := t.declare(name)
		return len(t.vars) - 1, err
	}
	forms := []struct {
		name string
		src  string
		form bodyForm
		dst  **body
	}{
		{"chat", src.Chat, formText, &t.chat},
		{"sms", src.SMS, formText, &t.sms},
		{"email.subject", src.EmailSubject, formSubject, &t.subject},
		{"email.html", src.EmailHTML, formHTML, &t.html},
		{"email.text", src.EmailText, formText, &t.text},
	}
	for _, f := range forms {
		if f.src == "" {
			continue
		}
		// Bodies pasted from Windows keep working; a lone CR is still an error.
		b, err := compileBody(f.name, strings.ReplaceAll(f.src, "\r\n", "\n"), f.form, index)
		if err != nil {
			return nil, bad("%v", err)
		}
		*f.dst = b
	}
	if t.chat == nil && t.sms == nil && t.html == nil && t.text == nil {
		return nil, bad("no body: set at least one of Chat, SMS, EmailHTML and EmailText")
	}
	if t.subject != nil && t.html == nil && t.text == nil {
		return nil, bad("an e-mail subject without an e-mail body (EmailHTML or EmailText)")
	}
	t.finish()
	return t, nil
}

// Cache bounds: compiled custom templates are kept per account and slug
// while their source is unchanged, up to these totals.
const (
	cacheEntries = 1024
	cacheBytes   = 16 << 20
)

// cache keeps compiled custom templates, keyed by account and slug, and
// valid while the stored source is the same (compared in full, so a
// changed template is recompiled on its next use). Compile errors are
// kept too, so a broken template is not recompiled on every send. When
// full it drops arbitrary entries: any entry is cheap to rebuild.
type cache struct {
	mu    sync.RWMutex
	m     map[cacheKey]*cacheEntry
	bytes int
}

type cacheKey struct{ account, slug string }

type cacheEntry struct {
	src  store.Template // a copy: the store may reuse its value
	t    *tmpl
	err  error
	size int
}

func (c *cache) get(account string, src *store.Template) (*tmpl, error) {
	key := cacheKey{account, src.Slug}
	c.mu.RLock()
	e := c.m[key]
	c.mu.RUnlock()
	if e != nil && sameTemplate(&e.src, src) {
		return e.t, e.err
	}
	t, err := compileCustom(src)
	e = &cacheEntry{src: *src, t: t, err: err, size: templateSize(src)}
	e.src.Variables = slices.Clone(src.Variables)
	if e.size > cacheBytes/8 {
		return t, err // too big to keep; it is rare enough to rebuild
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[cacheKey]*cacheEntry)
	}
	if old := c.m[key]; old != nil {
		c.bytes -= old.size
		delete(c.m, key)
	}
	for k, old := range c.m {
		if len(c.m) < cacheEntries && c.bytes+e.size <= cacheBytes {
			break
		}
		c.bytes -= old.size
		delete(c.m, k)
	}
	c.m[key] = e
	c.bytes += e.size
	return t, err
}

func sameTemplate(a, b *store.Template) bool {
	return a.Slug == b.Slug && a.Class == b.Class && a.Chat == b.Chat && a.SMS == b.SMS &&
		a.EmailSubject == b.EmailSubject && a.EmailHTML == b.EmailHTML && a.EmailText == b.EmailText &&
		slices.Equal(a.Variables, b.Variables)
}

func templateSize(t *store.Template) int {
	n := len(t.Slug) + len(t.Chat) + len(t.SMS) + len(t.EmailSubject) + len(t.EmailHTML) + len(t.EmailText)
	for _, v := range t.Variables {
		n += len(v)
	}
	return n + 256 // the entry and compiled form's own overhead, roughly
}
