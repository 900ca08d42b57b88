package template

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
)

// Check reports whether t is a usable custom template: a valid slug
// (1-64 of a-z, 0-9, '-', '_'), a known class (empty means transactional),
// valid and distinct variable names, kinds named like slugs, at least one
// body (a Text or HTML part of some kind's Body), well-formed
// placeholders, one-line subjects, a subject only beside a Text or HTML
// part of the same kind, only a Text part for the chat and sms kinds, and
// placeholders in HTML parts only where they can be escaped (text and
// quoted attribute values; not in <script>, <style>, style or on*
// attributes). Hosts call it before storing a template so a mistake shows
// when the template is saved, not when it is first sent. A bad template is
// InvalidArgument; an error about one part starts with its name: "chat"
// and "sms" for their Text, "email.subject", "email.html", "email.text",
// and "<kind>.subject", "<kind>.html", "<kind>.text" for other kinds.
//
// Its Locales are held to its base as the package documentation's
// "Locales" says: tags that are locales and distinct once canonical;
// variants of only the base's kinds and variables, each with every part
// of the base's body of its kind, each part using every variable without
// a default that the base's part uses; at most 64 of them. An error about
// a variant starts with "locales.<tag>" as the template names it, then
// the part as above: "locales.hi.sms", "locales.hi.email.html".
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
	t, err := customHeader(src)
	if err != nil {
		return nil, err
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
	for _, k := range orderedKinds(src.Bodies) {
		if !validSlug(string(k)) {
			return nil, badCustom(src.Slug, "bad kind %q: kinds are 1-64 lower-case letters, digits, '-' and '_'", clip(string(k), 40))
		}
	}
	// Kinds in a fixed order (chat, sms, email, then the others sorted),
	// parts subject, HTML, text: the order of errors and of the variables
	// that bodies use without listing them.
	for _, kind := range orderedKinds(src.Bodies) {
		f, err := compileCustomForm(src.Slug, "", kind, src.Bodies[kind], index)
		if err != nil {
			return nil, err
		}
		if f.html == nil && f.text == nil && f.subject == nil {
			continue // an empty body: the template does not serve kind
		}
		if t.forms == nil {
			t.forms = make(map[notify.Kind]*form, len(src.Bodies))
		}
		t.forms[kind] = f
	}
	if err := checkCustomForms(t, src.Bodies); err != nil {
		return nil, err
	}
	if err := compileVariants(t, src); err != nil {
		return nil, err
	}
	t.finish()
	return t, nil
}

// badCustom returns the InvalidArgument error for a mistake in the custom
// template named slug, quoting the name (clipped: an invalid slug may be
// of any length). The helpers of compileCustom share it so every error
// reads the same.
func badCustom(slug, format string, args ...any) error {
	return notify.Errorf(notify.CodeInvalidArgument, "template: custom template %q: %s",
		clip(slug, 64), fmt.Sprintf(format, args...))
}

// customHeader starts the tmpl of a custom template from what src says
// besides its bodies: checks its slug and class (empty means
// transactional) and declares the variables it lists, in order.
func customHeader(src *store.Template) (*tmpl, error) {
	if !validSlug(src.Slug) {
		return nil, badCustom(src.Slug, "bad slug: use 1-64 lower-case letters, digits, '-' and '_'")
	}
	t := &tmpl{slug: src.Slug, class: src.Class, custom: true,
		cloudName: cloudName(src.Slug), cloudLang: "en_US"}
	switch t.class {
	case "":
		t.class = record.Transactional
	case record.Transactional, record.Promotional:
	default:
		return nil, badCustom(src.Slug, "class must be transactional or promotional")
	}
	if len(src.Variables) > MaxVars {
		return nil, badCustom(src.Slug, "more than %d variables", MaxVars)
	}
	for _, name := range src.Variables {
		if err := t.declare(name); err != nil {
			return nil, badCustom(src.Slug, "%v", err)
		}
	}
	return t, nil
}

// compileCustomForm compiles the parts of the body in of kind, in the
// order subject, HTML, text, into a form; index resolves a placeholder to
// a variable (declaring it on first use). An empty part is left nil, and
// chat and sms may have only a Text part: the channel would drop any
// other. prefix starts the parts' names in errors: "" for the base,
// "locales.<tag>." for a variant.
func compileCustomForm(slug, prefix string, kind notify.Kind, in store.Body, index func(string) (int, error)) (*form, error) {
	f := &form{}
	for _, p := range [...]struct {
		part string
		src  string
		form bodyForm
		dst  **body
	}{
		{partSubject, in.Subject, formSubject, &f.subject},
		{partHTML, in.HTML, formHTML, &f.html},
		{partText, in.Text, formText, &f.text},
	} {
		if p.src == "" {
			continue
		}
		name := prefix + partName(kind, p.part)
		if p.part != partText && (kind == chat.Kind || kind == sms.Kind) {
			// The channel would drop the part: refuse it rather than
			// send a message without it.
			return nil, badCustom(slug, "%s: the %s channel sends only a text body; put it in Text", name, kind)
		}
		// Bodies pasted from Windows keep working; a lone CR is still an error.
		b, err := compileBody(name, strings.ReplaceAll(p.src, "\r\n", "\n"), p.form, index)
		if err != nil {
			return nil, badCustom(slug, "%v", err)
		}
		*p.dst = b
	}
	return f, nil
}

// checkCustomForms checks the compiled forms of t, whose source bodies
// were bodies: some kind must have a text or an HTML part, and no kind may
// have a subject alone. The errors name the parts the way the template's
// author set them.
func checkCustomForms(t *tmpl, bodies map[notify.Kind]store.Body) error {
	if !t.hasBody() {
		if onlyBuiltinKinds(bodies) {
			return badCustom(t.slug, "no body: set at least one of Chat, SMS, EmailHTML and EmailText")
		}
		return badCustom(t.slug, "no body: set the Text or HTML of at least one kind's body")
	}
	for _, kind := range orderedKinds(t.forms) {
		f := t.forms[kind]
		if f.subject == nil || f.html != nil || f.text != nil {
			continue
		}
		if kind == email.Kind {
			return badCustom(t.slug, "an e-mail subject without an e-mail body (EmailHTML or EmailText)")
		}
		return badCustom(t.slug, "%s: a subject without a %s body (Text or HTML)", partName(kind, partSubject), kind)
	}
	return nil
}

// hasBody reports whether some form of t has a text or an HTML part.
func (t *tmpl) hasBody() bool {
	for _, f := range t.forms {
		if f.html != nil || f.text != nil {
			return true
		}
	}
	return false
}

// onlyBuiltinKinds reports whether every kind of bodies is chat, sms or
// email.
func onlyBuiltinKinds(bodies map[notify.Kind]store.Body) bool {
	for k := range bodies {
		if !slices.Contains(builtinKinds[:], k) {
			return false
		}
	}
	return true
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
	e = &cacheEntry{src: *storeutil.CloneTemplate(src), t: t, err: err, size: templateSize(src)}
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

// sameTemplate reports whether a and b are the same template, every
// field compared: a cached compile of a serves b only then.
func sameTemplate(a, b *store.Template) bool {
	return a.Slug == b.Slug && a.Class == b.Class && maps.Equal(a.Bodies, b.Bodies) &&
		slices.Equal(a.Variables, b.Variables) &&
		maps.EqualFunc(a.Locales, b.Locales, maps.Equal)
}

// templateSize estimates the bytes a cache entry of t holds: its source
// and its compiled form, roughly twice the text.
func templateSize(t *store.Template) int {
	n := len(t.Slug) + bodiesSize(t.Bodies)
	for tag, bodies := range t.Locales {
		n += len(tag) + bodiesSize(bodies) + 48 // the map entry, roughly
	}
	for _, v := range t.Variables {
		n += len(v)
	}
	return n + 256 // the entry and compiled form's own overhead, roughly
}

func bodiesSize(bodies map[notify.Kind]store.Body) int {
	n := 0
	for k, b := range bodies {
		n += len(k) + len(b.Subject) + len(b.Text) + len(b.HTML) + 48 // the map entry, roughly
	}
	return n
}
