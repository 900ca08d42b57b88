package template_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
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
	}
}
