package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// TemplatesHarness connects RunTemplates to one store.Templates.
type TemplatesHarness struct {
	// New returns a store, releasing it with t.Cleanup. Required.
	New func(t *testing.T) store.Templates
}

// RunTemplates checks a store.Templates:
//
//   - PutTemplate then Template returns every field, the Bodies exactly
//     as given: every kind (not only sms, chat and email, so "push" too),
//     every part of each, the strings unchanged (spaces, line breaks);
//     the Locales likewise, each variant's bodies by kind under its tag
//     as given ("hi", "hi-IN", even "hi_in": stores do not judge tags);
//   - PutTemplate with a slug in use replaces that template, its Locales
//     included: a replacement without them has none;
//   - templates belong to accounts: a slug of one is not found on another;
//   - an unknown slug is ErrNotFound for Template and DeleteTemplate;
//   - DeleteTemplate removes the template;
//   - Templates lists the account's templates sorted by slug, and an
//     account without templates gets an empty list and no error;
//   - a nil template or an empty slug is ErrInvalid;
//   - changing a template after PutTemplate, or one the store returned
//     (its fields, its Variables, its Bodies map, its Locales map and
//     each variant's map of bodies), changes nothing in the store;
//   - 64 goroutines putting and reading at once lose nothing.
func RunTemplates(t *testing.T, h TemplatesHarness) {
	t.Helper()
	needs(t, h.New != nil, "TemplatesHarness needs New")
	runAll(t, []subtest{
		{"RoundTrip", func(t *testing.T) { testTemplateRoundTrip(t, h) }},
		{"Replace", func(t *testing.T) { testTemplateReplace(t, h) }},
		{"PerAccount", func(t *testing.T) { testTemplatePerAccount(t, h) }},
		{"NotFound", func(t *testing.T) { testTemplateNotFound(t, h) }},
		{"Delete", func(t *testing.T) { testTemplateDelete(t, h) }},
		{"List", func(t *testing.T) { testTemplateList(t, h) }},
		{"Invalid", func(t *testing.T) { testTemplateInvalid(t, h) }},
		{"CallersCannotChangeStore", func(t *testing.T) { testTemplateCopies(t, h) }},
		{"Concurrent", func(t *testing.T) { testTemplatesConcurrent(t, h) }},
	})
}

// fullTemplate has a body for each kind the module's channels use and
// one for "push", a kind a store knows nothing of: stores keep bodies
// opaque, whatever their kind and parts.
func fullTemplate(slug string) *store.Template {
	return &store.Template{
		Slug:      slug,
		Variables: []string{"NAME", "ORDER"},
		Class:     transactional,
		Bodies: map[record.Kind]store.Body{
			"chat": {Text: "Hi {{NAME}}, order {{ORDER}} has shipped."},
			"sms":  {Text: "Order {{ORDER}} shipped. -Acme"},
			"email": {
				Subject: "Order {{ORDER}} shipped",
				HTML:    "<p>Hi {{NAME}},</p>\n<p>Order <b>{{ORDER}}</b> has shipped.</p>",
				Text:    "Hi {{NAME}},\n\norder {{ORDER}} has shipped. \n",
			},
			"push": {Subject: "  Shipped: {{ORDER}}", Text: "Order {{ORDER}} is on its way — \"Acme\""},
		},
		Locales: map[string]map[record.Kind]store.Body{
			"hi": {
				"sms": {Text: "ऑर्डर {{ORDER}} भेज दिया गया है। -Acme"},
				"email": {
					Subject: "ऑर्डर {{ORDER}} भेज दिया गया",
					HTML:    "<p>नमस्ते {{NAME}},</p>\n<p>ऑर्डर <b>{{ORDER}}</b> भेज दिया गया है।</p>",
					Text:    "नमस्ते {{NAME}},\n\nऑर्डर {{ORDER}} भेज दिया गया है। \n",
				},
			},
			"hi-IN": {"chat": {Text: "{{NAME}} जी, ऑर्डर {{ORDER}} रास्ते में है।"}},
		},
	}
}

func diffTemplate(got, want *store.Template) string {
	if got == nil {
		return "nil template"
	}
	var d diffs
	d.quoted("Slug", got.Slug, want.Slug)
	d.quoted("Class", got.Class, want.Class)
	if !slices.Equal(got.Variables, want.Variables) {
		d.add("Variables = %q, want %q", got.Variables, want.Variables)
	}
	diffBodies(&d, "Bodies", got.Bodies, want.Bodies)
	// A variant with no bodies is one a store may keep as an empty map or
	// as nil, as a template's Bodies; a missing variant is another thing.
	tags := slices.Sorted(maps.Keys(want.Locales))
	for tag := range got.Locales {
		if _, ok := want.Locales[tag]; !ok {
			tags = append(tags, tag)
		}
	}
	for _, tag := range tags {
		g, gok := got.Locales[tag]
		w, wok := want.Locales[tag]
		switch {
		case !gok:
			d.add("Locales[%q] missing, want %d bodies", tag, len(w))
		case !wok:
			d.add("Locales[%q] = %d bodies, want none", tag, len(g))
		default:
			diffBodies(&d, fmt.Sprintf("Locales[%q]", tag), g, w)
		}
	}
	return d.String()
}

// diffBodies notes how the bodies got differ from want, naming them as
// name ("Bodies", `Locales["hi"]`).
func diffBodies(d *diffs, name string, got, want map[record.Kind]store.Body) {
	if maps.Equal(got, want) {
		return
	}
	kinds := slices.Sorted(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			kinds = append(kinds, k)
		}
	}
	for _, k := range kinds {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			d.add("%s[%q] missing, want %s", name, k, fmtBody(w))
		case !wok:
			d.add("%s[%q] = %s, want none", name, k, fmtBody(g))
		case g != w:
			d.add("%s[%q] = %s, want %s", name, k, fmtBody(g), fmtBody(w))
		}
	}
}

func fmtBody(b store.Body) string {
	return fmt.Sprintf("{Subject: %q, Text: %q, HTML: %q}", b.Subject, b.Text, b.HTML)
}

func newTemplates(t *testing.T, h TemplatesHarness) store.Templates {
	t.Helper()
	s := h.New(t)
	if s == nil {
		t.Fatal("TemplatesHarness.New returned nil")
	}
	return s
}

func put(t *testing.T, s store.Templates, account string, tpl *store.Template) {
	t.Helper()
	if err := s.PutTemplate(context.Background(), account, tpl); err != nil {
		t.Fatalf("PutTemplate(%s): %v", tpl.Slug, err)
	}
}

func wantTemplate(t *testing.T, s store.Templates, account string, want *store.Template) {
	t.Helper()
	got, err := s.Template(context.Background(), account, want.Slug)
	if err != nil {
		t.Fatalf("Template(%s): %v", want.Slug, err)
	}
	if d := diffTemplate(got, want); d != "" {
		t.Fatalf("Template(%s): %s", want.Slug, d)
	}
}

func testTemplateRoundTrip(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct := newName("acct")
	full := fullTemplate("order-shipped")
	smsOnly := &store.Template{Slug: "otp-plain", Variables: []string{"OTP"}, Class: transactional,
		Bodies: map[record.Kind]store.Body{"sms": {Text: "Your code is {{OTP}}"}}}
	pushOnly := &store.Template{Slug: "push-only", Class: promotional,
		Bodies: map[record.Kind]store.Body{"push": {Subject: "Sale", Text: "50% off\ttoday only"}}}
	bare := &store.Template{Slug: "no-bodies"}
	// Tags as the caller wrote them, a variant of any kind, one with an
	// empty body: the store keeps what it is given.
	odd := &store.Template{Slug: "odd-locales", Variables: []string{"NAME"},
		Bodies: map[record.Kind]store.Body{"push": {Text: "Hi {{NAME}}"}},
		Locales: map[string]map[record.Kind]store.Body{
			"hi_in":      {"push": {Subject: "नमस्ते", Text: "  नमस्ते {{NAME}}\t"}},
			"zh-Hant-TW": {"push": {Text: "你好 {{NAME}}"}, "fax": {}},
		}}
	for _, tpl := range []*store.Template{full, smsOnly, pushOnly, bare, odd} {
		put(t, s, acct, storeutil.CloneTemplate(tpl))
		wantTemplate(t, s, acct, tpl)
	}
}

func testTemplateReplace(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct := newName("acct")
	put(t, s, acct, fullTemplate("promo"))
	next := &store.Template{Slug: "promo", Class: promotional, Variables: nil,
		Bodies: map[record.Kind]store.Body{"chat": {Text: "50% off today"}}}
	put(t, s, acct, storeutil.CloneTemplate(next))
	wantTemplate(t, s, acct, next)
	// Variants come and go with the template that has them.
	withLocales := storeutil.CloneTemplate(next)
	withLocales.Locales = map[string]map[record.Kind]store.Body{"mr": {"chat": {Text: "आज 50% सूट"}}}
	put(t, s, acct, storeutil.CloneTemplate(withLocales))
	wantTemplate(t, s, acct, withLocales)
	changed := storeutil.CloneTemplate(withLocales)
	changed.Locales = map[string]map[record.Kind]store.Body{"hi": {"chat": {Text: "आज 50% की छूट"}}}
	put(t, s, acct, storeutil.CloneTemplate(changed))
	wantTemplate(t, s, acct, changed)
	put(t, s, acct, storeutil.CloneTemplate(next))
	got, err := s.Template(context.Background(), acct, "promo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Locales) != 0 {
		t.Fatalf("a replacement without Locales kept %d variants: %v", len(got.Locales), got.Locales)
	}
}

func testTemplatePerAccount(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	a, b := newName("acct"), newName("acct")
	ta := fullTemplate("welcome")
	tb := fullTemplate("welcome")
	tb.Bodies["chat"] = store.Body{Text: "Welcome aboard, {{NAME}}"}
	put(t, s, a, storeutil.CloneTemplate(ta))
	wantCodeTemplate(t, s, b, "welcome")
	put(t, s, b, storeutil.CloneTemplate(tb))
	wantTemplate(t, s, a, ta)
	wantTemplate(t, s, b, tb)
}

func wantCodeTemplate(t *testing.T, s store.Templates, account, slug string) {
	t.Helper()
	_, err := s.Template(context.Background(), account, slug)
	wantErr(t, fmt.Sprintf("Template(%s) of an account without it", slug), err, store.ErrNotFound)
}

func testTemplateNotFound(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct := newName("acct")
	wantCodeTemplate(t, s, acct, "nothing")
	put(t, s, acct, fullTemplate("something"))
	wantCodeTemplate(t, s, acct, "nothing")
	err := s.DeleteTemplate(context.Background(), acct, "nothing")
	wantErr(t, "DeleteTemplate of an unknown slug", err, store.ErrNotFound)
}

func testTemplateDelete(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct := newName("acct")
	put(t, s, acct, fullTemplate("a"))
	put(t, s, acct, fullTemplate("b"))
	if err := s.DeleteTemplate(context.Background(), acct, "a"); err != nil {
		t.Fatalf("DeleteTemplate: %v", err)
	}
	wantCodeTemplate(t, s, acct, "a")
	wantTemplate(t, s, acct, fullTemplate("b"))
	err := s.DeleteTemplate(context.Background(), acct, "a")
	wantErr(t, "second DeleteTemplate", err, store.ErrNotFound)
}

func testTemplateList(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct, other := newName("acct"), newName("acct")
	ctx := context.Background()
	list, err := s.Templates(ctx, acct)
	if err != nil || len(list) != 0 {
		t.Fatalf("Templates of an account without any = %v, %v; want an empty list", list, err)
	}
	for _, slug := range []string{"receipt", "alert", "welcome", "otp"} {
		put(t, s, acct, fullTemplate(slug))
	}
	put(t, s, other, fullTemplate("not-mine"))
	list, err = s.Templates(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, tpl := range list {
		slugs = append(slugs, tpl.Slug)
		if d := diffTemplate(tpl, fullTemplate(tpl.Slug)); d != "" {
			t.Errorf("listed %s: %s", tpl.Slug, d)
		}
	}
	if want := []string{"alert", "otp", "receipt", "welcome"}; !slices.Equal(slugs, want) {
		t.Fatalf("Templates = %q, want %q", slugs, want)
	}
}

func testTemplateInvalid(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct := newName("acct")
	ctx := context.Background()
	err := s.PutTemplate(ctx, acct, nil)
	wantErr(t, "PutTemplate(nil)", err, store.ErrInvalid)
	noSlug := fullTemplate("")
	err = s.PutTemplate(ctx, acct, noSlug)
	wantErr(t, "PutTemplate without a slug", err, store.ErrInvalid)
	if list, err := s.Templates(ctx, acct); err != nil || len(list) != 0 {
		t.Fatalf("refused puts stored templates: %v, %v", list, err)
	}
}

func testTemplateCopies(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct := newName("acct")
	ctx := context.Background()
	want := fullTemplate("copy")
	mine := storeutil.CloneTemplate(want)
	put(t, s, acct, mine)
	mine.Class = promotional
	mine.Bodies["chat"] = store.Body{Text: "changed by the caller"}
	delete(mine.Bodies, "sms")
	mine.Bodies["fax"] = store.Body{Text: "added by the caller"}
	mine.Variables[0] = "CHANGED"
	mine.Locales["hi"]["sms"] = store.Body{Text: "changed by the caller"}
	delete(mine.Locales["hi"], "email")
	delete(mine.Locales, "hi-IN")
	mine.Locales["mr"] = map[record.Kind]store.Body{"sms": {Text: "added by the caller"}}
	wantTemplate(t, s, acct, want)

	got, err := s.Template(ctx, acct, "copy")
	if err != nil {
		t.Fatal(err)
	}
	got.Bodies["sms"] = store.Body{Text: "changed by a reader"}
	delete(got.Bodies, "push")
	got.Bodies["fax"] = store.Body{Text: "added by a reader"}
	got.Variables[1] = "CHANGED"
	got.Locales["hi-IN"]["chat"] = store.Body{Text: "changed by a reader"}
	got.Locales["hi"]["fax"] = store.Body{Text: "added by a reader"}
	delete(got.Locales, "hi")
	wantTemplate(t, s, acct, want)

	list, err := s.Templates(ctx, acct)
	if err != nil || len(list) != 1 {
		t.Fatalf("Templates = %v, %v", list, err)
	}
	list[0].Bodies["email"] = store.Body{HTML: "changed by a reader"}
	delete(list[0].Bodies, "chat")
	list[0].Variables[0] = "CHANGED"
	list[0].Locales["hi"]["sms"] = store.Body{Text: "changed by a reader"}
	list[0].Locales["ta"] = nil
	wantTemplate(t, s, acct, want)
	list, err = s.Templates(ctx, acct)
	if err != nil || len(list) != 1 {
		t.Fatalf("Templates = %v, %v", list, err)
	}
	if d := diffTemplate(list[0], want); d != "" {
		t.Fatalf("listed after a reader changed a listed one: %s", d)
	}
}

func testTemplatesConcurrent(t *testing.T, h TemplatesHarness) {
	s := newTemplates(t, h)
	acct := newName("acct")
	var wg sync.WaitGroup
	errs := make(chan error, Goroutines)
	for g := 0; g < Goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; i < 5; i++ {
				tpl := fullTemplate(fmt.Sprintf("t-%02d-%d", g, i))
				if err := s.PutTemplate(ctx, acct, tpl); err != nil {
					errs <- err
					return
				}
				if got, err := s.Template(ctx, acct, tpl.Slug); err != nil || got.Slug != tpl.Slug {
					errs <- fmt.Errorf("Template(%s) right after PutTemplate = %v, %v", tpl.Slug, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	list, err := s.Templates(context.Background(), acct)
	if err != nil || len(list) != Goroutines*5 {
		t.Fatalf("Templates after the goroutines: %d templates, %v; want %d", len(list), err, Goroutines*5)
	}
}
