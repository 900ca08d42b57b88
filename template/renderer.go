package template

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
)

// Renderer renders the stock catalogue and the custom templates of each
// account. Create one with New and share it: all methods are safe for
// concurrent use.
type Renderer struct {
	store store.Templates
	stock map[string]*tmpl
	slugs []string
	cache cache
}

// New returns a Renderer over the stock catalogue, which it parses and
// compiles once, here, and over the custom templates of templates (nil:
// stock templates only). An error means the embedded catalogue is broken,
// which the package's tests rule out.
func New(templates store.Templates) (*Renderer, error) {
	stock, slugs, err := loadStock(stockFS)
	if err != nil {
		return nil, err
	}
	return &Renderer{store: templates, stock: stock, slugs: slugs}, nil
}

// Render renders the template slug for kind: the chat text (chat.Kind), the
// SMS text (sms.Kind) or the e-mail subject, HTML and text (email.Kind);
// for any other kind, the parts of a custom template's body for that kind.
//
// An account's custom template takes precedence over the stock template
// of the same slug, so an account can reword a stock message; the store
// is therefore asked first on every render when the Renderer has one and
// acct has an ID. A store error other than NotFound is returned with its
// code: without an answer Render cannot tell which wording applies.
//
// loc, a BCP 47 tag ("hi-IN", "hi_in"; "" for none), picks the wording
// by the fallback chain of the package documentation's "Locales": the
// first of the tag, its language, the account's default (acct.Locale) and
// its language whose variant has a body for kind, else the template's
// base. A well-formed tag without a variant falls back silently;
// Rendered.Locale names the variant rendered, canonical, "" for the base.
//
// Errors are InvalidArgument naming every problem: a loc that is not a
// tag ("locale"), an unknown slug (field "template_slug", with the
// nearest known slugs), a custom template without a body for kind or
// that no longer compiles ("template_slug"), and each missing, unknown or
// bad variable ("variables.NAME"). See the package documentation for the
// rules on variables. The result is the caller's.
func (r *Renderer) Render(ctx context.Context, kind notify.Kind, acct *notify.Account, slug, loc string, vars record.Vars) (*notify.Rendered, error) {
	tag, bad := requestLocale(loc)
	t, err := r.lookup(ctx, acct, slug)
	var out *notify.Rendered
	if err == nil {
		out, err = t.render(kind, acct, tag, vars)
	}
	if bad != nil {
		return nil, withField(err, *bad)
	}
	return out, err
}

// CloudTemplate maps a template and its variables to a cloud-channel
// template message: the template's cloud name (for stock templates the
// catalogue's "cloud" line, by default the slug with '-' replaced by '_';
// for custom templates always the latter), its language and the values
// of its variables as positional parameters in declaration order,
// defaults applied and runs of spaces collapsed (cloud parameters may not
// hold them). The cloud template must be registered with the same
// wording and parameter order; the chat body of the catalogue file is
// that wording.
//
// loc picks the wording as for Render with chat.Kind: the cloud template
// is the chat body's. The language is the chosen variant's (a stock
// variant file's "cloud" line; for a custom variant CloudLanguage of its
// tag, "hi", "hi_IN"), else the base's (en_US unless the catalogue says
// otherwise).
//
// It looks templates up and validates the locale and variables as Render
// does, with the same errors. The result is the caller's; HeaderURL and
// HeaderKind are left empty for the channel to fill.
func (r *Renderer) CloudTemplate(ctx context.Context, acct *notify.Account, slug, loc string, vars record.Vars) (*chat.Template, error) {
	tag, bad := requestLocale(loc)
	t, err := r.lookup(ctx, acct, slug)
	var out *chat.Template
	if err == nil {
		out, err = t.cloudTemplate(acct, tag, vars)
	}
	if bad != nil {
		return nil, withField(err, *bad)
	}
	return out, err
}

// cloudTemplate is CloudTemplate once the template is found: the variant
// is the one a chat render in tag would use. A template without a chat
// body still maps, in its base's name and language, as it always did.
func (t *tmpl) cloudTemplate(acct *notify.Account, tag string, vars record.Vars) (*chat.Template, error) {
	_, v, err := t.pick(chat.Kind, acct, tag)
	if err != nil {
		v = nil
	}
	vals, err := t.resolve(acct, vars, v)
	if err != nil {
		return nil, err
	}
	return t.cloud(v, vals), nil
}

// Slugs returns the slugs of the stock catalogue, sorted. The slice is the
// caller's.
func (r *Renderer) Slugs() []string { return slices.Clone(r.slugs) }

// Info describes a template: what Describe returns.
type Info struct {
	Slug string
	// About is a one-line description (stock templates only).
	About string
	Class record.PriceClass
	// Custom reports whether the template is the account's own.
	Custom bool
	// Variables are in declaration order, the order of positional values
	// and cloud parameters.
	Variables []Variable
	// Kinds are the channels the template has a body for.
	Kinds []notify.Kind
	// CloudName and CloudLanguage are what CloudTemplate uses for the
	// base.
	CloudName     string
	CloudLanguage string
	// Locales are the tags of the template's variants, canonical and
	// sorted ("hi", "hi-IN"); empty for a template with its base alone.
	Locales []string
}

// Variable describes one variable of a template.
type Variable struct {
	Name string
	// Required is false for variables with a default (ACTION, BRAND_NAME).
	Required bool
	// Default describes the default: "verification", or "the account's
	// name"; empty for required variables.
	Default string
	// Rule describes the rule values must follow, empty when any text goes.
	Rule string
}

// Describe returns the template an account would get for slug, with the
// same lookup and errors as Render. The result is the caller's.
func (r *Renderer) Describe(ctx context.Context, acct *notify.Account, slug string) (*Info, error) {
	t, err := r.lookup(ctx, acct, slug)
	if err != nil {
		return nil, err
	}
	info := &Info{Slug: t.slug, About: t.about, Class: t.class, Custom: t.custom,
		CloudName: t.cloudName, CloudLanguage: t.cloudLang}
	for _, v := range t.vars {
		d := ""
		switch v.def {
		case defVerification:
			d = "verification"
		case defAccountName:
			d = "the account's name"
		}
		rule := v.check.validate("") // the empty value breaks every rule but "any text"
		info.Variables = append(info.Variables, Variable{Name: v.name, Required: v.def == noDefault, Default: d, Rule: rule})
	}
	info.Kinds = slices.Clone(t.kinds)
	info.Locales = slices.Clone(t.locales)
	return info, nil
}

// lookup finds the template an account gets for slug: its custom template
// first, then the stock one.
func (r *Renderer) lookup(ctx context.Context, acct *notify.Account, slug string) (*tmpl, error) {
	if !validSlug(slug) {
		return nil, r.unknown(ctx, acct, slug)
	}
	if r.store != nil && acct != nil && acct.ID != "" {
		ct, err := r.store.Template(ctx, acct.ID, slug)
		switch {
		case err == nil && ct != nil:
			t, err := r.cache.get(acct.ID, ct)
			if err != nil {
				return nil, &notify.Error{Code: notify.CodeInvalidArgument, Err: err,
					Fields: []record.FieldError{{Field: "template_slug",
						Message: fmt.Sprintf("custom template %q cannot be used; fix it in the template store", slug)}}}
			}
			return t, nil
		case err != nil && notify.CodeOf(err) != notify.CodeNotFound:
			return nil, &notify.Error{Code: notify.CodeOf(err),
				Err: fmt.Errorf("template: looking up custom template %q: %w", slug, err)}
		}
	}
	if t, ok := r.stock[slug]; ok {
		return t, nil
	}
	return nil, r.unknown(ctx, acct, slug)
}

// unknown builds the error for a slug that names no template, suggesting
// the nearest stock and custom slugs.
func (r *Renderer) unknown(ctx context.Context, acct *notify.Account, slug string) error {
	var msg strings.Builder
	msg.WriteString("unknown template ")
	msg.WriteString(strconv.Quote(clip(clean(slug), 64)))
	if slug != "" && !validSlug(slug) {
		msg.WriteString(" (slugs are 1-64 lower-case letters, digits, '-' and '_')")
	}
	candidates := r.slugs
	if r.store != nil && acct != nil && acct.ID != "" {
		if custom, err := r.store.Templates(ctx, acct.ID); err == nil {
			candidates = slices.Clone(r.slugs)
			// Bounded: this runs for every unknown slug a client sends.
			for _, t := range custom[:min(len(custom), 200)] {
				if t != nil {
					candidates = append(candidates, t.Slug)
				}
			}
		}
	}
	if near := nearest(slug, candidates, 3); len(near) > 0 {
		msg.WriteString("; did you mean ")
		msg.WriteString(orList(near))
		msg.WriteString("?")
	} else {
		msg.WriteString("; stock templates are ")
		msg.WriteString(strings.Join(r.slugs, ", "))
	}
	return &notify.Error{Code: notify.CodeInvalidArgument, Err: errorString("template: unknown slug"),
		Fields: []record.FieldError{{Field: "template_slug", Message: msg.String()}}}
}

// Interface guards: the chat channel finds the cloud mapping by a type
// assertion on its Renderer, which a changed signature would fail
// silently.
var (
	_ notify.TemplateRenderer = (*Renderer)(nil)
	_ chat.CloudTemplater     = (*Renderer)(nil)
)
