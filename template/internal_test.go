package template

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

func TestCacheIsBounded(t *testing.T) {
	var c cache
	big := strings.Repeat("x", 1000)
	for i := range cacheEntries + 500 {
		src := &store.Template{Slug: fmt.Sprintf("t%d", i), Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: big + "{{NAME}}"}}}
		tp, err := c.get("acct", src)
		if err != nil || tp == nil {
			t.Fatalf("get %d: %v", i, err)
		}
		if len(c.m) > cacheEntries || c.bytes > cacheBytes {
			t.Fatalf("after %d templates the cache holds %d entries, %d bytes", i+1, len(c.m), c.bytes)
		}
	}
	sum := 0
	for _, e := range c.m {
		sum += e.size
	}
	if sum != c.bytes {
		t.Errorf("byte count %d, entries add up to %d", c.bytes, sum)
	}
	// Bytes bound the cache as well as entries.
	c = cache{}
	huge := strings.Repeat("y", maxBody)
	for i := range 20 {
		src := &store.Template{Slug: fmt.Sprintf("h%d", i), Bodies: map[notify.Kind]store.Body{
			chat.Kind: {Text: huge}, sms.Kind: {Text: huge}, email.Kind: {Text: huge, HTML: huge}}}
		if _, err := c.get("acct", src); err != nil {
			t.Fatal(err)
		}
		if c.bytes > cacheBytes {
			t.Fatalf("cache holds %d bytes", c.bytes)
		}
	}
}

func TestCacheReusesCompiledTemplate(t *testing.T) {
	var c cache
	src := &store.Template{Slug: "a", Variables: []string{"X"}, Bodies: map[notify.Kind]store.Body{chat.Kind: {Text: "{{X}}"}}}
	t1, _ := c.get("acct", src)
	same := *src
	same.Variables = []string{"X"} // equal content, different memory
	t2, _ := c.get("acct", &same)
	if t1 != t2 {
		t.Error("an unchanged template was recompiled")
	}
	t3, _ := c.get("other", src)
	if t3 == t1 {
		t.Error("accounts share a cache entry")
	}
	src.Variables[0] = "Y" // the store changed its value in place
	t4, err := c.get("acct", src)
	if err != nil || t4 == t1 || t4.vars[0].name != "Y" {
		t.Errorf("a changed template was served from the cache (err %v)", err)
	}
	src.Bodies[chat.Kind] = store.Body{Text: "{{Y}} {{Z}}"} // and its bodies
	t5, err := c.get("acct", src)
	if err != nil || t5 == t4 || len(t5.vars) != 2 {
		t.Errorf("a template with changed bodies was served from the cache (err %v)", err)
	}
	src.Bodies["push"] = store.Body{Text: "{{Y}}"} // a body for another kind
	t6, err := c.get("acct", src)
	if err != nil || t6 == t5 || t6.forms["push"] == nil {
		t.Errorf("a template with a new kind was served from the cache (err %v)", err)
	}
	if t7, _ := c.get("acct", storeutil.CloneTemplate(src)); t7 != t6 {
		t.Error("an unchanged template with two kinds was recompiled")
	}
}

func TestRenderDoesNotAllocateMore(t *testing.T) {
	// A render makes the Rendered, the values and the text: the lookup of
	// the kind's form adds nothing.
	tp, err := compileCustom(&store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{
		chat.Kind: {Text: "Hi {{NAME}}, order {{ORDER_ID}}"}, "push": {Text: "{{NAME}}"}}})
	if err != nil {
		t.Fatal(err)
	}
	acct := &notify.Account{Name: "A"}
	vars := record.Vars{"NAME": "Asha", "ORDER_ID": "OD-1"}
	chatAllocs := testing.AllocsPerRun(100, func() { _, _ = tp.render(chat.Kind, acct, "", vars) })
	pushAllocs := testing.AllocsPerRun(100, func() { _, _ = tp.render("push", acct, "", vars) })
	if chatAllocs > 3 || pushAllocs != chatAllocs {
		t.Errorf("render allocates %v times for chat, %v for push; want at most 3 (the Rendered, its values, its text), equal", chatAllocs, pushAllocs)
	}
}

func TestCleanDoesNotAllocateForCleanValues(t *testing.T) {
	for _, v := range []string{"Asha Rao", "https://a.example/x?y=1", "आशा राव"} {
		if n := testing.AllocsPerRun(100, func() { _ = clean(v) }); n != 0 {
			t.Errorf("clean(%q) allocates %v times", v, n)
		}
		if clean(v) != v {
			t.Errorf("clean(%q) changed it", v)
		}
	}
}

func TestHTMLContexts(t *testing.T) {
	cases := []struct {
		src  string
		want escaper
	}{
		{"<p>{{X}}</p>", escHTML},
		{`<p title="{{X}}">`, escHTML},
		{`<a href="{{X}}">`, escURLStart},
		{`<a HREF = '{{X}}'>`, escURLStart},
		{`<a href="https://a.example/{{X}}">`, escURLPath},
		{`<a href="https://a.example/?q={{X}}">`, escURLQuery},
		{`<a href="https://a.example/#{{X}}">`, escURLQuery},
		{`<img src="{{X}}">`, escURLStart},
		{`<a href="x">y</a> {{X}}`, escHTML},
		{`<script>a="</b>"</script>{{X}}`, escHTML},
		{`<!-- <a href=" -->{{X}}`, escHTML},
		{`<br/>{{X}}`, escHTML},
		{`<input disabled value="{{X}}">`, escHTML},
		{`a < b {{X}}`, escHTML},
	}
	for _, c := range cases {
		b, err := compileBody("html", c.src, formHTML, func(string) (int, error) { return 0, nil })
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if b.slots[0].esc != c.want {
			t.Errorf("%s: escaper %d, want %d", c.src, b.slots[0].esc, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"standrd-otp", "standard-otp", 1}} {
		if got := distance(c.a, c.b); got != c.d {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestCheckFor(t *testing.T) {
	for name, want := range map[string]check{
		"OTP": checkOTP, "DAYS_LEFT": checkCount, "DATE": checkDate, "EXPIRY_DATE": checkDate,
		"UPDATE": checkNone, "LINK": checkURL, "URL": checkURL, "TRACKING_LINK": checkURL,
		"LOGO_URL": checkURL, "BLINK": checkNone, "CURL": checkNone, "NAME": checkNone,
	} {
		if got := checkFor(name); got != want {
			t.Errorf("checkFor(%s) = %d, want %d", name, got, want)
		}
	}
}

// TestCacheSeesLocales: the cache compares a template's variants too, in
// place changes of the store's value included, and a copy of an
// unchanged template with variants is not recompiled.
func TestCacheSeesLocales(t *testing.T) {
	var c cache
	src := &store.Template{Slug: "a", Bodies: map[notify.Kind]store.Body{sms.Kind: {Text: "Hi {{NAME}}"}},
		Locales: map[string]map[notify.Kind]store.Body{"hi": {sms.Kind: {Text: "नमस्ते {{NAME}}"}}}}
	t1, err := c.get("acct", src)
	if err != nil || t1.variants["hi"] == nil {
		t.Fatalf("first get: %v", err)
	}
	if t2, _ := c.get("acct", storeutil.CloneTemplate(src)); t2 != t1 {
		t.Error("an unchanged template with variants was recompiled")
	}
	src.Locales["hi"][sms.Kind] = store.Body{Text: "राम राम {{NAME}}"} // in place, inside a variant
	t3, err := c.get("acct", src)
	if err != nil || t3 == t1 || t3.variants["hi"].forms[sms.Kind].text.lits[0] != "राम राम " {
		t.Errorf("a changed variant was served from the cache (err %v)", err)
	}
	src.Locales["mr"] = map[notify.Kind]store.Body{sms.Kind: {Text: "नमस्कार {{NAME}}"}} // a new variant
	t4, err := c.get("acct", src)
	if err != nil || t4 == t3 || t4.variants["mr"] == nil {
		t.Errorf("a new variant was served from the cache (err %v)", err)
	}
	src.Locales = nil // none left
	t5, err := c.get("acct", src)
	if err != nil || t5 == t4 || t5.variants != nil {
		t.Errorf("a template whose variants were removed was served from the cache (err %v)", err)
	}
	// The variants count towards the entry's size.
	big := &store.Template{Slug: "b", Bodies: map[notify.Kind]store.Body{sms.Kind: {Text: "x"}},
		Locales: map[string]map[notify.Kind]store.Body{"hi": {sms.Kind: {Text: strings.Repeat("y", 10000)}}}}
	if n := templateSize(big); n < 10000 {
		t.Errorf("templateSize ignores the variants: %d", n)
	}
}

// TestLoadStockVariants checks the catalogue loader's rules for variant
// files on small catalogues of their own.
func TestLoadStockVariants(t *testing.T) {
	layout := "<html>{{BRAND_NAME}}<!-- BODY --></html>"
	base := "class: transactional\nvariables: NAME\noptional: BRAND_NAME\n" +
		"--- chat\nHi {{NAME}} {{BRAND_NAME}}\n--- sms\nHi {{NAME}} {{BRAND_NAME}}\n--- email.subject\nHi\n" +
		"--- email.html\n<p>{{NAME}}</p>\n--- email.text\n{{NAME}} {{BRAND_NAME}}\n"
	variant := "cloud: greet hi\n" +
		"--- chat\nनमस्ते {{NAME}} {{BRAND_NAME}}\n--- sms\nनमस्ते {{NAME}} {{BRAND_NAME}}\n--- email.subject\nनमस्ते\n" +
		"--- email.html\n<p>{{NAME}}</p>\n--- email.text\n{{NAME}} {{BRAND_NAME}}\n"
	fsys := func(files map[string]string) fstest.MapFS {
		m := fstest.MapFS{"catalogue/layout.html": {Data: []byte(layout)}, "catalogue/layout.hi.html": {Data: []byte(layout)},
			"catalogue/greet.tmpl": {Data: []byte(base)}}
		for name, src := range files {
			if src == "" {
				delete(m, "catalogue/"+name)
				continue
			}
			m["catalogue/"+name] = &fstest.MapFile{Data: []byte(src)}
		}
		return m
	}
	stock, slugs, err := loadStock(fsys(map[string]string{"greet.hi.tmpl": variant}))
	if err != nil {
		t.Fatal(err)
	}
	if v := stock["greet"].variants["hi"]; len(slugs) != 1 || v == nil || v.cloudName != "greet" || v.cloudLang != "hi" ||
		len(v.forms) != 3 || !slices.Equal(stock["greet"].locales, []string{"hi"}) {
		t.Fatalf("loaded %v: %+v", slugs, stock["greet"])
	}
	// Without a cloud line: the base's name, the tag's language.
	stock, _, err = loadStock(fsys(map[string]string{"greet.hi.tmpl": strings.Replace(variant, "cloud: greet hi\n", "", 1)}))
	if v := stock["greet"].variants["hi"]; err != nil || v.cloudName != "greet" || v.cloudLang != "hi" {
		t.Errorf("no cloud line: %+v, %v", v, err)
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		has   string
	}{
		{"no base", map[string]string{"hello.hi.tmpl": variant}, "a variant of hello, which has no catalogue/hello.tmpl"},
		{"not canonical", map[string]string{"greet.hi-in.tmpl": variant}, "write the locale canonically: greet.hi-IN.tmpl"},
		{"not a tag", map[string]string{"greet.hindi.tmpl": variant}, `"hindi" is not a locale`},
		{"the base's language", map[string]string{"greet.en.tmpl": variant}, "en is the language of greet.tmpl, its base"},
		{"no layout", map[string]string{"greet.mr.tmpl": variant}, "layout.mr.html"},
		{"layout without marker", map[string]string{"greet.hi.tmpl": variant, "layout.hi.html": "<html lang=hi>"}, "must hold"},
		{"base's header", map[string]string{"greet.hi.tmpl": "class: promotional\n" + variant}, `"class" is the base's`},
		{"unknown header", map[string]string{"greet.hi.tmpl": "colour: blue\n" + variant}, `unknown key "colour"`},
		{"action without ACTION", map[string]string{"greet.hi.tmpl": "action: सत्यापन\n" + variant}, "greet has no ACTION variable"},
		{"unknown variable", map[string]string{"greet.hi.tmpl": strings.Replace(variant, "नमस्ते\n", "नमस्ते {{CITY}}\n", 1)},
			"{{CITY}} is not a variable of greet.tmpl"},
		{"a variable the section's base lacks", map[string]string{"greet.hi.tmpl": strings.Replace(variant, "नमस्ते\n", "नमस्ते {{NAME}}\n", 1)},
			`section "email.subject" uses [NAME], its base's []`},
		{"a variable left out", map[string]string{"greet.hi.tmpl": strings.Replace(variant, "--- sms\nनमस्ते {{NAME}} {{BRAND_NAME}}", "--- sms\nनमस्ते {{NAME}}", 1)},
			`section "sms" uses [NAME], its base's [NAME BRAND_NAME]`},
		{"a section missing", map[string]string{"greet.hi.tmpl": strings.Replace(variant, "--- email.subject\nनमस्ते\n", "", 1)},
			`section "email.subject" is missing`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := loadStock(fsys(c.files))
			if err == nil || !strings.Contains(err.Error(), c.has) {
				t.Errorf("loadStock: %v, want an error saying %q", err, c.has)
			}
		})
	}
}
