package adminapi

import (
	"errors"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/template"
)

// This file is the one place that converts between a custom template on
// the wire (templateIn, the body of a PUT; templateJSON, an answer) and
// store.Template. The wire keeps the five body fields it always had; the
// template keeps its bodies by channel kind (store.Template.Bodies):
//
//	chat           Bodies[chat.Kind].Text
//	sms            Bodies[sms.Kind].Text
//	email_subject  Bodies[email.Kind].Subject
//	email_html     Bodies[email.Kind].HTML
//	email_text     Bodies[email.Kind].Text
//
// A kind whose parts are all empty has no body. Bodies of other kinds
// (a channel added in Go, its bodies set through store.Templates) have no
// field on the wire: answers leave them out, and a PUT, which replaces
// the wire's bodies, the variables and the class, keeps them (its log
// line names the kinds it kept).

// templatePart is one body field of the wire.
type templatePart struct {
	// field is its JSON name; check the name template.Check gives it in
	// its errors ("email.html: line 1, …").
	field, check string
	kind         notify.Kind
	// of is the part of a body that the field is.
	of func(*store.Body) *string
}

func bodyText(b *store.Body) *string    { return &b.Text }
func bodySubject(b *store.Body) *string { return &b.Subject }
func bodyHTML(b *store.Body) *string    { return &b.HTML }

// templateParts are the body fields, in the order of the wire.
var templateParts = [...]templatePart{
	{"chat", "chat", chat.Kind, bodyText},
	{"sms", "sms", sms.Kind, bodyText},
	{"email_subject", "email.subject", email.Kind, bodySubject},
	{"email_html", "email.html", email.Kind, bodyHTML},
	{"email_text", "email.text", email.Kind, bodyText},
}

// wireKind reports whether the wire has fields for the bodies of kind.
func wireKind(kind notify.Kind) bool {
	return slices.ContainsFunc(templateParts[:], func(p templatePart) bool { return p.kind == kind })
}

type templateIn struct {
	Variables    []string `json:"variables"`
	Class        string   `json:"class"`
	Chat         string   `json:"chat"`
	SMS          string   `json:"sms"`
	EmailSubject string   `json:"email_subject"`
	EmailHTML    string   `json:"email_html"`
	EmailText    string   `json:"email_text"`
}

// parts are in's body fields, in the order of templateParts.
func (in *templateIn) parts() [len(templateParts)]*string {
	return [...]*string{&in.Chat, &in.SMS, &in.EmailSubject, &in.EmailHTML, &in.EmailText}
}

// template is the template that in makes, with the slug.
func (in *templateIn) template(slug string) *store.Template {
	t := &store.Template{Slug: slug, Variables: in.Variables, Class: record.PriceClass(in.Class)}
	for i, v := range in.parts() {
		if *v == "" {
			continue
		}
		p := templateParts[i]
		if t.Bodies == nil {
			t.Bodies = make(map[notify.Kind]store.Body)
		}
		b := t.Bodies[p.kind]
		*p.of(&b) = *v
		t.Bodies[p.kind] = b
	}
	return t
}

type templateJSON struct {
	Slug         string   `json:"slug"`
	Variables    []string `json:"variables"`
	Class        string   `json:"class"`
	Chat         string   `json:"chat,omitempty"`
	SMS          string   `json:"sms,omitempty"`
	EmailSubject string   `json:"email_subject,omitempty"`
	EmailHTML    string   `json:"email_html,omitempty"`
	EmailText    string   `json:"email_text,omitempty"`
}

// templateOf is t on the wire: its bodies of the wire's kinds.
func templateOf(t *store.Template) templateJSON {
	out := templateJSON{Slug: t.Slug, Variables: []string{}, Class: string(t.Class)}
	for i, v := range [...]*string{&out.Chat, &out.SMS, &out.EmailSubject, &out.EmailHTML, &out.EmailText} {
		p := templateParts[i]
		b := t.Bodies[p.kind]
		*v = *p.of(&b)
	}
	out.Variables = append(out.Variables, t.Variables...)
	if out.Class == "" {
		out.Class = string(record.Transactional)
	}
	return out
}

// keepOtherKinds copies into t the bodies of old whose kinds the wire has
// no fields for, which a PUT of t over old keeps, and returns those
// kinds, sorted.
func keepOtherKinds(t, old *store.Template) []string {
	var kept []string
	for k, b := range old.Bodies {
		if wireKind(k) || b == (store.Body{}) {
			continue
		}
		if t.Bodies == nil {
			t.Bodies = make(map[notify.Kind]store.Body)
		}
		t.Bodies[k] = b
		kept = append(kept, string(k))
	}
	slices.Sort(kept)
	return kept
}

// checkTemplate checks t with template.Check and names the wire field of
// its first problem and the rule ("" when there is none), in
// template.Check's order: the slug, the class, the variables, each body
// field's text, then the set of bodies (no body at all, or a subject
// without a body), whose words template.Check keeps for the wire's
// kinds.
func checkTemplate(t *store.Template) (field, rule string) {
	err := template.Check(t)
	if err == nil {
		return "", ""
	}
	return templateField(err)
}

// templateField names the field a template.Check error is about, and
// its rule: a body field's, the slug's, the class's, the variables', or
// for an error about the set of bodies "email_subject" (a subject without
// an e-mail body) or "body".
func templateField(err error) (field, rule string) {
	msg := err.Error()
	var e *notify.Error
	if errors.As(err, &e) && e.Err != nil {
		msg = e.Err.Error()
	}
	// "template: custom template "slug": rest"
	if i := strings.Index(msg, `": `); i >= 0 && strings.HasPrefix(msg, "template: custom template ") {
		msg = msg[i+3:]
	} else {
		msg = strings.TrimPrefix(msg, "template: ")
	}
	for _, p := range templateParts {
		if rest, ok := strings.CutPrefix(msg, p.check+": "); ok {
			return p.field, rest
		}
	}
	switch {
	case strings.HasPrefix(msg, "bad slug"):
		return "slug", msg
	case strings.HasPrefix(msg, "class"):
		return "class", msg
	case strings.Contains(msg, "variable"):
		return "variables", msg
	case strings.HasPrefix(msg, "an e-mail subject"):
		return "email_subject", msg
	}
	return "body", msg
}
