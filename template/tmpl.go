package template

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/record"
)

// tmpl is a compiled template, stock or custom. It is immutable once
// built, so renders share it freely.
type tmpl struct {
	slug   string
	about  string
	class  record.PriceClass
	custom bool
	// vars are the variables in declaration order: the order positional
	// values and cloud parameters follow.
	vars  []variable
	index map[string]int
	names string // "NAME, ORDER_ID, BRAND_NAME (optional)", for errors
	// forms are the template's bodies by channel kind; a kind without
	// one is a channel the template does not serve. Every form has a text
	// or an HTML part.
	forms map[notify.Kind]*form
	// kinds are the keys of forms: chat, sms and email first, in that
	// order, then any other kind in lexical order (Info.Kinds).
	kinds                []notify.Kind
	cloudName, cloudLang string
	// variants are the template's wordings in other locales, by canonical
	// tag: a custom template's Locales, a stock template's
	// <slug>.<tag>.tmpl files. Nil: the base alone. locales are their
	// tags, sorted (Info.Locales).
	variants map[string]*variant
	locales  []string
	// baseLocale is the language the base is written in, when known: "en"
	// for the stock catalogue, "" for a custom template (store.Template
	// does not say). A chain that reaches it renders the base, so a
	// request for English is not answered in the account's default.
	baseLocale string
}

// variant is one locale's wording of a template: forms of some of the
// kinds its base serves, compiled against the base's variables (the
// slots index tmpl.vars), so values resolve once whatever the wording.
type variant struct {
	tag   string // canonical: "hi", "hi-IN"
	forms map[notify.Kind]*form
	// cloudName and cloudLang name the cloud template registered with
	// this variant's chat wording.
	cloudName, cloudLang string
	// action is ACTION's default in this variant's language, "" for the
	// base's ("verification"): a default in English would read as a
	// foreign word in a Hindi message.
	action string
}

// form is a template's compiled body for one channel kind; a part is nil
// when the template has none.
type form struct {
	subject, text, html *body
}

type variable struct {
	name  string
	def   defaultValue
	check check
}

// declare adds a variable; it is an error to declare one twice.
func (t *tmpl) declare(name string) error {
	if !validName(name) {
		return fmt.Errorf("bad variable name %q: names are upper-case letters, digits and '_'", clip(name, 40))
	}
	if _, dup := t.index[name]; dup {
		return fmt.Errorf("variable %s declared twice", name)
	}
	if t.index == nil {
		t.index = make(map[string]int)
	}
	t.index[name] = len(t.vars)
	t.vars = append(t.vars, variable{name: name, def: defaultFor(name), check: checkFor(name)})
	return nil
}

// finish computes what depends on the whole template: URL checks for
// variables that start an HTML URL attribute, in the base or in any
// variant (values are resolved before the variant is known to matter, so
// a variable is a URL in every wording if it is one in any), the kinds,
// the variants' tags and the names list.
func (t *tmpl) finish() {
	urls := func(forms map[notify.Kind]*form) {
		for _, f := range forms {
			if f.html == nil {
				continue
			}
			for _, s := range f.html.slots {
				if s.esc == escURLStart && t.vars[s.v].check == checkNone {
					t.vars[s.v].check = checkURL
				}
			}
		}
	}
	urls(t.forms)
	for _, v := range t.variants {
		urls(v.forms)
	}
	t.kinds = orderedKinds(t.forms)
	t.locales = slices.Sorted(maps.Keys(t.variants))
	var b strings.Builder
	for i, v := range t.vars {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.name)
		if v.def != noDefault {
			b.WriteString(" (optional)")
		}
	}
	t.names = b.String()
	if t.names == "" {
		t.names = "no variables"
	}
}

// render renders t for kind in the locale tag (canonical, or "" for
// none), by the fallback chain pick follows.
func (t *tmpl) render(kind notify.Kind, acct *notify.Account, tag string, vars record.Vars) (*notify.Rendered, error) {
	f, v, err := t.pick(kind, acct, tag)
	if err != nil {
		return nil, err
	}
	vals, err := t.resolve(acct, vars, v)
	if err != nil {
		return nil, err
	}
	out := &notify.Rendered{Slug: t.slug, Class: t.class, Values: vals, Varies: t.varies(kind)}
	if v != nil {
		out.Locale = v.tag
	}
	if f.subject != nil {
		out.Subject = f.subject.text(vals)
	}
	if f.html != nil {
		out.HTML = f.html.htmlText(vals)
	}
	if f.text != nil {
		out.Text = f.text.text(vals)
	}
	return out, nil
}

// pick returns the form of kind that a render in the locale tag
// (canonical, or "" for none) uses for acct, and the variant it belongs
// to (nil for the base): the first link of the chain (the tag, its
// language, the account's default, its language) whose variant has a
// form for kind, else the base's form. A link without a variant, or whose
// variant lacks kind, is skipped, so an unknown locale falls back to the
// base silently; a link that is the base's own language (baseLocale)
// ends the chain at the base.
func (t *tmpl) pick(kind notify.Kind, acct *notify.Account, tag string) (*form, *variant, error) {
	if len(t.variants) > 0 { // a template without variants costs nothing here
		for _, link := range locale.Chain(tag, accountLocale(acct)) {
			if v := t.variants[link]; v != nil {
				if f := v.forms[kind]; f != nil {
					return f, v, nil
				}
			}
			if link == t.baseLocale {
				break
			}
		}
	}
	f, err := t.form(kind)
	return f, nil, err
}

// varies reports whether a variant of t has a form for kind: whether a
// locale could word t's kind otherwise (notify.Rendered.Varies).
func (t *tmpl) varies(kind notify.Kind) bool {
	for _, v := range t.variants {
		if v.forms[kind] != nil {
			return true
		}
	}
	return false
}

// accountLocale returns the account's default locale, canonical, or ""
// when it has none or has one that is no tag: the default is a
// preference, and a bad one must not stop the account's sends (the admin
// API refuses it on the way in).
func accountLocale(acct *notify.Account) string {
	if acct == nil || acct.Locale == "" {
		return ""
	}
	tag, _ := locale.Canonical(acct.Locale)
	return tag
}

// form returns t's form for kind, or an error when t does not serve kind.
func (t *tmpl) form(kind notify.Kind) (*form, error) {
	if f := t.forms[kind]; f != nil {
		return f, nil
	}
	if !t.custom {
		return nil, notify.Errorf(notify.CodeInvalidArgument,
			"template: no template form for kind %q (stock templates serve sms, email and chat)", clip(string(kind), 64))
	}
	return nil, &notify.Error{Code: notify.CodeInvalidArgument,
		Err: errorString("template: rendering " + fmt.Sprintf("%q", t.slug)),
		Fields: []record.FieldError{{Field: "template_slug",
			Message: fmt.Sprintf("custom template %q has no %s body; add one to the template or use another channel", t.slug, clip(kindWord(kind), 64))}}}
}

// kindWord names kind in a sentence: "SMS", "e-mail", "chat", or the
// kind itself.
func kindWord(kind notify.Kind) string {
	switch kind {
	case sms.Kind:
		return "SMS"
	case email.Kind:
		return "e-mail"
	}
	return string(kind)
}

// builtinKinds are the kinds of the stock catalogue, in the order
// templates list them.
var builtinKinds = [...]notify.Kind{chat.Kind, sms.Kind, email.Kind}

// orderedKinds returns the keys of m: the built-in kinds first, in
// builtinKinds order, then the others sorted.
func orderedKinds[V any](m map[notify.Kind]V) []notify.Kind {
	if len(m) == 0 {
		return nil
	}
	kinds := make([]notify.Kind, 0, len(m))
	for _, k := range builtinKinds {
		if _, ok := m[k]; ok {
			kinds = append(kinds, k)
		}
	}
	n := len(kinds)
	for k := range m {
		if !slices.Contains(builtinKinds[:], k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds[n:])
	return kinds
}

// Part names of a form, as errors and catalogue sections name them.
const (
	partSubject = "subject"
	partHTML    = "html"
	partText    = "text"
)

// partName names a part of kind's body in errors: "chat" and "sms" for
// those kinds' text, "email.subject", "email.html" and "email.text" for
// e-mail (the catalogue's section names, which the admin API maps to its
// fields), and "<kind>.<part>" for anything else.
func partName(kind notify.Kind, part string) string {
	if part == partText && (kind == chat.Kind || kind == sms.Kind) {
		return string(kind)
	}
	return string(kind) + "." + part
}

// text renders a body whose values go in unescaped.
func (b *body) text(vals []string) string {
	if len(b.slots) == 0 {
		return b.lits[0]
	}
	n := b.litLen
	for _, s := range b.slots {
		n += len(vals[s.v])
	}
	var sb strings.Builder
	sb.Grow(n)
	for i, s := range b.slots {
		sb.WriteString(b.lits[i])
		sb.WriteString(vals[s.v])
	}
	sb.WriteString(b.lits[len(b.slots)])
	return sb.String()
}

// htmlText renders an HTML body, escaping each value for its context.
func (b *body) htmlText(vals []string) string {
	if len(b.slots) == 0 {
		return b.lits[0]
	}
	n := b.litLen
	var parts []string // values of URL-part slots, escaped once
	for i, s := range b.slots {
		v := vals[s.v]
		switch s.esc {
		case escURLPath, escURLQuery:
			if parts == nil {
				parts = make([]string, len(b.slots))
			}
			if s.esc == escURLPath {
				parts[i] = url.PathEscape(v)
			} else {
				parts[i] = url.QueryEscape(v)
			}
			v = parts[i]
		}
		n += htmlLen(v)
	}
	var sb strings.Builder
	sb.Grow(n)
	for i, s := range b.slots {
		sb.WriteString(b.lits[i])
		v := vals[s.v]
		if s.esc == escURLPath || s.esc == escURLQuery {
			v = parts[i]
		}
		writeHTML(&sb, v)
	}
	sb.WriteString(b.lits[len(b.slots)])
	return sb.String()
}

// cloud maps the resolved values to a cloud template message, named as
// the variant v says (nil: the base). Cloud parameters may not hold runs
// of spaces, so runs are collapsed.
func (t *tmpl) cloud(v *variant, vals []string) *chat.Template {
	params := make([]string, len(vals))
	for i, v := range vals {
		if strings.Contains(v, "  ") {
			v = strings.Join(strings.Fields(v), " ")
		}
		params[i] = v
	}
	name, lang := t.cloudName, t.cloudLang
	if v != nil {
		name, lang = v.cloudName, v.cloudLang
	}
	return &chat.Template{Name: name, Language: lang, Params: params}
}
