package adminkit

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/store"
)

// TestTemplateAnswersKeepTheirBytes: the body fields of a custom template
// (chat, sms, email_subject, email_html, email_text), which the template
// keeps as bodies by channel kind, are answered byte for byte as they
// were when they were fields of the template, and stored as the bodies
// of their kinds, a kind without any part having none.
func (k kit) testTemplateAnswersKeepTheirBytes(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		ctx := context.Background()
		const path = "/admin/v1/accounts/acme/templates"
		all := `{"slug":"all","variables":["A","B"],"class":"transactional","chat":"c {{A}}","sms":"s {{B}}",` +
			`"email_subject":"su","email_html":"\u003ci\u003eh\u003c/i\u003e","email_text":"t"}`
		wantRaw(t, s.admin(t, "PUT", path+"/all", `{"variables":["A","B"],"class":"transactional","chat":"c {{A}}",`+
			`"sms":"s {{B}}","email_subject":"su","email_html":"<i>h</i>","email_text":"t"}`), 201,
			`{"success":true,"data":`+all+`}`)
		mail := `{"slug":"mail","variables":[],"class":"promotional","email_subject":"Hello {{NAME}}",` +
			`"email_html":"\u003cp\u003eHi \u003ca href=\"{{LINK}}\"\u003e{{NAME}}\u003c/a\u003e \u0026amp; \u003c\u003eé\u003c/p\u003e"}`
		wantRaw(t, s.admin(t, "PUT", path+"/mail", `{"class":"promotional","email_subject":"Hello {{NAME}}",`+
			`"email_html":"<p>Hi <a href=\"{{LINK}}\">{{NAME}}</a> &amp; <>é</p>"}`), 201, `{"success":true,"data":`+mail+`}`)
		welcome := `{"slug":"welcome","variables":["NAME"],"class":"transactional","sms":"Hi {{NAME}}, welcome to Acme."}`
		wantRaw(t, s.admin(t, "PUT", path+"/welcome", `{"variables":["NAME"],"sms":"Hi {{NAME}}, welcome to Acme."}`), 201,
			`{"success":true,"data":`+welcome+`}`)
		wantRaw(t, s.admin(t, "GET", path, ""), 200,
			`{"success":true,"data":{"account":"acme","templates":[`+all+`,`+mail+`,`+welcome+`]}}`)

		for slug, want := range map[string]map[record.Kind]store.Body{
			"all": {chat.Kind: {Text: "c {{A}}"}, sms.Kind: {Text: "s {{B}}"},
				email.Kind: {Subject: "su", HTML: "<i>h</i>", Text: "t"}},
			"mail":    {email.Kind: {Subject: "Hello {{NAME}}", HTML: `<p>Hi <a href="{{LINK}}">{{NAME}}</a> &amp; <>é</p>`}},
			"welcome": {sms.Kind: {Text: "Hi {{NAME}}, welcome to Acme."}},
		} {
			tpl, err := b.Store.Template(ctx, "acme", slug)
			if err != nil || !reflect.DeepEqual(tpl.Bodies, want) {
				t.Errorf("stored %s: %+v, %v; want bodies %+v", slug, tpl, err, want)
			}
		}
	})
}

// TestTemplateErrorsKeepTheirBytes: a template that does not compile is
// answered as it always was, with the wire's field names, whatever words
// template.Check now has for the shape of the set of bodies.
func (k kit) testTemplateErrorsKeepTheirBytes(t *testing.T) {
	s := newServer(t, k.nb(t))
	s.create(t, "acme")
	const path = "/admin/v1/accounts/acme/templates"
	bad := func(field, rule string) string {
		return `{"success":false,"error":{"code":"invalid_argument","message":"invalid request: ` + field + ` ` + rule +
			`","fields":{"` + field + `":"` + rule + `"}}}`
	}
	const noBody = `no body: set at least one of Chat, SMS, EmailHTML and EmailText`
	const unclosed = `line 1, column 4: \"{{\" without a closing \"}}\"`
	for _, c := range []struct{ slug, body, want string }{
		{"broken", `{"sms":"Hi {{NAME"}`, bad("sms", unclosed)},
		{"broken", `{"chat":"Hi {{NAME"}`, bad("chat", unclosed)},
		{"broken", `{"email_html":"<script>{{X}}</script>"}`,
			bad("email_html", `line 1, column 9: {{X}}: placeholders are not allowed inside \u003cscript\u003e`)},
		{"broken", `{"email_text":"a\rb"}`, bad("email_text", `line 1, column 2: control character U+000D`)},
		{"broken", `{"email_subject":"line\nbreak","email_text":"x"}`, bad("email_subject", `the subject must be one line`)},
		{"broken", `{"email_subject":"{{X"}`, bad("email_subject", `line 1, column 1: \"{{\" without a closing \"}}\"`)},
		{"broken", `{"email_subject":"only subject"}`, bad("body", noBody)},
		{"broken", `{"email_subject":"subj","sms":"x"}`,
			bad("email_subject", `an e-mail subject without an e-mail body (EmailHTML or EmailText)`)},
		{"broken", `{"sms":"x","class":"spam"}`, bad("class", `class must be transactional or promotional`)},
		{"broken", `{}`, bad("body", noBody)},
		{"broken", `{"class":"promotional","variables":["A"]}`, bad("body", noBody)},
		{"broken", `{"sms":"x","variables":["A","A"]}`, bad("variables", `variable A declared twice`)},
		{"Bad%20Slug", `{}`, bad("slug", `bad slug: use 1-64 lower-case letters, digits, '-' and '_'`)},
		{"broken", `{"sms":"Hi\u0000 there","chat":"\u0000","email_subject":"\u0000","email_html":"\u0000","email_text":"\u0000","class":"\u0000"}`,
			`{"success":false,"error":{"code":"invalid_argument","message":"invalid request: ` +
				`class must be valid UTF-8 without NUL characters; chat must be valid UTF-8 without NUL characters; ` +
				`sms must be valid UTF-8 without NUL characters; email_subject must be valid UTF-8 without NUL characters; ` +
				`email_html must be valid UTF-8 without NUL characters; email_text must be valid UTF-8 without NUL characters",` +
				`"fields":{"chat":"must be valid UTF-8 without NUL characters","class":"must be valid UTF-8 without NUL characters",` +
				`"email_html":"must be valid UTF-8 without NUL characters","email_subject":"must be valid UTF-8 without NUL characters",` +
				`"email_text":"must be valid UTF-8 without NUL characters","sms":"must be valid UTF-8 without NUL characters"}}}`},
	} {
		wantRaw(t, s.admin(t, "PUT", path+"/"+c.slug, c.body), 400, c.want)
	}
	wantRaw(t, s.admin(t, "GET", path, ""), 200, `{"success":true,"data":{"account":"acme","templates":[]}}`)
}

// TestTemplateOtherKinds: bodies of kinds the wire has no fields for
// (set in Go) are left out of answers, and a PUT, which replaces the
// template's wire bodies and fields, keeps them (the request cannot name
// them), saying so in its log line; its answer is as before, byte for byte.
func (k kit) testTemplateOtherKinds(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		ctx := context.Background()
		const path = "/admin/v1/accounts/acme/templates"
		push := store.Body{Subject: "Hi", Text: "Hi {{NAME}}!"}
		if err := b.Store.PutTemplate(ctx, "acme", &store.Template{Slug: "welcome", Variables: []string{"NAME"},
			Bodies: map[record.Kind]store.Body{sms.Kind: {Text: "Hi {{NAME}}"}, "push": push}}); err != nil {
			t.Fatal(err)
		}
		wantRaw(t, s.admin(t, "GET", path, ""), 200, `{"success":true,"data":{"account":"acme","templates":[`+
			`{"slug":"welcome","variables":["NAME"],"class":"transactional","sms":"Hi {{NAME}}"}]}}`)

		// The wire's kinds are replaced (sms, not named, is gone); push stays.
		wantRaw(t, s.admin(t, "PUT", path+"/welcome", `{"variables":["NAME"],"chat":"Hi {{NAME}}!"}`), 200,
			`{"success":true,"data":{"slug":"welcome","variables":["NAME"],"class":"transactional","chat":"Hi {{NAME}}!"}}`)
		tpl, err := b.Store.Template(ctx, "acme", "welcome")
		if err != nil || !reflect.DeepEqual(tpl.Bodies, map[record.Kind]store.Body{chat.Kind: {Text: "Hi {{NAME}}!"}, "push": push}) {
			t.Errorf("stored after the PUT: %+v, %v; want the chat body and the push body", tpl, err)
		}
		logs := s.logs.String()
		if !strings.Contains(logs, `"action":"template.put","account":"acme","template":"welcome","replaced":true,"kept_kinds":["push"]}`) {
			t.Errorf("log: %s", logs)
		}
		// A PUT over a template with no other kind logs no kept_kinds.
		want(t, s.admin(t, "PUT", path+"/plain", `{"variables":["NAME"],"sms":"Hi {{NAME}}"}`), 201, "")
		want(t, s.admin(t, "PUT", path+"/plain", `{"variables":["NAME"],"sms":"Hello {{NAME}}"}`), 200, "")
		if n := strings.Count(s.logs.String(), "kept_kinds"); n != 1 {
			t.Errorf("%d log lines with kept_kinds: %s", n, s.logs.String())
		}
		// A template that does not compile is refused as before, whatever it keeps.
		wantRaw(t, s.admin(t, "PUT", path+"/welcome", `{}`), 400, `{"success":false,"error":{"code":"invalid_argument",`+
			`"message":"invalid request: body no body: set at least one of Chat, SMS, EmailHTML and EmailText",`+
			`"fields":{"body":"no body: set at least one of Chat, SMS, EmailHTML and EmailText"}}}`)
		if tpl, err := b.Store.Template(ctx, "acme", "welcome"); err != nil || tpl.Bodies["push"] != push {
			t.Errorf("after a refused PUT: %+v, %v", tpl, err)
		}
	})
}

// TestTemplateKeptBodyMustCompile: a body a PUT keeps must compile with
// what the PUT sets, or the PUT is refused, naming the kind, and nothing
// changes.
func (k kit) testTemplateKeptBodyMustCompile(t *testing.T) {
	s := newServer(t, k.nb(t))
	s.create(t, "acme")
	ctx := context.Background()
	broken := &store.Template{Slug: "welcome", Bodies: map[record.Kind]store.Body{sms.Kind: {Text: "Hi"}, "push": {Text: "Hi {{NAME"}}}
	if err := s.b.Store.PutTemplate(ctx, "acme", broken); err != nil {
		t.Skipf("the store refuses a template that does not compile: %v", err)
	}
	const rule = `the template's bodies of push, which a PUT keeps, do not compile with it: push.text: line 1, column 4: \"{{\" without a closing \"}}\"`
	wantRaw(t, s.admin(t, "PUT", "/admin/v1/accounts/acme/templates/welcome", `{"sms":"Hello"}`), 400,
		`{"success":false,"error":{"code":"invalid_argument","message":"invalid request: body `+rule+`","fields":{"body":"`+rule+`"}}}`)
	if tpl, err := s.b.Store.Template(ctx, "acme", "welcome"); err != nil || tpl.Bodies[sms.Kind].Text != "Hi" {
		t.Errorf("after the refused PUT: %+v, %v", tpl, err)
	}
}

// TestTemplateLocales: a template's variants go in and out as "locales",
// by tag, by kind, the body's parts; tags are stored and answered
// canonical, a PUT replaces them all (one without the field has none),
// a template without them is answered without the field, and every
// mistake template.Check finds in a variant is a 400 naming the variant's
// field, nothing changed.
func (k kit) testTemplateLocales(t *testing.T) {
	k.each(t, func(t *testing.T, b Backend) {
		s := newServer(t, b)
		s.create(t, "acme")
		ctx := context.Background()
		const path = "/admin/v1/accounts/acme/templates"
		const base = `"variables":["NAME"],"sms":"Hi {{NAME}}","email_subject":"Hello","email_text":"Hi {{NAME}}"`
		put := `{` + base + `,"locales":{"hi_in":{"sms":{"text":"{{NAME}} जी, नमस्ते"}},` +
			`"mr":{"sms":{"text":"नमस्कार {{NAME}}"},"email":{"subject":"नमस्कार","text":"नमस्कार {{NAME}}","html":""}}}}`
		answer := `{"slug":"welcome","variables":["NAME"],"class":"transactional","sms":"Hi {{NAME}}","email_subject":"Hello",` +
			`"email_text":"Hi {{NAME}}","locales":{"hi-IN":{"sms":{"text":"{{NAME}} जी, नमस्ते"}},` +
			`"mr":{"email":{"subject":"नमस्कार","text":"नमस्कार {{NAME}}"},"sms":{"text":"नमस्कार {{NAME}}"}}}}`
		wantRaw(t, s.admin(t, "PUT", path+"/welcome", put), 201, `{"success":true,"data":`+answer+`}`)
		wantRaw(t, s.admin(t, "GET", path, ""), 200, `{"success":true,"data":{"account":"acme","templates":[`+answer+`]}}`)
		stored := map[string]map[record.Kind]store.Body{
			"hi-IN": {sms.Kind: {Text: "{{NAME}} जी, नमस्ते"}},
			"mr":    {sms.Kind: {Text: "नमस्कार {{NAME}}"}, email.Kind: {Subject: "नमस्कार", Text: "नमस्कार {{NAME}}"}},
		}
		tpl, err := b.Store.Template(ctx, "acme", "welcome")
		if err != nil || !reflect.DeepEqual(tpl.Locales, stored) {
			t.Fatalf("stored: %+v, %v; want locales %+v", tpl, err, stored)
		}
		// What the store holds renders: the request's hi-IN finds the
		// variant stored under the canonical tag.
		r, err := template.New(b.Store)
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Render(ctx, sms.Kind, &notify.Account{ID: "acme", Name: "Acme"}, "welcome", "hi_IN", record.Vars{"NAME": "Asha"})
		if err != nil || out.Locale != "hi-IN" || out.Text != "Asha जी, नमस्ते" {
			t.Errorf("render of the stored variant: %+v, %v", out, err)
		}

		// Each mistake is refused naming its field, and nothing changes.
		type c struct{ locales, field, rule string }
		for _, c := range []c{
			{`{"hi":{"sms":{"text":"नमस्ते"}}}`, "locales.hi.sms.text", `{{NAME}} is missing: the base's sms uses it, and it has no default`},
			{`{"hi":{"email":{"subject":"नमस्ते","text":"नमस्ते"}}}`, "locales.hi.email.text", `{{NAME}} is missing: the base's email.text uses it, and it has no default`},
			{`{"hi":{"email":{"text":"{{NAME}}"}}}`, "locales.hi.email.subject", `missing: the base's e-mail body has this part, so each variant's has it too`},
			{`{"hi":{"sms":{"text":"{{NAME}} {{CITY}}"}}}`, "locales.hi.sms.text", `line 1, column 10: {{CITY}} is not a variable of the base, which has NAME; a variant uses the base's variables`},
			{`{"hi":{"chat":{"text":"{{NAME}}"}}}`, "locales.hi.chat.text", `the base has no chat body; a variant words only the kinds its base serves`},
			{`{"hi":{"sms":{"text":"{{NAME}}","html":"<p>x</p>"}}}`, "locales.hi.sms.html", `the sms channel sends only a text body; put it in Text`},
			{`{"hi":{"email":{"subject":"s","text":"{{NAME}}","html":"<script>{{NAME}}</script>"}}}`, "locales.hi.email.html", `line 1, column 9: {{NAME}}: placeholders are not allowed inside \u003cscript\u003e`},
			{`{"hi":{}}`, "locales.hi", `no body: set the Text or HTML of a kind the base serves`},
			{`{"hi":{"sms":{}}}`, "locales.hi", `no body: set the Text or HTML of a kind the base serves`},
			{`{"hindi":{"sms":{"text":"{{NAME}}"}}}`, "locales.hindi", `must be a BCP 47 language tag such as \"hi\", \"hi-IN\" or \"en-US\"`},
			{`{"hi-IN":{"sms":{"text":"{{NAME}}"}},"hi_in":{"sms":{"text":"{{NAME}}"}}}`, "locales.hi_in", `is the same locale as locales.hi-IN (hi-IN); give each locale once`},
			{`{"hi":{"sms":{"text":"{{NAME}}\u0000"}}}`, "locales.hi.sms.text", `must be valid UTF-8 without NUL characters`},
		} {
			body := `{` + base + `,"locales":` + c.locales + `}`
			wantRaw(t, s.admin(t, "PUT", path+"/welcome", body), 400, `{"success":false,"error":{"code":"invalid_argument",`+
				`"message":"invalid request: `+c.field+` `+c.rule+`","fields":{"`+c.field+`":"`+c.rule+`"}}}`)
		}
		want(t, s.admin(t, "PUT", path+"/welcome", `{`+base+`,"locales":{"hi":{"sms":{"txt":"x"}}}}`), 400, "invalid_argument")
		if tpl, err := b.Store.Template(ctx, "acme", "welcome"); err != nil || !reflect.DeepEqual(tpl.Locales, stored) {
			t.Fatalf("after refused PUTs: %+v, %v; want locales %+v", tpl, err, stored)
		}

		// A PUT without locales leaves the template none.
		wantRaw(t, s.admin(t, "PUT", path+"/welcome", `{`+base+`}`), 200, `{"success":true,"data":{"slug":"welcome",`+
			`"variables":["NAME"],"class":"transactional","sms":"Hi {{NAME}}","email_subject":"Hello","email_text":"Hi {{NAME}}"}}`)
		if tpl, err := b.Store.Template(ctx, "acme", "welcome"); err != nil || len(tpl.Locales) != 0 {
			t.Fatalf("after a PUT without locales: %+v, %v", tpl, err)
		}
		wantRaw(t, s.admin(t, "PUT", path+"/welcome", `{`+base+`,"locales":{}}`), 200, `{"success":true,"data":{"slug":"welcome",`+
			`"variables":["NAME"],"class":"transactional","sms":"Hi {{NAME}}","email_subject":"Hello","email_text":"Hi {{NAME}}"}}`)

		// A variant's bodies of kinds the wire has no fields for are set in
		// Go: the wire cannot name them, answers leave them out, and a PUT
		// keeps them, as it keeps the base's, saying so in its log line.
		wantRaw(t, s.admin(t, "PUT", path+"/welcome", `{`+base+`,"locales":{"hi":{"push":{"text":"{{NAME}}"}}}}`), 400,
			`{"success":false,"error":{"code":"invalid_argument","message":"invalid request: locales.hi.push is not chat, sms or email: `+
				`a variant's bodies of other kinds are set in Go (store.Templates)","fields":{"locales.hi.push":"is not chat, sms or email: `+
				`a variant's bodies of other kinds are set in Go (store.Templates)"}}}`)
		push := store.Body{Text: "नमस्ते {{NAME}}!"}
		if err := b.Store.PutTemplate(ctx, "acme", &store.Template{Slug: "pushy", Variables: []string{"NAME"},
			Bodies:  map[record.Kind]store.Body{sms.Kind: {Text: "Hi {{NAME}}"}, "push": {Text: "Hi {{NAME}}!"}},
			Locales: map[string]map[record.Kind]store.Body{"hi": {"push": push}, "mr": {sms.Kind: {Text: "नमस्कार {{NAME}}"}}}}); err != nil {
			t.Fatal(err)
		}
		wantRaw(t, s.admin(t, "GET", path, ""), 200, `{"success":true,"data":{"account":"acme","templates":[`+
			`{"slug":"pushy","variables":["NAME"],"class":"transactional","sms":"Hi {{NAME}}","locales":{"mr":{"sms":{"text":"नमस्कार {{NAME}}"}}}},`+
			`{"slug":"welcome","variables":["NAME"],"class":"transactional","sms":"Hi {{NAME}}","email_subject":"Hello","email_text":"Hi {{NAME}}"}]}}`)
		wantRaw(t, s.admin(t, "PUT", path+"/pushy", `{"variables":["NAME"],"sms":"Hello {{NAME}}","locales":{"hi":{"sms":{"text":"नमस्ते {{NAME}}"}}}}`), 200,
			`{"success":true,"data":{"slug":"pushy","variables":["NAME"],"class":"transactional","sms":"Hello {{NAME}}","locales":{"hi":{"sms":{"text":"नमस्ते {{NAME}}"}}}}}`)
		tpl, err = b.Store.Template(ctx, "acme", "pushy")
		if want := map[string]map[record.Kind]store.Body{"hi": {sms.Kind: {Text: "नमस्ते {{NAME}}"}, "push": push}}; err != nil || !reflect.DeepEqual(tpl.Locales, want) {
			t.Errorf("stored after the PUT: %+v, %v; want locales %+v (mr replaced, hi's push kept)", tpl, err, want)
		}
		if logs := s.logs.String(); !strings.Contains(logs, `"template":"pushy","replaced":true,"kept_kinds":["locales.hi.push","push"]}`) {
			t.Errorf("log: %s", logs)
		}
	})
}
