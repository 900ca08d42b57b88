package template

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/store"
)

// maxLocales bounds the variants of one custom template: each is
// compiled, and cached, with it.
const maxLocales = 64

// compileVariants compiles the Locales of src into t, whose base is
// compiled: each key must be a locale, distinct from the others once
// canonical, and each variant is checked against the base (see
// compileVariant). Keys are taken in sorted order, so the first error is
// always the same one.
func compileVariants(t *tmpl, src *store.Template) error {
	if len(src.Locales) == 0 {
		return nil
	}
	if len(src.Locales) > maxLocales {
		return badCustom(t.slug, "locales: more than %d locales", maxLocales)
	}
	keys := slices.Sorted(maps.Keys(src.Locales))
	tags := make(map[string]string, len(keys))  // key -> canonical tag
	given := make(map[string]string, len(keys)) // canonical tag -> key
	for _, key := range keys {
		tag, ok := locale.Canonical(key)
		if !ok {
			return badCustom(t.slug, "locales.%s: %s", clip(key, 40), locale.Rule)
		}
		if other, dup := given[tag]; dup {
			// Both would answer a request for tag: which one is a coin toss.
			return badCustom(t.slug, "locales.%s: the same locale as locales.%s (%s); give each locale once", key, other, tag)
		}
		tags[key], given[tag] = tag, key
	}
	t.variants = make(map[string]*variant, len(keys))
	for _, key := range keys {
		v, err := compileVariant(t, tags[key], "locales."+key+".", src.Locales[key])
		if err != nil {
			return err
		}
		t.variants[v.tag] = v
	}
	return nil
}

// compileVariant compiles one variant of t, its bodies by kind, naming
// its parts in errors after prefix ("locales.hi."). A variant words only
// kinds the base serves, uses only the base's variables, has every part
// the base's form of the same kind has, and each such part uses every
// variable without a default that the base's part uses: a wording that
// left out the order number would otherwise be found by the recipient
// who got it, not by the author who saved it. An empty body is no form,
// as in the base, and a variant needs at least one form.
func compileVariant(t *tmpl, tag, prefix string, bodies map[notify.Kind]store.Body) (*variant, error) {
	v := &variant{tag: tag, cloudName: t.cloudName, cloudLang: locale.Cloud(tag),
		forms: make(map[notify.Kind]*form, len(bodies))}
	index := func(name string) (int, error) {
		if i, ok := t.index[name]; ok {
			return i, nil
		}
		return 0, fmt.Errorf("{{%s}} is not a variable of the base, which has %s; a variant uses the base's variables", name, varNames(t))
	}
	for _, kind := range orderedKinds(bodies) {
		b := bodies[kind]
		if b == (store.Body{}) {
			continue
		}
		base := t.forms[kind]
		if base == nil {
			return nil, badCustom(t.slug, "%s%s: the base has no %s body; a variant words only the kinds its base serves",
				prefix, clip(string(kind), 40), kindWord(kind))
		}
		f, err := compileCustomForm(t.slug, prefix, kind, b, index)
		if err != nil {
			return nil, err
		}
		if err := checkVariantForm(t, prefix, kind, base, f); err != nil {
			return nil, err
		}
		v.forms[kind] = f
	}
	if len(v.forms) == 0 {
		return nil, badCustom(t.slug, "%s: no body: set the Text or HTML of a kind the base serves", strings.TrimSuffix(prefix, "."))
	}
	return v, nil
}

// checkVariantForm checks f, a variant's form of kind, against base, the
// base's form of kind; prefix starts the parts' names.
func checkVariantForm(t *tmpl, prefix string, kind notify.Kind, base, f *form) error {
	if f.subject != nil && f.html == nil && f.text == nil {
		return badCustom(t.slug, "%s%s: a subject without a body (Text or HTML)", prefix, partName(kind, partSubject))
	}
	for _, p := range [...]struct {
		part       string
		base, mine *body
	}{
		{partSubject, base.subject, f.subject},
		{partHTML, base.html, f.html},
		{partText, base.text, f.text},
	} {
		name := prefix + partName(kind, p.part)
		switch {
		case p.base == nil:
			continue
		case p.mine == nil:
			return badCustom(t.slug, "%s: missing: the base's %s body has this part, so each variant's has it too", name, kindWord(kind))
		}
		has := p.mine.uses(len(t.vars))
		for i, used := range p.base.uses(len(t.vars)) {
			if used && !has[i] && t.vars[i].def == noDefault {
				return badCustom(t.slug, "%s: {{%s}} is missing: the base's %s uses it, and it has no default",
					name, t.vars[i].name, partName(kind, p.part))
			}
		}
	}
	return nil
}

// uses reports, for each of n variables, whether b has a placeholder of it.
func (b *body) uses(n int) []bool {
	out := make([]bool, n)
	for _, s := range b.slots {
		out[s.v] = true
	}
	return out
}

// varNames lists t's variables for an error, before finish has made
// t.names.
func varNames(t *tmpl) string {
	if len(t.vars) == 0 {
		return "no variables"
	}
	names := make([]string, len(t.vars))
	for i, v := range t.vars {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}
