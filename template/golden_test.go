package template_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/template"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current catalogue")

// sampleAccount and sampleVars are the inputs of the golden files:
// realistic values for every stock variable.
func sampleAccount() *notify.Account {
	return &notify.Account{ID: "acme", Name: "Acme Learning", Currency: record.INR()}
}

func sampleVars() record.Vars {
	return record.Vars{
		"OTP":           "482913",
		"ACTION":        "login",
		"NAME":          "Asha Rao",
		"PLAN_NAME":     "Gold Annual",
		"AMOUNT":        "Rs 4,999.00",
		"EXPIRY_DATE":   "31/12/2026",
		"INVOICE_NO":    "INV-2026-0042",
		"DAYS_LEFT":     "7",
		"SERVICE_NAME":  "Passport Renewal",
		"TOKEN_NO":      "TK-88213",
		"LINK":          "https://acme.example/a/8f3k2",
		"REASON":        "the address proof was not readable",
		"STATUS":        "Documents verified",
		"PAYMENT_ID":    "pay_Q7x2M9",
		"DATE":          "14/03/2026",
		"DUE_DATE":      "28/03/2026",
		"BALANCE":       "Rs 1,250.50",
		"ORDER_ID":      "OD-100482",
		"DELIVERY_DATE": "18/03/2026",
		"TRACKING_LINK": "https://track.example/OD-100482",
		"TIME":          "10:30 AM",
		"DISCOUNT":      "20%",
		"CODE":          "SPRING20",
	}
}

// varsFor picks from sampleVars the variables the template requires, so
// no "unknown variable" error gets in the way.
func varsFor(t *testing.T, r *template.Renderer, slug string) record.Vars {
	t.Helper()
	info, err := r.Describe(context.Background(), sampleAccount(), slug)
	if err != nil {
		t.Fatalf("Describe(%s): %v", slug, err)
	}
	all := sampleVars()
	v := record.Vars{}
	for _, d := range info.Variables {
		if !d.Required {
			continue // the golden files show the defaults
		}
		val, ok := all[d.Name]
		if !ok {
			t.Fatalf("%s: no sample value for %s; add one to sampleVars", slug, d.Name)
		}
		v[d.Name] = val
	}
	return v
}

// TestGolden renders every stock template, and each of its variants, in
// every channel and compares with testdata/golden/<slug>.<form> (a
// variant: <slug>.<tag>.<form>). Run with -update to rewrite them after
// changing the catalogue, then read the diff.
func TestGolden(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	files := 0
	for _, slug := range r.Slugs() {
		vars := varsFor(t, r, slug)
		info, err := r.Describe(ctx, nil, slug)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range append([]string{""}, info.Locales...) {
			name := slug
			if tag != "" {
				name += "." + tag
			}
			chat, err := r.Render(ctx, chat.Kind, sampleAccount(), slug, tag, vars)
			if err != nil {
				t.Fatalf("%s chat: %v", name, err)
			}
			sms, err := r.Render(ctx, sms.Kind, sampleAccount(), slug, tag, vars)
			if err != nil {
				t.Fatalf("%s sms: %v", name, err)
			}
			mail, err := r.Render(ctx, email.Kind, sampleAccount(), slug, tag, vars)
			if err != nil {
				t.Fatalf("%s email: %v", name, err)
			}
			for _, o := range []*notify.Rendered{chat, sms, mail} {
				if o.Slug != slug || o.Locale != tag || o.Class != info.Class || len(o.Values) != len(info.Variables) {
					t.Errorf("%s: Slug %q, Locale %q, Class %q, %d values for %d variables",
						name, o.Slug, o.Locale, o.Class, len(o.Values), len(info.Variables))
				}
			}
			if chat.Subject != "" || chat.HTML != "" || sms.Subject != "" || sms.HTML != "" {
				t.Errorf("%s: chat or SMS rendering filled e-mail fields", name)
			}
			golden(t, name+".chat.txt", chat.Text)
			golden(t, name+".sms.txt", sms.Text)
			golden(t, name+".email.txt", "Subject: "+mail.Subject+"\n\n"+mail.Text)
			golden(t, name+".email.html", mail.HTML)
			files += 4
		}
	}
	if *update {
		return
	}
	// A golden file without a template is a template that was lost.
	found, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != files {
		t.Errorf("testdata/golden has %d files, want %d (4 per stock template and per variant)", len(found), files)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if got+"\n" != string(want) {
		t.Errorf("%s differs from the golden file (run with -update and read the diff):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func newRenderer(t testing.TB, store store.Templates) *template.Renderer {
	t.Helper()
	r, err := template.New(store)
	if err != nil {
		t.Fatalf("template.New: %v", err)
	}
	return r
}
