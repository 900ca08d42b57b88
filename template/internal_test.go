package template

import (
	"fmt"
	"strings"
	"testing"

	"github.com/notifykit/notify/store"
)

func TestCacheIsBounded(t *testing.T) {
	var c cache
	big := strings.Repeat("x", 1000)
	for i := range cacheEntries + 500 {
		src := &store.Template{Slug: fmt.Sprintf("t%d", i), Chat: big + "{{NAME}}"}
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
		src := &store.Template{Slug: fmt.Sprintf("h%d", i), Chat: huge, SMS: huge, EmailText: huge, EmailHTML: huge}
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
	src := &store.Template{Slug: "a", Variables: []string{"X"}, Chat: "{{X}}"}
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
