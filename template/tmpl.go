package template

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
)

// tmpl is a compiled template, stock or custom. It is immutable once
// built, so renders share it freely.
type tmpl struct {
	slug   string
	about  string
	class  notify.PriceClass
	custom bool
	// vars are the variables in declaration order: the order positional
	// values and cloud parameters follow.
	vars  []variable
	index map[string]int
	names string // "NAME, ORDER_ID, BRAND_NAME (optional)", for errors
	// The bodies; nil when the template does not serve that form.
	chat, sms, subject, html, text *body
	cloudName, cloudLang           string
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
	if t.html != nil {
		for _, s := range t.html.slots {
			if s.esc == escURLStart && t.vars[s.v].check == checkNone {
				t.vars[s.v].check = checkURL
			}
		}
	}
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
func (t *tmpl) render(kind notify.Kind, acct *notify.Account, vars notify.Vars) (*notify.Rendered, error) {
	if err := t.serves(kind); err != nil {
		return nil, err
	}
	vals, err := t.resolve(acct, vars)
	if err != nil {
		return nil, err
	}
	out := &notify.Rendered{Slug: t.slug, Class: t.class, Values: vals}
	switch kind {
	case chat.Kind:
		out.Text = t.chat.text(vals)
	case sms.Kind:
		out.Text = t.sms.text(vals)
	case email.Kind:
		if t.subject != nil {
			out.Subject = t.subject.text(vals)
		}
		if t.html != nil {
			out.HTML = t.html.htmlText(vals)
		}
		if t.text != nil {
			out.Text = t.text.text(vals)
		}
	}
	return out, nil
}

// serves returns an error unless t has a body for kind.
func (t *tmpl) serves(kind notify.Kind) error {
	var ok bool
	var form string
	switch kind {
	case chat.Kind:
		ok, form = t.chat != nil, "chat"
	case sms.Kind:
		ok, form = t.sms != nil, "SMS"
	case email.Kind:
		ok, form = t.html != nil || t.text != nil, "e-mail"
	default:
		return notify.Errorf(notify.CodeInvalidArgument,
			"template: no template form for kind %q (templates serve sms, email and chat)", kind)
	}
	if !ok {
		return &notify.Error{Code: notify.CodeInvalidArgument,
			Err: errorString("template: rendering " + fmt.Sprintf("%q", t.slug)),
			Fields: []notify.FieldError{{Field: "template_slug",
				Message: fmt.Sprintf("custom template %q has no %s body; add one to the template or use another channel", t.slug, form)}}}
	}
	return nil
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
