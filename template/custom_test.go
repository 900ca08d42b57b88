package template_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/notifykit/notify/record"
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
		Bodies: map[notify.Kind]store.Body{sms.Kind: {Text: "Acme code: {{OTP}}"}}})
	r := newRenderer(t, s)
	ctx := context.Background()
	out, err := r.Render(ctx, sms.Kind, &notify.Account{ID: "acme", Name: "Acme"}, "standard-otp", "", record.Vars{"OTP": "1234"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "Acme code: 1234" || out.Class != record.Transactional {
		t.Errorf("acme got %q (%s), want its own wording", out.Text, out.Class)
	}
	// Another account still gets the stock wording.
	out, err = r.Render(ctx, sms.Kind, &notify.Account{ID: "other", Name: "Other"}, "standard-otp", "", record.Vars{"OTP": "1234"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Text, "1234 is your Other verification code") {
		t.Errorf("other got %q, want the stock wording", out.Text)
	}
	// The override serves SMS only: chat is an error, not the stock chat.
	_, err = r.Render(ctx, chat.Kind, &notify.Account{ID: "acme"}, "standard-otp", "", record.Vars{"OTP": "1234"})
	if f := fieldsOf(t, err); !strings.Contains(f["template_slug"], `custom template "standard-otp" has no chat body`) {
		t.Errorf("chat of an SMS-only template: %v", err)
	}
}

func TestCustomTemplateChangesAreSeen(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "note", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "one {{NAME}}"}}})
	r := newRenderer(t, s)
	ctx := context.Background()
	for i, want := range []string{"one Asha", "one Asha", "two Asha"} {
		if i == 2 {
			put(t, s, acct.ID, &store.Template{Slug: "note", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "two {{NAME}}"}}})
		}
		out, err := r.Render(ctx, chat.Kind, acct, "note", "", record.Vars{"NAME": "Asha"})
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
	if _, err := r.Render(ctx, chat.Kind, acct, "note", "", record.Vars{"NAME": "Asha"}); fieldsOf(t, err)["template_slug"] == "" {
		t.Errorf("deleted template still renders: %v", err)
	}
}

func TestCustomTemplateVariables(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	// CITY is used but not listed: it is required too, after the listed ones.
	put(t, s, acct.ID, &store.Template{Slug: "visit", Variables: []string{"NAME", "DATE"}, Class: record.Promotional,
		Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "{{NAME}}, see you in {{CITY}} on {{DATE}}. {{BRAND_NAME}}"}}})
	// Positional placeholders, as cloud templates write them.
	put(t, s, acct.ID, &store.Template{Slug: "pos", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "{{1}} then {{2}}"}}})
	r := newRenderer(t, s)
	ctx := context.Background()

	_, err := r.Render(ctx, chat.Kind, acct, "visit", "", nil)
	if got := fieldNames(fieldsOf(t, err)); !slices.Equal(got, []string{"variables.CITY", "variables.DATE", "variables.NAME"}) {
		t.Errorf("missing: %v", got)
	}
	_, err = r.Render(ctx, chat.Kind, acct, "visit", "", record.Vars{"NAME": "A", "CITY": "Pune", "DATE": "1/1/2026"})
	if f := fieldsOf(t, err); len(f) != 1 || !strings.Contains(f["variables.DATE"], "DD/MM/YYYY") {
		t.Errorf("date rule on a custom template: %v", err)
	}
	out, err := r.Render(ctx, chat.Kind, acct, "visit", "", record.Vars{"1": "Asha", "2": "02/03/2026", "3": "Pune"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "Asha, see you in Pune on 02/03/2026. Acme" || out.Class != record.Promotional {
		t.Errorf("got %q %s", out.Text, out.Class)
	}
	out, err = r.Render(ctx, chat.Kind, acct, "pos", "", record.Vars{"2": "b", "1": "a"})
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
	ct, err := r.CloudTemplate(ctx, acct, "visit", "", record.Vars{"NAME": "Asha", "DATE": "02/03/2026", "CITY": "Pune"})
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
	put(t, s, acct.ID, &store.Template{Slug: "doc", Bodies: map[notify.Kind]store.Body{email.Kind: {Subject: "Your {{KIND}} is ready",
		HTML: `<p title="{{NAME}}">Hi {{NAME}}</p>` +
			`<a href="{{DOC}}">open</a> <a href="https://files.example/{{ID}}/view?u={{NAME}}&x=1">alt</a>` +
			`<img src='{{LOGO_URL}}' alt="logo"><!-- {{NAME}} -->`}}})
	put(t, s, acct.ID, &store.Template{Slug: "plain", Bodies: map[notify.Kind]store.Body{email.Kind: {Text: "Hi {{NAME}}"}}})
	r := newRenderer(t, s)
	ctx := context.Background()
	vars := record.Vars{"KIND": "statement", "NAME": `A&B "x" <y>`, "DOC": "https://files.example/d?a=1&b=2",
		"ID": "../../admin?x=1#f", "LOGO_URL": "https://cdn.example/l.png"}
	out, err := r.Render(ctx, email.Kind, acct, "doc", "", vars)
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
	_, err = r.Render(ctx, email.Kind, acct, "doc", "", with(vars, "DOC", "javascript:alert(1)"))
	if f := fieldsOf(t, err); len(f) != 1 || !strings.Contains(f["variables.DOC"], "https:// URL") {
		t.Errorf("javascript: href: %v", err)
	}
	// A text-only e-mail template renders its text part alone.
	out, err = r.Render(ctx, email.Kind, acct, "plain", "", record.Vars{"NAME": "<b>"})
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
		{"empty slug", ok(store.Template{Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}}}), "bad slug"},
		{"upper-case slug", ok(store.Template{Slug: "Promo", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}}}), "bad slug"},
		{"long slug", ok(store.Template{Slug: strings.Repeat("a", 65), Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}}}), "bad slug"},
		{"class", ok(store.Template{Slug: "a", Class: "bulk", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}}}), "class must be"},
		{"variable name", ok(store.Template{Slug: "a", Variables: []string{"name"}, Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}}}), `bad variable name "name"`},
		{"duplicate variable", ok(store.Template{Slug: "a", Variables: []string{"A", "A"}, Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}}}), "declared twice"},
		{"no body", ok(store.Template{Slug: "a", Variables: []string{"A"}}), "no body"},
		{"subject alone", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}, email.Kind: {Subject: "s"}}}), "subject without an e-mail body"},
		{"lower-case placeholder", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "Hi {{name}}"}}}), `line 1, column 4: bad placeholder "{{name}}"`},
		{"empty placeholder", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{sms.Kind: {Text: "Hi {{}}"}}}), "bad placeholder"},
		{"unclosed", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{sms.Kind: {Text: "ok\nHi {{NAME"}}}), `sms: line 2, column 4: "{{" without a closing "}}"`},
		{"stray braces", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "{{ {{NAME}}"}}}), "bad placeholder"},
		{"two-line subject", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {Text: "x", Subject: "a\nb"}}}), "subject must be one line"},
		{"carriage return", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "a\rb"}}}), "control character U+000D"},
		{"bidi override", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "a\u202eb"}}}), "control character U+202E"},
		{"invalid UTF-8", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "a\xffb"}}}), "not valid UTF-8"},
		{"script", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {HTML: "<script>var n = '{{NAME}}';</script>"}}}), "not allowed inside <script>"},
		{"style element", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {HTML: "<STYLE>p{color:{{C}}}</STYLE>"}}}), "not allowed inside <style>"},
		{"style attribute", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {HTML: `<p style="color:{{C}}">x</p>`}}}), `not allowed in the "style" attribute`},
		{"event handler", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {HTML: `<a onclick="go('{{X}}')">x</a>`}}}), `"onclick" attribute`},
		{"unquoted attribute", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {HTML: `<a href={{LINK}}>x</a>`}}}), "quote the value of attribute \"href\""},
		{"attribute name", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {HTML: `<a {{ATTR}}="1">x</a>`}}}), "cannot form tags or attribute names"},
		{"tag name", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{email.Kind: {HTML: `<{{TAG}}>x`}}}), "{{TAG}}"},
		{"too many variables", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: manyPlaceholders(65)}}}), "more than 64 variables"},
		{"body too long", ok(store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: strings.Repeat("x", 256<<10+1)}}}), "longer than"},
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
	good := &store.Template{Slug: "fine_1", Variables: []string{"A"}, Bodies: map[notify.Kind]store.Body{email.Kind: {
		Subject: "{{ A }}",
		HTML:    "<script>x = 1;</script><p>{{A}}</p><!-- <script> {{A}} --><img alt='{{A}}'>",
		Text:    "{{A}}\t{{A}}\n"}}}
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
	_ = s.PutTemplate(context.Background(), acct.ID, &store.Template{Slug: "bad", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "Hi {{name}}"}}})
	r := newRenderer(t, s)
	for range 2 { // the second time comes from the cache
		_, err := r.Render(context.Background(), chat.Kind, acct, "bad", "", nil)
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
	_, err := r.Render(ctx, sms.Kind, acct, "standard-otp", "", record.Vars{"OTP": "1234"})
	if notify.CodeOf(err) != notify.CodeUnavailable || !strings.Contains(err.Error(), "db down") {
		t.Errorf("store down: %v, want Unavailable: without the store the wording is unknown", err)
	}
	s.err = errors.New("bare failure")
	if _, err := r.Render(ctx, sms.Kind, acct, "standard-otp", "", record.Vars{"OTP": "1234"}); notify.CodeOf(err) != notify.CodeInternal {
		t.Errorf("bare store error: %v", err)
	}
	s.err = nil

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = r.Render(cctx, sms.Kind, acct, "standard-otp", "", record.Vars{"OTP": "1234"})
	if !errors.Is(err, context.Canceled) || notify.CodeOf(err) != notify.CodeCanceled {
		t.Errorf("canceled: %v", err)
	}

	// No account ID: the store is not asked and stock templates render.
	if _, err := r.Render(ctx, sms.Kind, &notify.Account{Name: "A"}, "standard-otp", "", record.Vars{"OTP": "1234"}); err != nil {
		t.Errorf("no account ID: %v", err)
	}
}

func TestUnknownSlugSuggestsCustomSlugs(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "class-reminder", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "x"}}})
	r := newRenderer(t, s)
	_, err := r.Render(context.Background(), chat.Kind, acct, "class-remider", "", nil)
	if f := fieldsOf(t, err); !strings.Contains(f["template_slug"], "did you mean class-reminder?") {
		t.Errorf("got %v", err)
	}
}

func TestCustomCRLF(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "win", Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "Hi {{NAME}},\r\nbye"}}})
	out, err := newRenderer(t, s).Render(context.Background(), chat.Kind, acct, "win", "", record.Vars{"NAME": "A"})
	if err != nil || out.Text != "Hi A,\nbye" {
		t.Errorf("got %+v, %v", out, err)
	}
}

// pushKind is a channel the template package has never heard of, as a
// channel written outside this module (examples/pushchannel) names it.
const pushKind notify.Kind = "push"

func TestCustomTemplateForAnyKind(t *testing.T) {
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, &store.Template{Slug: "shipped", Variables: []string{"NAME"}, Bodies: map[notify.Kind]store.Body{
		pushKind: {Subject: "{{NAME}}, order {{ORDER_ID}} shipped", Text: "Hi {{NAME}},\r\nit is on its way. {{BRAND_NAME}}"},
	}})
	put(t, s, acct.ID, &store.Template{Slug: "mixed", Bodies: map[notify.Kind]store.Body{
		"web":      {HTML: `<a href="{{LINK}}">{{NAME}}</a>`},
		pushKind:   {Text: "{{NAME}}"},
		email.Kind: {Text: "{{NAME}}"},
		chat.Kind:  {Text: "{{NAME}}"},
	}})
	r := newRenderer(t, s)
	ctx := context.Background()
	vars := record.Vars{"NAME": "Asha <A>", "ORDER_ID": "OD-1"}

	out, err := r.Render(ctx, pushKind, acct, "shipped", "", vars)
	if err != nil {
		t.Fatal(err)
	}
	if out.Subject != "Asha <A>, order OD-1 shipped" || out.Text != "Hi Asha <A>,\nit is on its way. Acme" || out.HTML != "" ||
		out.Slug != "shipped" || out.Class != record.Transactional || !slices.Equal(out.Values, []string{"Asha <A>", "OD-1", "Acme"}) {
		t.Errorf("push render: %+v", out)
	}
	// Its variables are checked as for any kind.
	_, err = r.Render(ctx, pushKind, acct, "shipped", "", record.Vars{"NAME": "A"})
	if f := fieldsOf(t, err); len(f) != 1 || f["variables.ORDER_ID"] == "" {
		t.Errorf("missing ORDER_ID for push: %v", err)
	}
	// The kinds it lacks are refused, the built-in ones with today's words.
	for kind, form := range map[notify.Kind]string{sms.Kind: "SMS", chat.Kind: "chat", email.Kind: "e-mail", "fax": "fax"} {
		_, err := r.Render(ctx, kind, acct, "shipped", "", vars)
		want := `custom template "shipped" has no ` + form + ` body; add one to the template or use another channel`
		if f := fieldsOf(t, err); f["template_slug"] != want {
			t.Errorf("%s of a push-only template: %v, want %q", kind, err, want)
		}
	}
	// A stock template does not serve push.
	_, err = r.Render(ctx, pushKind, &notify.Account{ID: "other", Name: "Other"}, "shipped", "", vars)
	if fieldsOf(t, err)["template_slug"] == "" {
		t.Errorf("another account's push render: %v", err)
	}
	if _, err := r.Render(ctx, pushKind, acct, "standard-otp", "", record.Vars{"OTP": "1234"}); notify.CodeOf(err) != notify.CodeInvalidArgument ||
		!strings.Contains(err.Error(), `no template form for kind "push"`) {
		t.Errorf("stock template for push: %v", err)
	}

	info, err := r.Describe(ctx, acct, "shipped")
	if err != nil || !slices.Equal(info.Kinds, []notify.Kind{pushKind}) {
		t.Errorf("Describe(shipped): %+v %v", info, err)
	}
	// Built-in kinds first, in their usual order, then the others sorted.
	info, err = r.Describe(ctx, acct, "mixed")
	if err != nil || !slices.Equal(info.Kinds, []notify.Kind{chat.Kind, email.Kind, pushKind, "web"}) {
		t.Errorf("Describe(mixed): %+v %v", info, err)
	}
	// Any kind's HTML is escaped, and a value that starts a URL attribute
	// must be a URL.
	out, err = r.Render(ctx, "web", acct, "mixed", "", record.Vars{"NAME": "<b>", "LINK": "https://a.example/?x=1&y=2"})
	if err != nil || out.HTML != `<a href="https://a.example/?x=1&amp;y=2">&lt;b&gt;</a>` || out.Text != "" || out.Subject != "" {
		t.Errorf("web render: %+v %v", out, err)
	}
	_, err = r.Render(ctx, pushKind, acct, "mixed", "", record.Vars{"NAME": "A", "LINK": "javascript:alert(1)"})
	if f := fieldsOf(t, err); len(f) != 1 || !strings.Contains(f["variables.LINK"], "https:// URL") {
		t.Errorf("javascript: link through another kind's HTML: %v", err)
	}
}

func TestCheckBodiesByKind(t *testing.T) {
	bodies := func(b map[notify.Kind]store.Body) *store.Template {
		return &store.Template{Slug: "a", Bodies: b}
	}
	cases := []struct {
		name string
		tpl  *store.Template
		has  string
	}{
		// The admin API reports these under their fields: the wording stays.
		{"no bodies", bodies(nil), "no body: set at least one of Chat, SMS, EmailHTML and EmailText"},
		{"empty bodies", bodies(map[notify.Kind]store.Body{chat.Kind: {}, email.Kind: {}}), "no body: set at least one of Chat, SMS, EmailHTML and EmailText"},
		{"e-mail subject alone", bodies(map[notify.Kind]store.Body{email.Kind: {Subject: "s"}, sms.Kind: {Text: "x"}}),
			`custom template "a": an e-mail subject without an e-mail body (EmailHTML or EmailText)`},
		{"chat", bodies(map[notify.Kind]store.Body{chat.Kind: {Text: "{{x}}"}}), `"a": chat: line 1, column 1: bad placeholder`},
		{"sms", bodies(map[notify.Kind]store.Body{sms.Kind: {Text: "{{x}}"}}), `"a": sms: line 1, column 1: bad placeholder`},
		{"email.subject", bodies(map[notify.Kind]store.Body{email.Kind: {Subject: "{{x}}", Text: "t"}}), `"a": email.subject: line 1, column 1: bad placeholder`},
		{"email.html", bodies(map[notify.Kind]store.Body{email.Kind: {HTML: "{{x}}"}}), `"a": email.html: line 1, column 1: bad placeholder`},
		{"email.text", bodies(map[notify.Kind]store.Body{email.Kind: {Text: "{{x}}"}}), `"a": email.text: line 1, column 1: bad placeholder`},
		// Other kinds: "<kind>.<part>".
		{"push.subject", bodies(map[notify.Kind]store.Body{pushKind: {Subject: "a\nb", Text: "t"}}), `"a": push.subject: the subject must be one line`},
		{"push.html", bodies(map[notify.Kind]store.Body{pushKind: {HTML: "<script>{{X}}</script>"}}), `"a": push.html: line 1, column 9: {{X}}: placeholders are not allowed inside <script>`},
		{"push.text", bodies(map[notify.Kind]store.Body{pushKind: {Text: "a\rb"}}), `"a": push.text: line 1, column 2: control character U+000D`},
		{"push subject alone", bodies(map[notify.Kind]store.Body{pushKind: {Subject: "s"}, chat.Kind: {Text: "x"}}),
			`"a": push.subject: a subject without a push body (Text or HTML)`},
		{"push, no body", bodies(map[notify.Kind]store.Body{pushKind: {Subject: "s"}}), `"a": no body: set the Text or HTML of at least one kind's body`},
		// SMS and chat send text alone: other parts would be dropped.
		{"sms html", bodies(map[notify.Kind]store.Body{sms.Kind: {Text: "x", HTML: "<p>x</p>"}}), `"a": sms.html: the sms channel sends only a text body`},
		{"chat subject", bodies(map[notify.Kind]store.Body{chat.Kind: {Subject: "s", Text: "x"}}), `"a": chat.subject: the chat channel sends only a text body`},
		{"empty kind", bodies(map[notify.Kind]store.Body{"": {Text: "x"}}), `bad kind ""`},
		{"upper-case kind", bodies(map[notify.Kind]store.Body{"Push": {Text: "x"}}), `bad kind "Push"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := template.Check(c.tpl)
			if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), c.has) {
				t.Errorf("Check: %v\nwant InvalidArgument saying %q", err, c.has)
			}
		})
	}
	// An empty body beside a real one is no form: the template does not
	// serve that kind.
	s := newMemTemplates()
	acct := &notify.Account{ID: "acme", Name: "Acme"}
	put(t, s, acct.ID, bodies(map[notify.Kind]store.Body{sms.Kind: {}, pushKind: {Text: "x"}}))
	r := newRenderer(t, s)
	if _, err := r.Render(context.Background(), sms.Kind, acct, "a", "", nil); !strings.Contains(fieldsOf(t, err)["template_slug"], "has no SMS body") {
		t.Errorf("empty sms body: %v", err)
	}
	if info, err := r.Describe(context.Background(), acct, "a"); err != nil || !slices.Equal(info.Kinds, []notify.Kind{pushKind}) {
		t.Errorf("Describe: %+v %v", info, err)
	}
}
