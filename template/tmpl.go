package template

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
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
// variables that start an HTML URL attribute, and the names list.
func (t *tmpl) finish() {
	for _, f := range t.forms {
		if f.html == nil {
			continue
		}
		for _, s := range f.html.slots {
			if s.esc == escURLStart && t.vars[s.v].check == checkNone {
				t.vars[s.v].check = checkURL
			}
		}
	}
	t.kinds = orderedKinds(t.forms)
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

// render renders t for kind.
func (t *tmpl) render(kind notify.Kind, acct *notify.Account, vars record.Vars) (*notify.Rendered, error) {
	f, err := t.form(kind)
	if err != nil {
		return nil, err
	}
	vals, err := t.resolve(acct, vars)
	if err != nil {
		return nil, err
	}
	out := &notify.Rendered{Slug: t.slug, Class: t.class, Values: vals}
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

// form returns t's form for kind, or an error when t does not serve kind.
func (t *tmpl) form(kind notify.Kind) (*form, error) {
	if f := t.forms[kind]; f != nil {
		return f, nil
	}
	if !t.custom {
		return nil, notify.Errorf(notify.CodeInvalidArgument,
			"template: no template form for kind %q (stock templates serve sms, email and chat)", clip(string(kind), 64))
	}
	name := string(kind)
	switch kind {
	case sms.Kind:
		name = "SMS"
	case email.Kind:
		name = "e-mail"
	}
	return nil, &notify.Error{Code: notify.CodeInvalidArgument,
		Err: errorString("template: rendering " + fmt.Sprintf("%q", t.slug)),
		Fields: []record.FieldError{{Field: "template_slug",
			Message: fmt.Sprintf("custom template %q has no %s body; add one to the template or use another channel", t.slug, clip(name, 64))}}}
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

// cloud maps the resolved values to a cloud template message. Cloud
// parameters may not hold runs of spaces, so runs are collapsed.
func (t *tmpl) cloud(vals []string) *chat.Template {
	params := make([]string, len(vals))
	for i, v := range vals {
		if strings.Contains(v, "  ") {
			v = strings.Join(strings.Fields(v), " ")
		}
		params[i] = v
	}
	return &chat.Template{Name: t.cloudName, Language: t.cloudLang, Params: params}
}
