package template_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/template"
)

func TestCanonicalLocale(t *testing.T) {
	for in, want := range map[string]string{
		"hi": "hi", "HI": "hi", "hi-in": "hi-IN", "hi_IN": "hi-IN", "HI_in": "hi-IN",
		"zh-hant-tw": "zh-Hant-TW", "es-419": "es-419", "fil": "fil",
		"": "", "hindi": "", "h": "", "hi-": "", "hi IN": "", "hi-IN-x": "", "en-US-u-ca-gregory": "", "हि": "",
	} {
		got, ok := template.CanonicalLocale(in)
		if got != want || ok != (want != "") {
			t.Errorf("CanonicalLocale(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for in, want := range map[string]string{"hi-IN": "hi_IN", "hi_in": "hi_IN", "en": "en", "pt-br": "pt_BR", "bad tag": ""} {
		if got := template.CloudLanguage(in); got != want {
			t.Errorf("CloudLanguage(%q) = %q, want %q", in, got, want)
		}
	}
}

// greeting is a custom template with variants: hi-IN words SMS alone, hi
// SMS and chat, mr every kind; the base words SMS, chat and e-mail.
func greeting() *store.Template {
	return &store.Template{Slug: "greeting", Variables: []string{"NAME"},
		Bodies: map[notify.Kind]store.Body{
			sms.Kind:   {Text: "Hello {{NAME}}"},
			chat.Kind:  {Text: "Hello *{{NAME}}*"},
			email.Kind: {Subject: "Hello", Text: "Hello {{NAME}}"},
		},
		Locales: map[string]map[notify.Kind]store.Body{
			"hi-IN": {sms.Kind: {Text: "{{NAME}} जी, नमस्ते"}},
			"hi":    {sms.Kind: {Text: "नमस्ते {{NAME}}"}, chat.Kind: {Text: "नमस्ते *{{NAME}}*"}},
			"mr":    {sms.Kind: {Text: "नमस्कार {{NAME}}"}, chat.Kind: {Text: "नमस्कार *{{NAME}}*"}, email.Kind: {Subject: "नमस्कार", Text: "नमस्कार {{NAME}}"}},
		},
	}
}

// TestLocaleChain follows the fallback chain: the request's tag, its
// language, the account's default, its language, the base; a link whose
// variant lacks the kind is skipped; Rendered.Locale is the variant's
// canonical tag, "" for the base.
func TestLocaleChain(t *testing.T) {
	s := newMemTemplates()
	put(t, s, "acme", greeting())
	r := newRenderer(t, s)
	ctx := context.Background()
	vars := record.Vars{"NAME": "Asha"}
	for _, c := range []struct {
		name, loc, def string
		kind           notify.Kind
		locale, text   string
	}{
		{"tag", "hi-IN", "", sms.Kind, "hi-IN", "Asha जी, नमस्ते"},
		{"tag in any case, with _", "HI_in", "", sms.Kind, "hi-IN", "Asha जी, नमस्ते"},
		{"tag, then its language", "hi-IN", "", chat.Kind, "hi", "नमस्ते *Asha*"},
		{"language alone", "hi", "", sms.Kind, "hi", "नमस्ते Asha"},
		{"a region without a variant: the language", "hi-Deva-FJ", "", sms.Kind, "hi", "नमस्ते Asha"},
		{"no link has the kind: the base", "hi-IN", "", email.Kind, "", "Hello Asha"},
		{"unknown tag: the account's default", "fr-CA", "hi", sms.Kind, "hi", "नमस्ते Asha"},
		{"unknown tag: the default's language", "fr-CA", "mr-IN", sms.Kind, "mr", "नमस्कार Asha"},
		{"the default in any case", "fr-CA", "HI_in", sms.Kind, "hi-IN", "Asha जी, नमस्ते"},
		{"unknown tag, no default: the base", "fr-CA", "", sms.Kind, "", "Hello Asha"},
		{"unknown tag, unknown default: the base", "fr-CA", "de", sms.Kind, "", "Hello Asha"},
		{"a default that is no tag is no default", "fr-CA", "Hindi please", sms.Kind, "", "Hello Asha"},
		{"no locale: the default", "", "hi-IN", sms.Kind, "hi-IN", "Asha जी, नमस्ते"},
		{"no locale, no default: the base", "", "", sms.Kind, "", "Hello Asha"},
		{"the request before the default", "mr", "hi", sms.Kind, "mr", "नमस्कार Asha"},
		{"the request's language before the default", "hi-IN", "mr", chat.Kind, "hi", "नमस्ते *Asha*"},
		{"the default's kind missing: its language, then the base", "", "hi-IN", email.Kind, "", "Hello Asha"},
		{"e-mail in a variant", "mr-IN", "", email.Kind, "mr", "नमस्कार Asha"},
	} {
		t.Run(c.name, func(t *testing.T) {
			acct := &notify.Account{ID: "acme", Name: "Acme", Locale: c.def}
			out, err := r.Render(ctx, c.kind, acct, "greeting", c.loc, vars)
			if err != nil {
				t.Fatal(err)
			}
			if out.Locale != c.locale || out.Text != c.text {
				t.Errorf("Render(%s, %q, default %q) = %q in %q; want %q in %q", c.kind, c.loc, c.def, out.Text, out.Locale, c.text, c.locale)
			}
		})
	}
}

// TestStockLocaleChain: the stock bases are English, so a request for
// English gets the base even when the account's default has a variant,
// and a request for a language the catalogue lacks gets the default's.
func TestStockLocaleChain(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	vars := record.Vars{"OTP": "482913", "ACTION": "login"}
	hindi := &notify.Account{Name: "Acme", Locale: "hi"}
	for _, c := range []struct {
		loc    string
		acct   *notify.Account
		locale string
	}{
		{"hi-IN", sampleAccount(), "hi"},
		{"en", hindi, ""},
		{"en-IN", hindi, ""},
		{"fr-CA", hindi, "hi"},
		{"", hindi, "hi"},
		{"fr-CA", sampleAccount(), ""},
		{"", &notify.Account{Name: "Acme"}, ""},
	} {
		out, err := r.Render(ctx, sms.Kind, c.acct, "standard-otp", c.loc, vars)
		if err != nil {
			t.Fatalf("%q: %v", c.loc, err)
		}
		if out.Locale != c.locale || strings.HasPrefix(out.Text, "482913 is your") != (c.locale == "") {
			t.Errorf("Render(%q) for %+v = %q in %q, want the %q wording", c.loc, c.acct, out.Text, out.Locale, c.locale)
		}
	}
}

// TestBadLocale: a locale that is not a tag is InvalidArgument on
// "locale", with the template's other problems, for Render and
// CloudTemplate, stock and custom alike.
func TestBadLocale(t *testing.T) {
	s := newMemTemplates()
	put(t, s, "acme", greeting())
	r := newRenderer(t, s)
	ctx := context.Background()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	for _, loc := range []string{"hindi", "hi-", "hi IN", "en-US-u-ca", strings.Repeat("a", 100), "हि"} {
		_, err := r.Render(ctx, sms.Kind, acct, "greeting", loc, record.Vars{"NAME": "Asha"})
		if f := fieldsOf(t, err); len(f) != 1 || !strings.Contains(f["locale"], "BCP 47") {
			t.Errorf("Render(%q): %v", loc, err)
		}
		_, err = r.CloudTemplate(ctx, acct, "standard-otp", loc, record.Vars{"OTP": "1234"})
		if f := fieldsOf(t, err); len(f) != 1 || f["locale"] == "" {
			t.Errorf("CloudTemplate(%q): %v", loc, err)
		}
	}
	// Every problem at once: the locale first.
	_, err := r.Render(ctx, sms.Kind, acct, "greeting", "xx-", nil)
	var e *notify.Error
	if f := fieldsOf(t, err); len(f) != 2 || f["variables.NAME"] == "" || !errors.As(err, &e) || e.Fields[0].Field != "locale" {
		t.Errorf("bad locale and a missing variable: %v", err)
	}
	_, err = r.Render(ctx, sms.Kind, acct, "no-such-template", "xx-", nil)
	if f := fieldsOf(t, err); len(f) != 2 || f["template_slug"] == "" || f["locale"] == "" {
		t.Errorf("bad locale and an unknown slug: %v", err)
	}
	// A store that is down and a bad locale: the request is refused for
	// its locale whatever the store says.
	s.err = notify.Errorf(notify.CodeUnavailable, "db down")
	_, err = r.Render(ctx, sms.Kind, acct, "greeting", "xx-", record.Vars{"NAME": "Asha"})
	if f := fieldsOf(t, err); len(f) != 1 || f["locale"] == "" {
		t.Errorf("bad locale, store down: %v", err)
	}
}

// TestCloudTemplateLocale: the cloud template's language follows the
// variant a chat render would use; a custom variant's is its tag as the
// cloud API writes it.
func TestCloudTemplateLocale(t *testing.T) {
	s := newMemTemplates()
	put(t, s, "acme", greeting())
	r := newRenderer(t, s)
	ctx := context.Background()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	vars := record.Vars{"NAME": "Asha"}
	for loc, want := range map[string]string{
		"": "en_US", "fr": "en_US",
		"hi": "hi", "hi-IN": "hi", // hi-IN has no chat body: the cloud template is hi's
		"mr-in": "mr",
	} {
		ct, err := r.CloudTemplate(ctx, acct, "greeting", loc, vars)
		if err != nil || ct.Name != "greeting" || ct.Language != want || !slices.Equal(ct.Params, []string{"Asha"}) {
			t.Errorf("CloudTemplate(%q) = %+v, %v; want language %s", loc, ct, err, want)
		}
	}
	// A variant of SMS alone: the chat template is the base's.
	smsOnly := greeting()
	smsOnly.Slug = "sms-variant"
	smsOnly.Locales = map[string]map[notify.Kind]store.Body{"hi-IN": {sms.Kind: {Text: "नमस्ते {{NAME}}"}}}
	put(t, s, "acme", smsOnly)
	if ct, err := r.CloudTemplate(ctx, acct, "sms-variant", "hi-IN", vars); err != nil || ct.Language != "en_US" {
		t.Errorf("CloudTemplate of an SMS-only variant = %+v, %v; want the base's en_US", ct, err)
	}
	// A region's variant: the cloud API's language_REGION.
	regional := greeting()
	regional.Slug = "regional"
	regional.Locales = map[string]map[notify.Kind]store.Body{"pt_br": {chat.Kind: {Text: "Olá *{{NAME}}*"}}}
	put(t, s, "acme", regional)
	if ct, err := r.CloudTemplate(ctx, acct, "regional", "pt-BR", vars); err != nil || ct.Language != "pt_BR" {
		t.Errorf("CloudTemplate of pt-BR = %+v, %v; want pt_BR", ct, err)
	}
	info, err := r.Describe(ctx, acct, "greeting")
	if err != nil || !slices.Equal(info.Locales, []string{"hi", "hi-IN", "mr"}) || info.CloudLanguage != "en_US" {
		t.Errorf("Describe: %+v, %v", info, err)
	}
	if info, err := r.Describe(ctx, acct, "regional"); err != nil || !slices.Equal(info.Locales, []string{"pt-BR"}) {
		t.Errorf("Describe(regional): %+v, %v", info, err)
	}
}

// TestCheckLocales: a variant's mistakes are caught when the template is
// checked, each naming the variant, the part and, where there is one,
// the variable.
func TestCheckLocales(t *testing.T) {
	with := func(locales map[string]map[notify.Kind]store.Body) *store.Template {
		tpl := greeting()
		tpl.Locales = locales
		return tpl
	}
	type bodies = map[notify.Kind]store.Body
	many := map[string]map[notify.Kind]store.Body{}
	for _, a := range "abcdefghijklmnopqrstuvwxyz" {
		for _, b := range "abc" {
			many[string(a)+string(b)] = bodies{sms.Kind: {Text: "{{NAME}}"}}
		}
	}
	cases := []struct {
		name    string
		locales map[string]map[notify.Kind]store.Body
		has     string
	}{
		{"not a tag", map[string]bodies{"hindi": {sms.Kind: {Text: "{{NAME}}"}}}, `locales.hindi: must be a BCP 47 language tag`},
		{"empty tag", map[string]bodies{"": {sms.Kind: {Text: "{{NAME}}"}}}, `locales.: must be a BCP 47 language tag`},
		{"one tag twice", map[string]bodies{"hi-IN": {sms.Kind: {Text: "{{NAME}}"}}, "hi_in": {sms.Kind: {Text: "{{NAME}}"}}},
			`locales.hi_in: the same locale as locales.hi-IN (hi-IN); give each locale once`},
		{"unknown variable", map[string]bodies{"hi": {sms.Kind: {Text: "{{NAME}} {{CITY}}"}}},
			`locales.hi.sms: line 1, column 10: {{CITY}} is not a variable of the base, which has NAME`},
		{"a default the base does not use", map[string]bodies{"hi": {sms.Kind: {Text: "{{NAME}} {{BRAND_NAME}}"}}},
			`locales.hi.sms: line 1, column 10: {{BRAND_NAME}} is not a variable of the base`},
		{"missing variable", map[string]bodies{"hi": {sms.Kind: {Text: "नमस्ते"}}},
			`locales.hi.sms: {{NAME}} is missing: the base's sms uses it, and it has no default`},
		{"missing in one e-mail part", map[string]bodies{"hi": {email.Kind: {Subject: "नमस्ते", Text: "नमस्ते"}}},
			`locales.hi.email.text: {{NAME}} is missing: the base's email.text uses it`},
		{"missing part", map[string]bodies{"hi": {email.Kind: {Text: "नमस्ते {{NAME}}"}}},
			`locales.hi.email.subject: missing: the base's e-mail body has this part, so each variant's has it too`},
		{"subject alone", map[string]bodies{"hi": {email.Kind: {Subject: "नमस्ते"}}},
			`locales.hi.email.subject: a subject without a body`},
		{"a kind the base lacks", map[string]bodies{"hi": {"push": {Text: "{{NAME}}"}}},
			`locales.hi.push: the base has no push body; a variant words only the kinds its base serves`},
		{"no body", map[string]bodies{"hi": {sms.Kind: {}}}, `locales.hi: no body`},
		{"nothing at all", map[string]bodies{"hi": nil}, `locales.hi: no body`},
		{"bad placeholder", map[string]bodies{"hi": {chat.Kind: {Text: "{{NAME}} {{name}}"}}}, `locales.hi.chat: line 1, column 10: bad placeholder`},
		{"html part for sms", map[string]bodies{"hi": {sms.Kind: {Text: "{{NAME}}", HTML: "<p>x</p>"}}},
			`locales.hi.sms.html: the sms channel sends only a text body`},
		{"script", map[string]bodies{"hi": {email.Kind: {Subject: "s", Text: "{{NAME}}", HTML: "<script>{{NAME}}</script>"}}},
			`locales.hi.email.html: line 1, column 9: {{NAME}}: placeholders are not allowed inside <script>`},
		{"too many", many, "locales: more than 64 locales"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := template.Check(with(c.locales))
			if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), c.has) {
				t.Errorf("Check: %v\nwant InvalidArgument saying %q", err, c.has)
			}
		})
	}
	// What a variant may do: leave out kinds, use the variables in
	// another order, add a part the base lacks, use a default's variable
	// the base uses or leave it out.
	good := &store.Template{Slug: "ok", Variables: []string{"NAME", "ORDER"},
		Bodies: map[notify.Kind]store.Body{
			sms.Kind:   {Text: "{{NAME}}: order {{ORDER}}. {{BRAND_NAME}}"},
			email.Kind: {Text: "{{NAME}} {{ORDER}}"},
		},
		Locales: map[string]map[notify.Kind]store.Body{
			"hi-IN": {sms.Kind: {Text: "ऑर्डर {{ORDER}}, {{NAME}} जी"}},
			"hi":    {email.Kind: {Subject: "ऑर्डर {{ORDER}}", Text: "{{ORDER}} {{NAME}}", HTML: "<p>{{NAME}}</p>"}},
		}}
	if err := template.Check(good); err != nil {
		t.Errorf("Check(good): %v", err)
	}
}

// TestVariantURLRule: a variable that starts a URL attribute in a
// variant's HTML is a URL in every wording: values are checked before
// the wording is chosen.
func TestVariantURLRule(t *testing.T) {
	s := newMemTemplates()
	put(t, s, "acme", &store.Template{Slug: "doc", Bodies: map[notify.Kind]store.Body{email.Kind: {Text: "{{DOC}}", HTML: "<p>{{DOC}}</p>"}},
		Locales: map[string]map[notify.Kind]store.Body{"hi": {email.Kind: {Text: "{{DOC}}", HTML: `<a href="{{DOC}}">दस्तावेज़</a>`}}}})
	r := newRenderer(t, s)
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	for _, loc := range []string{"", "hi"} {
		_, err := r.Render(context.Background(), email.Kind, acct, "doc", loc, record.Vars{"DOC": "javascript:alert(1)"})
		if f := fieldsOf(t, err); !strings.Contains(f["variables.DOC"], "https:// URL") {
			t.Errorf("locale %q: %v", loc, err)
		}
	}
	out, err := r.Render(context.Background(), email.Kind, acct, "doc", "hi", record.Vars{"DOC": "https://a.example/d?x=1&y=2"})
	if err != nil || out.HTML != `<a href="https://a.example/d?x=1&amp;y=2">दस्तावेज़</a>` || out.Locale != "hi" {
		t.Errorf("render: %+v, %v", out, err)
	}
}

// TestLocalesChangeIsSeen: a template whose variants alone change is
// recompiled on its next render.
func TestLocalesChangeIsSeen(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	tpl := greeting()
	put(t, s, acct.ID, tpl)
	r := newRenderer(t, s)
	ctx := context.Background()
	render := func() string {
		t.Helper()
		out, err := r.Render(ctx, sms.Kind, acct, "greeting", "hi", record.Vars{"NAME": "Asha"})
		if err != nil {
			t.Fatal(err)
		}
		return out.Locale + ": " + out.Text
	}
	if got := render(); got != "hi: नमस्ते Asha" {
		t.Fatalf("first render: %q", got)
	}
	tpl.Locales["hi"] = map[notify.Kind]store.Body{sms.Kind: {Text: "राम राम {{NAME}}"}}
	put(t, s, acct.ID, tpl)
	if got := render(); got != "hi: राम राम Asha" {
		t.Errorf("after the hi variant changed: %q", got)
	}
	delete(tpl.Locales, "hi")
	put(t, s, acct.ID, tpl)
	if got := render(); got != ": Hello Asha" {
		t.Errorf("after the hi variant was removed: %q", got)
	}
	tpl.Locales = nil
	put(t, s, acct.ID, tpl)
	if got := render(); got != ": Hello Asha" {
		t.Errorf("after every variant was removed: %q", got)
	}
}
