package template_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

// specSlugs are the slugs of spec section 2.2.
var specSlugs = []string{
	"standard-otp", "secure-2fa-otp", "password-reset-otp",
	"subscription-activated", "subscription-expiring-soon", "subscription-expired", "subscription-renewed",
	"form-submitted", "application-approved", "application-rejected", "service-status-update",
	"payment-receipt", "invoice-generated", "wallet-credited",
	"order-confirmed", "out-for-delivery", "order-delivered",
	"appointment-confirmed", "promo-discount", "feedback-request",
}

func TestCatalogueHasTheSpecSlugs(t *testing.T) {
	r := newRenderer(t, nil)
	got := r.Slugs()
	want := slices.Clone(specSlugs)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Slugs() = %v\nwant %v", got, want)
	}
	got[0] = "mutated"
	if r.Slugs()[0] == "mutated" {
		t.Error("Slugs returned the renderer's own slice")
	}
}

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Z0-9_]+)\s*\}\}`)

// sectionsOf splits a catalogue file into its sections, independently of
// the package's parser, so the test checks the files and not the parser.
func sectionsOf(t testing.TB, src string) map[string]string {
	t.Helper()
	out := map[string]string{}
	cur := ""
	for _, line := range strings.Split(src, "\n") {
		if name, ok := strings.CutPrefix(line, "--- "); ok {
			cur = name
			continue
		}
		if cur != "" {
			out[cur] += line + "\n"
		}
	}
	return out
}

func used(s string) []string {
	var names []string
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}

// TestCatalogueVariables checks that each template declares exactly the
// variables its bodies use: every declared variable appears in the chat,
// SMS, HTML and text bodies (the HTML with its layout), and the subject
// uses only declared ones.
func TestCatalogueVariables(t *testing.T) {
	r := newRenderer(t, nil)
	layout, err := os.ReadFile(filepath.Join("catalogue", "layout.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range r.Slugs() {
		src, err := os.ReadFile(filepath.Join("catalogue", slug+".tmpl"))
		if err != nil {
			t.Fatal(err)
		}
		info, err := r.Describe(context.Background(), nil, slug)
		if err != nil {
			t.Fatal(err)
		}
		var declared []string
		for _, v := range info.Variables {
			declared = append(declared, v.Name)
		}
		slices.Sort(declared)
		secs := sectionsOf(t, string(src))
		secs["email.html"] = strings.Replace(string(layout), "<!-- BODY -->", secs["email.html"], 1)
		for _, name := range []string{"chat", "sms", "email.html", "email.text"} {
			if got := used(secs[name]); !slices.Equal(got, declared) {
				t.Errorf("%s %s uses %v, declares %v", slug, name, got, declared)
			}
		}
		for _, v := range used(secs["email.subject"]) {
			if !slices.Contains(declared, v) {
				t.Errorf("%s email.subject uses undeclared %s", slug, v)
			}
		}
	}
}

func TestCatalogueMetadata(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	for _, slug := range r.Slugs() {
		info, err := r.Describe(ctx, nil, slug)
		if err != nil {
			t.Fatal(err)
		}
		wantClass := record.Transactional
		if slug == "promo-discount" {
			wantClass = record.Promotional
		}
		if info.Class != wantClass {
			t.Errorf("%s: class %s, want %s", slug, info.Class, wantClass)
		}
		if info.CloudName != strings.ReplaceAll(slug, "-", "_") || info.CloudLanguage != "en_US" {
			t.Errorf("%s: cloud %s %s", slug, info.CloudName, info.CloudLanguage)
		}
		if info.About == "" || info.Custom {
			t.Errorf("%s: About %q, Custom %v", slug, info.About, info.Custom)
		}
		if !slices.Equal(info.Kinds, []notify.Kind{chat.Kind, sms.Kind, email.Kind}) {
			t.Errorf("%s: kinds %v", slug, info.Kinds)
		}
		last := info.Variables[len(info.Variables)-1]
		if last.Name != "BRAND_NAME" || last.Required || last.Default != "the account's name" {
			t.Errorf("%s: last variable %+v, want optional BRAND_NAME", slug, last)
		}
		if strings.HasSuffix(slug, "-otp") && (info.Variables[0].Name != "OTP" || !info.Variables[0].Required ||
			info.Variables[0].Rule != "must be 4 to 8 digits") {
			t.Errorf("%s: first variable %+v, want required OTP", slug, info.Variables[0])
		}
	}
}

// gsm7 is the GSM 03.38 basic character set. Extension characters such as
// { } [ ] ~ ^ | \ and the euro sign cost two septets, so SMS bodies avoid
// them too.
const gsm7 = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡" +
	"ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// TestCatalogueSMS checks that SMS bodies are GSM-7 and that, with the
// golden sample values, each fits in two concatenated segments (306).
func TestCatalogueSMS(t *testing.T) {
	r := newRenderer(t, nil)
	for _, slug := range r.Slugs() {
		src, err := os.ReadFile(filepath.Join("catalogue", slug+".tmpl"))
		if err != nil {
			t.Fatal(err)
		}
		literal := placeholderRE.ReplaceAllString(sectionsOf(t, string(src))["sms"], "")
		for _, c := range strings.TrimSuffix(literal, "\n") {
			if !strings.ContainsRune(gsm7, c) {
				t.Errorf("%s: SMS body has %q, outside the GSM-7 basic set", slug, c)
			}
		}
		out, err := r.Render(context.Background(), sms.Kind, sampleAccount(), slug, "", varsFor(t, r, slug))
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(out.Text); n > 306 {
			t.Errorf("%s: sample SMS is %d characters, over two segments: %s", slug, n, out.Text)
		}
		if _, varied := stockLocales[slug]; out.Varies != varied {
			t.Errorf("%s: Varies %v, want %v: only a template with variants lets a recipient's locale choose", slug, out.Varies, varied)
		}
	}
}

// stockLocales are the variants the catalogue has, by slug: English is
// every template's base, so only other languages are variants.
var stockLocales = map[string][]string{
	"standard-otp":    {"hi"},
	"order-confirmed": {"hi"},
}

// TestCatalogueLocales checks the variant files, <slug>.<tag>.tmpl,
// independently of the package's parser: each is a variant of a stock
// template, named by a canonical tag, wraps its e-mail in its language's
// layout, and each of its sections uses exactly the variables of its
// base's section (a stock variant says all its base says); Describe
// lists them, and each renders in its variant.
func TestCatalogueLocales(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join("catalogue", "*.*.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	for _, f := range files {
		slug, tag, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".tmpl"), ".")
		found[slug] = append(found[slug], tag)
		if c, ok := template.CanonicalLocale(tag); !ok || c != tag {
			t.Errorf("%s: %q is not a canonical tag", f, tag)
		}
		lang, _, _ := strings.Cut(tag, "-")
		base := readSections(t, slug+".tmpl", "layout.html")
		mine := readSections(t, filepath.Base(f), "layout."+lang+".html")
		for _, name := range []string{"chat", "sms", "email.subject", "email.html", "email.text"} {
			if got, want := used(mine[name]), used(base[name]); !slices.Equal(got, want) {
				t.Errorf("%s %s uses %v, its base %v", f, name, got, want)
			}
			if mine[name] == base[name] {
				t.Errorf("%s %s is its base's, not a translation", f, name)
			}
		}
	}
	for _, slug := range r.Slugs() {
		info, err := r.Describe(ctx, nil, slug)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(info.Locales, stockLocales[slug]) || !slices.Equal(found[slug], stockLocales[slug]) {
			t.Errorf("%s: Describe's Locales %q, files %q; want %q", slug, info.Locales, found[slug], stockLocales[slug])
		}
	}
	layout, err := os.ReadFile(filepath.Join("catalogue", "layout.hi.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(layout), `<html lang="hi">`) || !devanagari(string(layout)) {
		t.Errorf("layout.hi.html is not marked and written in Hindi")
	}
	sameFrame(t, "layout.hi.html")
}

// sameFrame fails t unless the language layout name is layout.html with
// only what a language changes: the html element's lang, the font stack
// and the words of the footer (the cell with BRAND_NAME). The layouts
// are whole HTML documents, kept so that each can be opened and
// previewed as it is; this keeps their frames one, so that a change to
// the base's structure cannot leave a language's behind.
func sameFrame(t *testing.T, name string) {
	t.Helper()
	frame := func(file string) string {
		b, err := os.ReadFile(filepath.Join("catalogue", file))
		if err != nil {
			t.Fatal(err)
		}
		s := regexp.MustCompile(`<html lang="[^"]*">`).ReplaceAllString(string(b), `<html lang="">`)
		s = regexp.MustCompile(`font-family:[^;]*;`).ReplaceAllString(s, "font-family:;")
		return regexp.MustCompile(`>[^<]*\{\{BRAND_NAME\}\}[^<]*</td>`).ReplaceAllString(s, "></td>")
	}
	base, mine := strings.Split(frame("layout.html"), "\n"), strings.Split(frame(name), "\n")
	if len(base) != len(mine) {
		t.Fatalf("%s has %d lines, layout.html %d: a language's layout is the base's frame in its words", name, len(mine), len(base))
	}
	for i := range base {
		if base[i] != mine[i] {
			t.Errorf("%s:%d differs from layout.html in more than its language:\n%s\n%s", name, i+1, mine[i], base[i])
		}
	}
}

// readSections returns the sections of a catalogue file, its email.html
// wrapped in the named layout.
func readSections(t *testing.T, file, layout string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("catalogue", file))
	if err != nil {
		t.Fatal(err)
	}
	l, err := os.ReadFile(filepath.Join("catalogue", layout))
	if err != nil {
		t.Fatal(err)
	}
	secs := sectionsOf(t, string(src))
	secs["email.html"] = strings.Replace(string(l), "<!-- BODY -->", secs["email.html"], 1)
	return secs
}

// devanagari reports whether s has a letter of the Devanagari block.
func devanagari(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r >= 0x0900 && r <= 0x097F })
}

// TestCatalogueHindi renders the Hindi variants in every channel: in
// Hindi (Devanagari), with the variant named in Rendered.Locale, the OTP
// one keeping its warning never to share the code, and each SMS within
// two concatenated UCS-2 segments (134 UTF-16 units; a Hindi SMS is not
// GSM-7), an OTP within one (70).
func TestCatalogueHindi(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	for slug := range stockLocales {
		vars := varsFor(t, r, slug)
		for _, kind := range []notify.Kind{chat.Kind, sms.Kind, email.Kind} {
			out, err := r.Render(ctx, kind, sampleAccount(), slug, "hi", vars)
			if err != nil {
				t.Fatalf("%s %s: %v", slug, kind, err)
			}
			text := out.Text + out.Subject + out.HTML
			if out.Locale != "hi" || !devanagari(out.Text) || (kind == email.Kind && (!devanagari(out.Subject) || !devanagari(out.HTML))) {
				t.Errorf("%s %s in hi: Locale %q, %q", slug, kind, out.Locale, text)
			}
			if base, err := r.Render(ctx, kind, sampleAccount(), slug, "", vars); err != nil || !out.Varies || !base.Varies || base.Locale != "" {
				t.Errorf("%s %s: Varies %v in hi, base %+v, %v; want Varies in both", slug, kind, out.Varies, base, err)
			}
			if slug == "standard-otp" && !strings.Contains(out.Text, "साझा न करें") {
				t.Errorf("%s %s in hi lost its warning not to share the code: %q", slug, kind, out.Text)
			}
			if kind != sms.Kind {
				continue
			}
			limit := 134
			if strings.HasSuffix(slug, "-otp") {
				limit = 70
			}
			if n := len(utf16.Encode([]rune(out.Text))); n > limit {
				t.Errorf("%s: sample Hindi SMS is %d UTF-16 units, over %d: %s", slug, n, limit, out.Text)
			}
		}
		// The default ACTION is in Hindi too, in the SMS and the cloud
		// template's parameters alike.
		if slug == "standard-otp" {
			out, err := r.Render(ctx, sms.Kind, sampleAccount(), slug, "hi", record.Vars{"OTP": "482913"})
			if err != nil || !strings.Contains(out.Text, "सत्यापन कोड") || strings.Contains(out.Text, "verification") {
				t.Errorf("Hindi OTP with the default action: %+v, %v", out, err)
			}
			ct, err := r.CloudTemplate(ctx, sampleAccount(), slug, "hi-IN", record.Vars{"OTP": "482913"})
			if err != nil || ct.Name != "standard_otp" || ct.Language != "hi" ||
				!slices.Equal(ct.Params, []string{"482913", "सत्यापन", "Acme Learning"}) {
				t.Errorf("Hindi cloud template: %+v, %v", ct, err)
			}
		}
	}
}
