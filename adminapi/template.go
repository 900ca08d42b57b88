package adminapi

import (
	"errors"
	"maps"
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
//
// The template's variants (store.Template.Locales) are one field,
// "locales": by tag, by kind, the body's parts, as in
//
//	"locales": {"hi": {"sms": {"text": "…"}, "email": {"subject": "…", "html": "…", "text": "…"}}}
//
// The kinds there are the wire's, chat, sms and email, as for the base:
// a variant's bodies of other kinds are left out of answers and kept by
// a PUT, which replaces the rest of the variants (a tag it does not name
// keeps only those) and stores the tags canonical ("hi_in" is stored and
// answered as "hi-IN"). Answers leave the field out for a template
// without variants of the wire's kinds, so that every answer about one
// keeps its bytes.

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
	// Locales are the variants: tag -> kind -> body.
	Locales map[string]map[string]localeBody `json:"locales"`
}

// localeBody is one kind's body of a variant on the wire.
type localeBody struct {
	Subject string `json:"subject,omitempty"`
	HTML    string `json:"html,omitempty"`
	Text    string `json:"text,omitempty"`
}

// parts are in's body fields, in the order of templateParts.
func (in *templateIn) parts() [len(templateParts)]*string {
	return [...]*string{&in.Chat, &in.SMS, &in.EmailSubject, &in.EmailHTML, &in.EmailText}
}

// template is the template that in makes, with the slug; its variants
// are under their tags as given (canonicalLocales stores them
// canonical once they are checked), a kind whose parts are all empty
// left out, as in the bodies.
func (in *templateIn) template(slug string) *store.Template {
	t := &store.Template{Slug: slug, Variables: in.Variables, Class: record.PriceClass(in.Class)}
	if in.Locales != nil {
		t.Locales = make(map[string]map[notify.Kind]store.Body, len(in.Locales))
		for tag, kinds := range in.Locales {
			bodies := make(map[notify.Kind]store.Body, len(kinds))
			for kind, b := range kinds {
				if b != (localeBody{}) {
					bodies[notify.Kind(kind)] = store.Body{Subject: b.Subject, HTML: b.HTML, Text: b.Text}
				}
			}
			t.Locales[tag] = bodies
		}
	}
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
	Slug         string                           `json:"slug"`
	Variables    []string                         `json:"variables"`
	Class        string                           `json:"class"`
	Chat         string                           `json:"chat,omitempty"`
	SMS          string                           `json:"sms,omitempty"`
	EmailSubject string                           `json:"email_subject,omitempty"`
	EmailHTML    string                           `json:"email_html,omitempty"`
	EmailText    string                           `json:"email_text,omitempty"`
	Locales      map[string]map[string]localeBody `json:"locales,omitempty"`
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
	for tag, bodies := range t.Locales {
		kinds := make(map[string]localeBody, len(bodies))
		for k, b := range bodies {
			if wireKind(k) && b != (store.Body{}) {
				kinds[string(k)] = localeBody{Subject: b.Subject, HTML: b.HTML, Text: b.Text}
			}
		}
		if len(kinds) == 0 {
			continue // a variant of other kinds alone, which the wire leaves out
		}
		if out.Locales == nil {
			out.Locales = make(map[string]map[string]localeBody, len(t.Locales))
		}
		out.Locales[tag] = kinds
	}
	return out
}

// checkLocales adds to fe what is wrong with in's variants before
// template.Check reads them: tags, kinds and parts that are not valid
// text, tags that are not locales, and two tags that are one locale
// ("hi-IN", "hi_in"). template.Check says the same of tags, but in a
// message whose field this file reads back: a tag known good cannot
// break that reading.
func (in *templateIn) checkLocales(fe *record.FieldErrors) {
	tags := slices.Sorted(maps.Keys(in.Locales))
	seen := make(map[string]string, len(tags))
	for _, tag := range tags {
		if !validText(tag) {
			fe.Add("locales", "tags must be valid UTF-8 without NUL characters")
			continue
		}
		field := "locales." + tag
		c, ok := template.CanonicalLocale(tag)
		switch {
		case !ok:
			fe.Add(field, `must be a BCP 47 language tag such as "hi", "hi-IN" or "en-US"`)
			continue
		case seen[c] != "":
			fe.Addf(field, "is the same locale as locales.%s (%s); give each locale once", seen[c], c)
			continue
		}
		seen[c] = tag
		for _, kind := range slices.Sorted(maps.Keys(in.Locales[tag])) {
			if !validText(kind) {
				fe.Add(field, "kinds must be valid UTF-8 without NUL characters")
				continue
			}
			if !wireKind(notify.Kind(kind)) {
				fe.Add(field+"."+kind, "is not chat, sms or email: a variant's bodies of other kinds are set in Go (store.Templates)")
				continue
			}
			b := in.Locales[tag][kind]
			for _, p := range [...]struct{ part, v string }{{"subject", b.Subject}, {"html", b.HTML}, {"text", b.Text}} {
				if !validText(p.v) {
					fe.Add(field+"."+kind+"."+p.part, "must be valid UTF-8 without NUL characters")
				}
			}
		}
	}
}

// canonicalLocales stores t's variants under their canonical tags, which
// checkLocales and template.Check have found to be distinct locales.
func canonicalLocales(t *store.Template) {
	if len(t.Locales) == 0 {
		t.Locales = nil
		return
	}
	out := make(map[string]map[notify.Kind]store.Body, len(t.Locales))
	for tag, bodies := range t.Locales {
		c, _ := template.CanonicalLocale(tag)
		out[c] = bodies
	}
	t.Locales = out
}

// keepOtherKinds copies into t the bodies of old whose kinds the wire has
// no fields for, which a PUT of t over old keeps, the base's and its
// variants' (under the variant's canonical tag, t's being canonical
// already), and returns those kinds, sorted: "push" for the base's,
// "locales.hi.push" for a variant's.
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
	for tag, bodies := range old.Locales {
		if c, ok := template.CanonicalLocale(tag); ok {
			tag = c // else kept as it is, for template.Check to refuse
		}
		for k, b := range bodies {
			if wireKind(k) || b == (store.Body{}) {
				continue
			}
			if t.Locales == nil {
				t.Locales = make(map[string]map[notify.Kind]store.Body)
			}
			if t.Locales[tag] == nil {
				t.Locales[tag] = make(map[notify.Kind]store.Body)
			}
			t.Locales[tag][k] = b
			kept = append(kept, "locales."+tag+"."+string(k))
		}
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
	if strings.HasPrefix(msg, "locales") {
		return localeField(msg)
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

// localeField names the field of a template.Check error about a variant,
// msg being "<name>: <rule>", the name "locales", "locales.<tag>",
// "locales.<tag>.<kind>" or "locales.<tag>.<kind>.<part>": the wire's
// field is the name, but for the chat and sms kinds, whose body Check
// names by the kind alone, the field of their text.
func localeField(msg string) (field, rule string) {
	name, rule, ok := strings.Cut(msg, ": ")
	if !ok {
		return "locales", msg
	}
	if parts := strings.Split(name, "."); len(parts) == 3 && (parts[2] == string(chat.Kind) || parts[2] == string(sms.Kind)) {
		name += ".text"
	}
	return name, rule
}
