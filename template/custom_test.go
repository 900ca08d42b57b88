package template_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/template"
)

func put(t *testing.T, s *memTemplates, account string, tpl *store.Template) {
	t.Helper()
	if err := template.Check(tpl); err != nil {
		t.Fatalf("Check(%s): %v", tpl.Slug, err)
	}
	if err := s.PutTemplate(context.Background(), account, tpl); err != nil {
		t.Fatal(err)
	}
}

func TestCustomOverridesStockPerAccount(t *testing.T) {
	s := newMemTemplates()
	put(t, s, "acme", &store.Template{Slug: "standard-otp", Variables: []string{"OTP"},
		SMS: "Acme code: {{OTP}}"})
	r := newRenderer(t, s)
	ctx := context.Background()
	out, err := r.Render(ctx, sms.Kind, &notify.Account{ID: "acme", Name: "Acme"}, "standard-otp", notify.Vars{"OTP": "1234"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "Acme code: 1234" || out.Class != notify.Transactional {
		t.Errorf("acme got %q (%s), want its own wording", out.Text, out.Class)
	}
	// Another account still gets the stock wording.
	out, err = r.Render(ctx, sms.Kind, &notify.Account{ID: "other", Name: "Other"}, "standard-otp", notify.Vars{"OTP": "1234"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Text, "1234 is your Other verification code") {
		t.Errorf("other got %q, want the stock wording", out.Text)
	}
	// The override serves SMS only: chat is an error, not the stock chat.
	_, err = r.Render(ctx, chat.Kind, &notify.Account{ID: "acme"}, "standard-otp", notify.Vars{"OTP": "1234"})
	if f := fieldsOf(t, err); !strings.Contains(f["template_slug"], `custom template "standard-otp" has no chat body`) {
		t.Errorf("chat of an SMS-only template: %v", err)
	}
}

func TestCustomTemplateChangesAreSeen(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "note", Chat: "one {{NAME}}"})
	r := newRenderer(t, s)
	ctx := context.Background()
	for i, want := range []string{"one Asha", "one Asha", "two Asha"} {
		if i == 2 {
			put(t, s, acct.ID, &store.Template{Slug: "note", Chat: "two {{NAME}}"})
		}
		out, err := r.Render(ctx, chat.Kind, acct, "note", notify.Vars{"NAME": "Asha"})
		if err != nil {
			t.Fatal(err)
		}
		if out.Text != want {
			t.Errorf("render %d: %q, want %q", i, out.Text, want)
		}
	}
	if err := s.DeleteTemplate(ctx, acct.ID, "note"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render(ctx, chat.Kind, acct, "note", notify.Vars{"NAME": "Asha"}); fieldsOf(t, err)["template_slug"] == "" {
		t.Errorf("deleted template still renders: %v", err)
	}
}

func TestCustomTemplateVariables(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	// CITY is used but not listed: it is required too, after the listed ones.
	put(t, s, acct.ID, &store.Template{Slug: "visit", Variables: []string{"NAME", "DATE"}, Class: notify.Promotional,
		Chat: "{{NAME}}, see you in {{CITY}} on {{DATE}}. {{BRAND_NAME}}"})
	// Positional placeholders, as cloud templates write them.
	put(t, s, acct.ID, &store.Template{Slug: "pos", Chat: "{{1}} then {{2}}"})
	r := newRenderer(t, s)
	ctx := context.Background()

	_, err := r.Render(ctx, chat.Kind, acct, "visit", nil)
	if got := fieldNames(fieldsOf(t, err)); !slices.Equal(got, []string{"variables.CITY", "variables.DATE", "variables.NAME"}) {
		t.Errorf("missing: %v", got)
	}
	_, err = r.Render(ctx, chat.Kind, acct, "visit", notify.Vars{"NAME": "A", "CITY": "Pune", "DATE": "1/1/2026"})
	if f := fieldsOf(t, err); len(f) != 1 || !strings.Contains(f["variables.DATE"], "DD/MM/YYYY") {
		t.Errorf("date rule on a custom template: %v", err)
	}
	out, err := r.Render(ctx, chat.Kind, acct, "visit", notify.Vars{"1": "Asha", "2": "02/03/2026", "3": "Pune"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "Asha, see you in Pune on 02/03/2026. Acme" || out.Class != notify.Promotional {
		t.Errorf("got %q %s", out.Text, out.Class)
	}
	out, err = r.Render(ctx, chat.Kind, acct, "pos", notify.Vars{"2": "b", "1": "a"})
	if err != nil || out.Text != "a then b" {
		t.Errorf("positional template: %v %v", out, err)
	}
	info, err := r.Describe(ctx, acct, "visit")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range info.Variables {
		names = append(names, v.Name)
	}
	if !info.Custom || info.CloudName != "visit" || !slices.Equal(names, []string{"NAME", "DATE", "CITY", "BRAND_NAME"}) ||
		!slices.Equal(info.Kinds, []notify.Kind{chat.Kind}) {
		t.Errorf("Describe: %+v", info)
	}
	ct, err := r.CloudTemplate(ctx, acct, "visit", notify.Vars{"NAME": "Asha", "DATE": "02/03/2026", "CITY": "Pune"})
	if err != nil {
		t.Fatal(err)
	}
	if ct.Name != "visit" || !slices.Equal(ct.Params, []string{"Asha", "02/03/2026", "Pune", "Acme"}) {
		t.Errorf("cloud: %+v", ct)
	}
}

func TestCustomEmail(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "doc", EmailSubject: "Your {{KIND}} is ready",
		EmailHTML: `<p title="{{NAME}}">Hi {{NAME}}</p>` +
			`<a href="{{DOC}}">open</a> <a href="https://files.example/{{ID}}/view?u={{NAME}}&x=1">alt</a>` +
			`<img src='{{LOGO_URL}}' alt="logo"><!-- {{NAME}} -->`})
	put(t, s, acct.ID, &store.Template{Slug: "plain", EmailText: "Hi {{NAME}}"})
	r := newRenderer(t, s)
	ctx := context.Background()
	vars := notify.Vars{"KIND": "statement", "NAME": `A&B "x" <y>`, "DOC": "https://files.example/d?a=1&b=2",
		"ID": "../../admin?x=1#f", "LOGO_URL": "https://cdn.example/l.png"}
	out, err := r.Render(ctx, email.Kind, acct, "doc", vars)
	if err != nil {
		t.Fatal(err)
	}
	want := `<p title="A&amp;B &#34;x&#34; &lt;y&gt;">Hi A&amp;B &#34;x&#34; &lt;y&gt;</p>` +
		`<a href="https://files.example/d?a=1&amp;b=2">open</a> ` +
		`<a href="https://files.example/..%2F..%2Fadmin%3Fx=1%23f/view?u=A%26B+%22x%22+%3Cy%3E&x=1">alt</a>` +
		`<img src='https://cdn.example/l.png' alt="logo"><!-- A&amp;B &#34;x&#34; &lt;y&gt; -->`
	if out.HTML != want || out.Subject != "Your statement is ready" || out.Text != "" {
		t.Errorf("got\n%s\nwant\n%s\nsubject %q text %q", out.HTML, want, out.Subject, out.Text)
	}
	// A variable that starts an href is a URL, whatever its name.
	_, err = r.Render(ctx, email.Kind, acct, "doc", with(vars, "DOC", "javascript:alert(1)"))
	if f := fieldsOf(t, err); len(f) != 1 || !strings.Contains(f["variables.DOC"], "https:// URL") {
		t.Errorf("javascript: href: %v", err)
	}
	// A text-only e-mail template renders its text part alone.
	out, err = r.Render(ctx, email.Kind, acct, "plain", notify.Vars{"NAME": "<b>"})
	if err != nil || out.Text != "Hi <b>" || out.HTML != "" || out.Subject != "" {
		t.Errorf("text-only: %+v %v", out, err)
	}
}

func TestCheck(t *testing.T) {
	ok := func(tpl store.Template) *store.Template { return &tpl }
	cases := []struct {
		name string
		tpl  *store.Template
		has  string
	}{
		{"nil", nil, "nil custom template"},
		{"empty slug", ok(store.Template{Chat: "x"}), "bad slug"},
		{"upper-case slug", ok(store.Template{Slug: "Promo", Chat: "x"}), "bad slug"},
		{"long slug", ok(store.Template{Slug: strings.Repeat("a", 65), Chat: "x"}), "bad slug"},
		{"class", ok(store.Template{Slug: "a", Class: "bulk", Chat: "x"}), "class must be"},
		{"variable name", ok(store.Template{Slug: "a", Variables: []string{"name"}, Chat: "x"}), `bad variable name "name"`},
		{"duplicate variable", ok(store.Template{Slug: "a", Variables: []string{"A", "A"}, Chat: "x"}), "declared twice"},
		{"no body", ok(store.Template{Slug: "a", Variables: []string{"A"}}), "no body"},
		{"subject alone", ok(store.Template{Slug: "a", Chat: "x", EmailSubject: "s"}), "subject without an e-mail body"},
		{"lower-case placeholder", ok(store.Template{Slug: "a", Chat: "Hi {{name}}"}), `line 1, column 4: bad placeholder "{{name}}"`},
		{"empty placeholder", ok(store.Template{Slug: "a", SMS: "Hi {{}}"}), "bad placeholder"},
		{"unclosed", ok(store.Template{Slug: "a", SMS: "ok\nHi {{NAME"}), `sms: line 2, column 4: "{{" without a closing "}}"`},
		{"stray braces", ok(store.Template{Slug: "a", Chat: "{{ {{NAME}}"}), "bad placeholder"},
		{"two-line subject", ok(store.Template{Slug: "a", EmailText: "x", EmailSubject: "a\nb"}), "subject must be one line"},
		{"carriage return", ok(store.Template{Slug: "a", Chat: "a\rb"}), "control character U+000D"},
		{"bidi override", ok(store.Template{Slug: "a", Chat: "a\u202eb"}), "control character U+202E"},
		{"invalid UTF-8", ok(store.Template{Slug: "a", Chat: "a\xffb"}), "not valid UTF-8"},
		{"script", ok(store.Template{Slug: "a", EmailHTML: "<script>var n = '{{NAME}}';</script>"}), "not allowed inside <script>"},
		{"style element", ok(store.Template{Slug: "a", EmailHTML: "<STYLE>p{color:{{C}}}</STYLE>"}), "not allowed inside <style>"},
		{"style attribute", ok(store.Template{Slug: "a", EmailHTML: `<p style="color:{{C}}">x</p>`}), `not allowed in the "style" attribute`},
		{"event handler", ok(store.Template{Slug: "a", EmailHTML: `<a onclick="go('{{X}}')">x</a>`}), `"onclick" attribute`},
		{"unquoted attribute", ok(store.Template{Slug: "a", EmailHTML: `<a href={{LINK}}>x</a>`}), "quote the value of attribute \"href\""},
		{"attribute name", ok(store.Template{Slug: "a", EmailHTML: `<a {{ATTR}}="1">x</a>`}), "cannot form tags or attribute names"},
		{"tag name", ok(store.Template{Slug: "a", EmailHTML: `<{{TAG}}>x`}), "{{TAG}}"},
		{"too many variables", ok(store.Template{Slug: "a", Chat: manyPlaceholders(65)}), "more than 64 variables"},
		{"body too long", ok(store.Template{Slug: "a", Chat: strings.Repeat("x", 256<<10+1)}), "longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := template.Check(c.tpl)
			if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), c.has) {
				t.Errorf("Check: %v\nwant InvalidArgument saying %q", err, c.has)
			}
		})
	}
	// Placeholders after the script ends, in comments and in ordinary
	// attributes are fine.
	good := &store.Template{Slug: "fine_1", Variables: []string{"A"}, EmailSubject: "{{ A }}",
		EmailHTML: "<script>x = 1;</script><p>{{A}}</p><!-- <script> {{A}} --><img alt='{{A}}'>",
		EmailText: "{{A}}\t{{A}}\n"}
	if err := template.Check(good); err != nil {
		t.Errorf("Check(good): %v", err)
	}
}

func manyPlaceholders(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("{{V" + strconv.Itoa(i) + "}}")
	}
	return b.String()
}

func TestBrokenStoredTemplate(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	// A store that does not call Check may hold a broken template.
	_ = s.PutTemplate(context.Background(), acct.ID, &store.Template{Slug: "bad", Chat: "Hi {{name}}"})
	r := newRenderer(t, s)
	for range 2 { // the second time comes from the cache
		_, err := r.Render(context.Background(), chat.Kind, acct, "bad", nil)
		f := fieldsOf(t, err)
		if !strings.Contains(f["template_slug"], `custom template "bad" cannot be used`) ||
			!strings.Contains(err.Error(), "bad placeholder") {
			t.Errorf("broken template: %v", err)
		}
	}
}

func TestStoreErrors(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	r := newRenderer(t, s)
	ctx := context.Background()

	s.err = notify.Errorf(notify.CodeUnavailable, "db down")
	_, err := r.Render(ctx, sms.Kind, acct, "standard-otp", notify.Vars{"OTP": "1234"})
	if notify.CodeOf(err) != notify.CodeUnavailable || !strings.Contains(err.Error(), "db down") {
		t.Errorf("store down: %v, want Unavailable: without the store the wording is unknown", err)
	}
	s.err = errors.New("bare failure")
	if _, err := r.Render(ctx, sms.Kind, acct, "standard-otp", notify.Vars{"OTP": "1234"}); notify.CodeOf(err) != notify.CodeInternal {
		t.Errorf("bare store error: %v", err)
	}
	s.err = nil

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = r.Render(cctx, sms.Kind, acct, "standard-otp", notify.Vars{"OTP": "1234"})
	if !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeCanceled {
		t.Errorf("canceled: %v", err)
	}

	// No account ID: the store is not asked and stock templates render.
	if _, err := r.Render(ctx, sms.Kind, &notify.Account{Name: "A"}, "standard-otp", notify.Vars{"OTP": "1234"}); err != nil {
		t.Errorf("no account ID: %v", err)
	}
}

func TestUnknownSlugSuggestsCustomSlugs(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "class-reminder", Chat: "x"})
	r := newRenderer(t, s)
	_, err := r.Render(context.Background(), chat.Kind, acct, "class-remider", nil)
	if f := fieldsOf(t, err); !strings.Contains(f["template_slug"], "did you mean class-reminder?") {
		t.Errorf("got %v", err)
	}
}

func TestCustomCRLF(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "win", Chat: "Hi {{NAME}},\r\nbye"})
	out, err := newRenderer(t, s).Render(context.Background(), chat.Kind, acct, "win", notify.Vars{"NAME": "A"})
	if err != nil || out.Text != "Hi A,\nbye" {
		t.Errorf("got %+v, %v", out, err)
	}
}
