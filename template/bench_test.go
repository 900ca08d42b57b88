package template_test

import (
	"bytes"
	"context"
	htmltemplate "html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/record"
)

// catalogueSection returns a section of a stock template's file, the HTML
// wrapped in the layout, as the baselines need the same source text.
func catalogueSection(b *testing.B, slug, section string) string {
	b.Helper()
	src, err := os.ReadFile(filepath.Join("catalogue", slug+".tmpl"))
	if err != nil {
		b.Fatal(err)
	}
	s := strings.TrimRight(sectionsOf(b, string(src))[section], "\n")
	if section == "email.html" {
		layout, err := os.ReadFile(filepath.Join("catalogue", "layout.html"))
		if err != nil {
			b.Fatal(err)
		}
		s = strings.Replace(strings.TrimRight(string(layout), "\n"), "<!-- BODY -->", s, 1)
	}
	return s
}

// benchVars are the four variables of out-for-delivery.
func benchVars() record.Vars {
	return record.Vars{"NAME": "Asha Rao", "ORDER_ID": "OD-100482",
		"TRACKING_LINK": "https://track.example/OD-100482", "BRAND_NAME": "Acme Learning"}
}

// BenchmarkChat compares rendering a stock chat template with four
// variables (lookup, validation, cleaning and all) with a strings.Replacer
// built once that only substitutes. Target: Render <= 1.5x Replacer.
func BenchmarkChat(b *testing.B) {
	r := newRenderer(b, nil)
	ctx := context.Background()
	acct := sampleAccount()
	vars := benchVars()
	src := catalogueSection(b, "out-for-delivery", "chat")
	var pairs []string
	for k, v := range vars {
		pairs = append(pairs, "{{"+k+"}}", v)
	}
	rep := strings.NewReplacer(pairs...)
	out, err := r.Render(ctx, chat.Kind, acct, "out-for-delivery", "", vars)
	if err != nil {
		b.Fatal(err)
	}
	if want := rep.Replace(src); out.Text != want {
		b.Fatalf("Render and Replacer differ:\n%q\n%q", out.Text, want)
	}
	b.Run("Render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Render(ctx, chat.Kind, acct, "out-for-delivery", "", vars); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Replacer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = rep.Replace(src)
		}
	})
}

// BenchmarkEmailHTML compares rendering a stock e-mail (subject, HTML and
// text: more than the baseline does) with executing the same HTML as a
// pre-parsed html/template. Target: within 3x.
func BenchmarkEmailHTML(b *testing.B) {
	r := newRenderer(b, nil)
	ctx := context.Background()
	acct := sampleAccount()
	vars := benchVars()
	src := catalogueSection(b, "out-for-delivery", "email.html")
	for k := range vars {
		src = strings.ReplaceAll(src, "{{"+k+"}}", "{{."+k+"}}")
	}
	ht, err := htmltemplate.New("mail").Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	data := map[string]string(vars)
	var buf bytes.Buffer
	if err := ht.Execute(&buf, data); err != nil {
		b.Fatal(err)
	}
	b.Run("Render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Render(ctx, email.Kind, acct, "out-for-delivery", "", vars); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("HTMLTemplate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := ht.Execute(&buf, data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
