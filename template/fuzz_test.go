package template

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
)

// fuzzStore serves one custom template to every account.
type fuzzStore struct{ t *store.Template }

func (s fuzzStore) Template(_ context.Context, _, slug string) (*store.Template, error) {
	if slug == s.t.Slug {
		return s.t, nil
	}
	return nil, notify.Errorf(notify.CodeNotFound, "no template")
}
func (s fuzzStore) PutTemplate(context.Context, string, *store.Template) error { return nil }
func (s fuzzStore) DeleteTemplate(context.Context, string, string) error       { return nil }
func (s fuzzStore) Templates(context.Context, string) ([]*store.Template, error) {
	return []*store.Template{s.t}, nil
}

// markup counts the characters that make HTML structure. Values are
// escaped, so whatever they hold, a rendered body has exactly as many as
// its literal text.
func markup(s string) int {
	return strings.Count(s, "<") + strings.Count(s, ">") + strings.Count(s, `"`)
}

func litMarkup(b *body) int {
	n := 0
	for _, l := range b.lits {
		n += markup(l)
	}
	return n
}

// checkRendered asserts what holds of every successful render.
func checkRendered(t *testing.T, tp *tmpl, kind notify.Kind, out *notify.Rendered) {
	t.Helper()
	for _, s := range []string{out.Subject, out.Text, out.HTML} {
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\r\x00\x1b\u202e") {
			t.Fatalf("output %q holds invalid UTF-8 or a control character", s)
		}
	}
	if strings.ContainsAny(out.Subject, "\n") {
		t.Fatalf("subject %q holds a line break", out.Subject)
	}
	forms := tp.forms
	if out.Locale != "" {
		v := tp.variants[out.Locale]
		if v == nil {
			t.Fatalf("rendered in %q, which %s has no variant for", out.Locale, tp.slug)
		}
		forms = v.forms
	}
	if f := forms[kind]; f != nil && f.html != nil {
		if got, want := markup(out.HTML), litMarkup(f.html); got != want {
			t.Fatalf("HTML has %d markup characters, its template %d: a value injected markup:\n%s", got, want, out.HTML)
		}
	}
}

func kindOf(k uint8) notify.Kind {
	return []notify.Kind{chat.Kind, sms.Kind, email.Kind, otp.Kind}[k%4]
}

// localeOf picks a render's locale from k's other bits (the corpus's
// entries keep their arity): none, variants by any spelling, a tag
// without a variant, not a tag, or the fuzzer's own text.
func localeOf(k uint8, own string) string {
	return []string{"", "hi", "hi_IN", "fr-CA", "xx-", own, "", ""}[k>>2%8]
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
		t.Fatalf("error %v (%T), want InvalidArgument", err, err)
	}
}

// FuzzRender renders arbitrary slugs with arbitrary variables in assorted
// locales, stock and custom: no panic, only InvalidArgument errors, and
// values never add markup to HTML (the base's or a variant's) or line
// breaks to subjects.
func FuzzRender(f *testing.F) {
	f.Add("out-for-delivery", "NAME", "<b>Asha</b>", "3", "https://t.example/x", uint8(2))
	f.Add("standard-otp", "OTP", "1234", "ACTION", "login\r\nBcc: x", uint8(1))
	f.Add("promo-discount", "1", "A\"B'", "EXPIRY_DATE", "29/02/2028", uint8(0))
	f.Add("custom", "NAME", "\u202e<x>", "DOC", "https://a.example/?a=\"b\"", uint8(2))
	f.Add("standrd-otp", "name", "", "", "", uint8(3))
	custom := &store.Template{Slug: "custom", Variables: []string{"NAME"}, Bodies: map[notify.Kind]store.Body{
		chat.Kind: {Text: "{{NAME}} {{DOC}}"},
		email.Kind: {Subject: "Hi {{NAME}}",
			HTML: `<p title="{{NAME}}">{{NAME}}</p><a href="{{DOC}}">d</a><a href="https://x.example/{{NAME}}?q={{NAME}}">q</a>`},
	}, Locales: map[string]map[notify.Kind]store.Body{"hi": {
		email.Kind: {Subject: "नमस्ते {{NAME}}",
			HTML: `<a href="https://x.example/?q={{NAME}}">{{NAME}}</a><p data-x='{{DOC}}'>"{{NAME}}"</p>`},
	}}}
	if err := Check(custom); err != nil {
		f.Fatal(err) // else every render of it is an error, and checks nothing
	}
	r, err := New(fuzzStore{custom})
	if err != nil {
		f.Fatal(err)
	}
	acct := &notify.Account{ID: "a", Name: "Acme <Co>"}
	f.Fuzz(func(t *testing.T, slug, k1, v1, k2, v2 string, k uint8) {
		kind := kindOf(k)
		vars := record.Vars{k1: v1, k2: v2}
		loc := localeOf(k, k2)
		out, err := r.Render(context.Background(), kind, acct, slug, loc, vars)
		if err != nil {
			checkErr(t, err)
			return
		}
		tp, err := r.lookup(context.Background(), acct, slug)
		if err != nil {
			t.Fatal(err)
		}
		checkRendered(t, tp, kind, out)
		if _, err := r.CloudTemplate(context.Background(), acct, slug, loc, vars); err != nil {
			t.Fatalf("Render succeeded, CloudTemplate failed: %v", err)
		}
	})
}

// FuzzCompile compiles arbitrary custom bodies and renders what compiles.
func FuzzCompile(f *testing.F) {
	f.Add("Hi {{NAME}}", `<a href="{{LINK}}">{{NAME}}</a>`, "{{NAME}}", "x")
	f.Add("{{ 1 }} {{2}}", `<p style="{{X}}">`, "a\nb", "1")
	f.Add("{{", "<script>{{X}}</script><{{T}}>", "", "")
	f.Add("}}{{A}}{{", `<a title='{{A}}' href=x{{B}}>`, "s", "<>")
	f.Fuzz(func(t *testing.T, chatBody, html, subject, value string) {
		src := &store.Template{Slug: "f", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: chatBody}, email.Kind: {HTML: html, Subject: subject}}}
		tp, err := compileCustom(src)
		if err != nil {
			checkErr(t, err)
			return
		}
		vars := record.Vars{}
		for _, v := range tp.vars {
			vars[v.name] = value
		}
		for _, kind := range []notify.Kind{chat.Kind, email.Kind} {
			out, err := tp.render(kind, &notify.Account{Name: "A"}, "", vars)
			if err != nil {
				checkErr(t, err)
				continue
			}
			checkRendered(t, tp, kind, out)
		}
	})
}
