package template_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

// fieldsOf returns the fields of an InvalidArgument *notify.Error, failing
// the test for any other error.
func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
		t.Fatalf("error %v (%T), want an InvalidArgument *notify.Error", err, err)
	}
	m := map[string]string{}
	for _, f := range e.Fields {
		m[f.Field] = f.Message
	}
	return m
}

func fieldNames(m map[string]string) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// deliveryVars are valid variables of out-for-delivery.
func deliveryVars() record.Vars {
	return record.Vars{"NAME": "Asha", "ORDER_ID": "OD-1", "TRACKING_LINK": "https://track.example/OD-1"}
}

func with(v record.Vars, kv ...string) record.Vars {
	out := record.Vars{}
	for k, val := range v {
		out[k] = val
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func without(v record.Vars, names ...string) record.Vars {
	out := with(v)
	for _, n := range names {
		delete(out, n)
	}
	return out
}

func TestRenderVariableErrors(t *testing.T) {
	r := newRenderer(t, nil)
	acct := sampleAccount()
	cases := []struct {
		name   string
		slug   string
		vars   record.Vars
		fields []string // every field the error must name, and no other
		has    string   // a substring of the joined messages
	}{
		{"all missing", "out-for-delivery", nil,
			[]string{"variables.NAME", "variables.ORDER_ID", "variables.TRACKING_LINK"}, "not given"},
		{"one missing", "out-for-delivery", without(deliveryVars(), "ORDER_ID"),
			[]string{"variables.ORDER_ID"}, `required by template "out-for-delivery"`},
		{"empty counts as missing", "out-for-delivery", with(deliveryVars(), "NAME", "   "),
			[]string{"variables.NAME"}, "not given"},
		{"only control characters", "out-for-delivery", with(deliveryVars(), "NAME", "\x00\r\n\x1b"),
			[]string{"variables.NAME"}, "not given"},
		{"unknown name", "out-for-delivery", with(deliveryVars(), "COLOUR", "red"),
			[]string{"variables.COLOUR"}, "it takes NAME, ORDER_ID, TRACKING_LINK, BRAND_NAME (optional)"},
		{"lower-case name", "out-for-delivery", with(without(deliveryVars(), "NAME"), "name", "Asha"),
			[]string{"variables.NAME", "variables.name"}, "names are upper case: NAME"},
		{"positional beyond the declared", "out-for-delivery", with(deliveryVars(), "5", "x"),
			[]string{"variables.5"}, "takes 4 variables"},
		{"positional conflicts with name", "out-for-delivery", with(deliveryVars(), "1", "Bina"),
			[]string{"variables.1"}, "is NAME, which is also given by name with another value"},
		{"too long", "out-for-delivery", with(deliveryVars(), "NAME", strings.Repeat("a", 1025)),
			[]string{"variables.NAME"}, "longer than 1024 bytes"},
		{"OTP too short", "standard-otp", record.Vars{"OTP": "123"}, []string{"variables.OTP"}, "4 to 8 digits"},
		{"OTP too long", "standard-otp", record.Vars{"OTP": "123456789"}, []string{"variables.OTP"}, "4 to 8 digits"},
		{"OTP letters", "standard-otp", record.Vars{"OTP": "12a4"}, []string{"variables.OTP"}, "4 to 8 digits"},
		{"OTP other digits", "standard-otp", record.Vars{"OTP": "١٢٣٤"}, []string{"variables.OTP"}, "4 to 8 digits"},
		{"DAYS_LEFT words", "subscription-expiring-soon", record.Vars{"NAME": "A", "PLAN_NAME": "P",
			"DAYS_LEFT": "seven", "EXPIRY_DATE": "31/12/2026", "AMOUNT": "Rs 1", "LINK": "https://a.example"},
			[]string{"variables.DAYS_LEFT"}, "whole number"},
		{"no brand", "standard-otp", record.Vars{"OTP": "1234"}, nil, ""}, // replaced below with an unnamed account
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := acct
			if c.name == "no brand" {
				a = &notify.Account{ID: "x"}
				c.fields = []string{"variables.BRAND_NAME"}
				c.has = "defaults to the account's name, which is empty"
			}
			out, err := r.Render(context.Background(), chat.Kind, a, c.slug, "", c.vars)
			if err == nil {
				t.Fatalf("rendered %q, want an error", out.Text)
			}
			f := fieldsOf(t, err)
			if got := fieldNames(f); !slices.Equal(got, c.fields) {
				t.Errorf("fields %v, want %v (%v)", got, c.fields, err)
			}
			if !strings.Contains(err.Error(), c.has) {
				t.Errorf("error %q does not say %q", err, c.has)
			}
			if c.vars["OTP"] != "" && strings.Contains(err.Error(), c.vars["OTP"]) {
				t.Errorf("error %q repeats the OTP value", err)
			}
		})
	}
}

func TestRenderDates(t *testing.T) {
	r := newRenderer(t, nil)
	base := record.Vars{"NAME": "A", "PLAN_NAME": "P", "LINK": "https://a.example/r"}
	for _, d := range []string{"31/12/2026", "29/02/2028", "01/01/1999"} {
		if _, err := r.Render(context.Background(), sms.Kind, sampleAccount(), "subscription-expired", "",
			with(base, "EXPIRY_DATE", d)); err != nil {
			t.Errorf("EXPIRY_DATE %q: %v", d, err)
		}
	}
	for _, d := range []string{"29/02/2027", "31/04/2026", "00/01/2026", "12/13/2026", "2026-12-31",
		"1/1/2026", "31/12/26", "aa/bb/cccc", "31/12/-026", "31/12/+026", "31-12-2026", "31/12/2026 "[:9]} {
		_, err := r.Render(context.Background(), sms.Kind, sampleAccount(), "subscription-expired", "",
			with(base, "EXPIRY_DATE", d))
		if err == nil {
			t.Errorf("EXPIRY_DATE %q accepted", d)
			continue
		}
		if f := fieldsOf(t, err); !strings.Contains(f["variables.EXPIRY_DATE"], "DD/MM/YYYY") {
			t.Errorf("EXPIRY_DATE %q: %v", d, err)
		}
	}
	// Other names ending in DATE follow the same rule.
	_, err := r.Render(context.Background(), sms.Kind, sampleAccount(), "invoice-generated", "",
		record.Vars{"NAME": "A", "INVOICE_NO": "1", "AMOUNT": "1", "DUE_DATE": "2026-01-01", "LINK": "https://a.example"})
	if f := fieldsOf(t, err); fieldNames(f)[0] != "variables.DUE_DATE" || len(f) != 1 {
		t.Errorf("DUE_DATE: %v", err)
	}
}

func TestRenderLinks(t *testing.T) {
	r := newRenderer(t, nil)
	for _, l := range []string{"https://a.example", "http://a.example/p?q=1&r=2#f", "HTTPS://A.EXAMPLE/x",
		"https://a.example:8443/p", "https://[2001:db8::1]/p"} {
		if _, err := r.Render(context.Background(), chat.Kind, sampleAccount(), "out-for-delivery", "",
			with(deliveryVars(), "TRACKING_LINK", l)); err != nil {
			t.Errorf("link %q: %v", l, err)
		}
	}
	for _, l := range []string{"javascript:alert(1)", "ftp://a.example/f", "//a.example/p", "/relative",
		"https://user:pw@a.example", "https://bank.example@evil.example", "https://", "https:///path",
		"https://a.example/a b", "data:text/html,<b>x</b>", "mailto:a@b.example", "a.example", "https://a.example\\@b"} {
		_, err := r.Render(context.Background(), chat.Kind, sampleAccount(), "out-for-delivery", "",
			with(deliveryVars(), "TRACKING_LINK", l))
		if err == nil {
			t.Errorf("link %q accepted", l)
			continue
		}
		if f := fieldsOf(t, err); !strings.Contains(f["variables.TRACKING_LINK"], "http:// or https:// URL") {
			t.Errorf("link %q: %v", l, err)
		}
	}
}

func TestRenderDefaults(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	acct := &notify.Account{ID: "a", Name: "Acme\r\nBcc: x@evil.example"}
	out, err := r.Render(ctx, email.Kind, acct, "standard-otp", "", record.Vars{"OTP": "1234"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Subject != "Your Acme  Bcc: x@evil.example verification code" {
		t.Errorf("subject %q: want ACTION defaulted and the account name cleaned", out.Subject)
	}
	if !slices.Equal(out.Values, []string{"1234", "verification", "Acme  Bcc: x@evil.example"}) {
		t.Errorf("values %q", out.Values)
	}
	out, err = r.Render(ctx, sms.Kind, acct, "standard-otp", "",
		record.Vars{"OTP": "1234", "ACTION": "password reset", "BRAND_NAME": "Acme Pay"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "1234 is your Acme Pay password reset code. Never share it with anyone." {
		t.Errorf("text %q", out.Text)
	}
	// A nil account is no account name: BRAND_NAME must then be given.
	if _, err := r.Render(ctx, sms.Kind, nil, "standard-otp", "", record.Vars{"OTP": "1234", "BRAND_NAME": "B"}); err != nil {
		t.Errorf("nil account with BRAND_NAME: %v", err)
	}
}

// Channels fill OTP, ACTION and BRAND_NAME from request fields whatever
// the template; templates that do not use them ignore them.
func TestRenderContextualVariablesIgnored(t *testing.T) {
	r := newRenderer(t, nil)
	out, err := r.Render(context.Background(), chat.Kind, sampleAccount(), "out-for-delivery", "",
		with(deliveryVars(), "OTP", "1234", "ACTION", "login"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Text, "1234") || strings.Contains(out.Text, "login") {
		t.Errorf("text %q uses ignored variables", out.Text)
	}
}

func TestRenderPositional(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	named, err := r.Render(ctx, chat.Kind, sampleAccount(), "out-for-delivery", "", deliveryVars())
	if err != nil {
		t.Fatal(err)
	}
	for _, vars := range []record.Vars{
		{"1": "Asha", "2": "OD-1", "3": "https://track.example/OD-1"},
		{"1": "Asha", "ORDER_ID": "OD-1", "3": "https://track.example/OD-1"},
		{"1": "Asha", "NAME": "Asha", "2": "OD-1", "3": "https://track.example/OD-1"}, // same value twice is fine
		{"1": "Asha", "2": "OD-1", "3": "https://track.example/OD-1", "4": "Acme Learning"},
	} {
		out, err := r.Render(ctx, chat.Kind, sampleAccount(), "out-for-delivery", "", vars)
		if err != nil {
			t.Fatalf("%v: %v", vars, err)
		}
		if out.Text != named.Text {
			t.Errorf("%v rendered %q, want %q", vars, out.Text, named.Text)
		}
	}
	// Positional values are validated as the variable they fill.
	_, err = r.Render(ctx, chat.Kind, sampleAccount(), "out-for-delivery", "",
		record.Vars{"1": "Asha", "2": "OD-1", "3": "javascript:x"})
	if f := fieldsOf(t, err); len(f) != 1 || f["variables.TRACKING_LINK"] == "" {
		t.Errorf("positional link: %v", err)
	}
}

func TestRenderCleansValues(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	cases := []struct{ in, want string }{
		{"Asha\r\nBcc: x@evil.example", "Asha  Bcc: x@evil.example"},
		{"A\x00B\x1bC\x7fD", "ABCD"},
		{"A\u0085B\u2028C\u2029D\tE\vF", "A B C D E F"},
		{"\u202eevil\u202c txt", "evil txt"},
		{"\u2066x\u2069\ufeffy", "xy"},
		{"  Asha  ", "Asha"},
		{"As\xffha", "Asha"},
		{"आशा \u200dराव", "आशा \u200dराव"}, // joiners are kept: Indic scripts need them
		{"Zoë", "Zoë"},
	}
	for _, c := range cases {
		out, err := r.Render(ctx, email.Kind, sampleAccount(), "promo-discount", "", record.Vars{
			"NAME": c.in, "DISCOUNT": "10%", "CODE": "C", "EXPIRY_DATE": "01/01/2027", "LINK": "https://a.example"})
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if out.Values[0] != c.want {
			t.Errorf("NAME %q became %q, want %q", c.in, out.Values[0], c.want)
		}
		if strings.ContainsAny(out.Subject, "\r\n\x00") {
			t.Errorf("subject %q holds a control character", out.Subject)
		}
		if !strings.HasPrefix(out.Subject, c.want+", ") || !strings.Contains(out.Text, "Hello "+c.want+",") {
			t.Errorf("NAME %q: subject %q / text do not carry %q", c.in, out.Subject, c.want)
		}
	}
}

func TestRenderEscapesHTML(t *testing.T) {
	r := newRenderer(t, nil)
	name := `<script>alert("x")</script> & 'Co'`
	out, err := r.Render(context.Background(), email.Kind, sampleAccount(), "out-for-delivery", "",
		with(deliveryVars(), "NAME", name, "TRACKING_LINK", `https://t.example/?a=1&b="2"`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.HTML, "<script") || strings.Contains(out.HTML, `"2"`) {
		t.Errorf("HTML holds a raw value:\n%s", out.HTML)
	}
	if !strings.Contains(out.HTML, "Hello &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;Co&#39;,") {
		t.Errorf("HTML lacks the escaped name:\n%s", out.HTML)
	}
	if !strings.Contains(out.HTML, `href="https://t.example/?a=1&amp;b=&#34;2&#34;"`) {
		t.Errorf("HTML lacks the escaped link:\n%s", out.HTML)
	}
	// The plain-text part and the subject carry the value as written.
	if !strings.Contains(out.Text, "Hello "+name+",") {
		t.Errorf("text lacks the raw name:\n%s", out.Text)
	}
}

func TestRenderKinds(t *testing.T) {
	r := newRenderer(t, nil)
	for _, k := range []notify.Kind{otp.Kind, "", "fax"} {
		_, err := r.Render(context.Background(), k, sampleAccount(), "out-for-delivery", "", deliveryVars())
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "sms, email and chat") {
			t.Errorf("kind %q: %v", k, err)
		}
	}
}

func TestRenderUnknownSlug(t *testing.T) {
	r := newRenderer(t, nil)
	cases := []struct{ slug, has string }{
		{"standrd-otp", "did you mean standard-otp?"},
		{"standard_otp", "did you mean standard-otp?"},
		{"otp", "did you mean standard-otp, secure-2fa-otp or password-reset-otp?"},
		{"Standard OTP", "(slugs are 1-64 lower-case letters, digits, '-' and '_'); did you mean standard-otp?"},
		{"order-deliverd", "did you mean order-delivered"},
		{"xyzzy", "stock templates are application-approved, application-rejected,"},
		{"", `unknown template ""; stock templates are`},
		{strings.Repeat("a", 500), `unknown template "` + strings.Repeat("a", 64) + `..."`},
		{"bad\r\nslug", `unknown template "bad  slug" (slugs are`},
	}
	for _, c := range cases {
		_, err := r.Render(context.Background(), chat.Kind, sampleAccount(), c.slug, "", nil)
		f := fieldsOf(t, err)
		if len(f) != 1 || !strings.Contains(f["template_slug"], c.has) {
			t.Errorf("slug %q: %v\nwant it to say %q", c.slug, err, c.has)
		}
	}
}

func TestRenderLimits(t *testing.T) {
	r := newRenderer(t, nil)
	vars := deliveryVars()
	for i := range 70 {
		vars[strings.Repeat("X", i+1)] = "x"
	}
	_, err := r.Render(context.Background(), chat.Kind, sampleAccount(), "out-for-delivery", "", vars)
	if f := fieldsOf(t, err); len(f) != 1 || !strings.Contains(f["variables"], "at most 64") {
		t.Errorf("too many variables: %v", err)
	}
}

func TestCloudTemplate(t *testing.T) {
	r := newRenderer(t, nil)
	ctx := context.Background()
	ct, err := r.CloudTemplate(ctx, sampleAccount(), "standard-otp", "", record.Vars{"OTP": "482913"})
	if err != nil {
		t.Fatal(err)
	}
	if ct.Name != "standard_otp" || ct.Language != "en_US" ||
		!slices.Equal(ct.Params, []string{"482913", "verification", "Acme Learning"}) {
		t.Errorf("got %+v", ct)
	}
	ct, err = r.CloudTemplate(ctx, sampleAccount(), "out-for-delivery", "", with(deliveryVars(), "NAME", "Asha \t\n  Rao"))
	if err != nil {
		t.Fatal(err)
	}
	if ct.Params[0] != "Asha Rao" {
		t.Errorf("param %q: runs of spaces must be collapsed", ct.Params[0])
	}
	if _, err := r.CloudTemplate(ctx, sampleAccount(), "out-for-delivery", "", nil); len(fieldsOf(t, err)) != 3 {
		t.Errorf("missing variables: %v", err)
	}
	if _, err := r.CloudTemplate(ctx, sampleAccount(), "nope", "", nil); fieldsOf(t, err)["template_slug"] == "" {
		t.Errorf("unknown slug: %v", err)
	}
}

func TestRenderConcurrent(t *testing.T) {
	r := newRenderer(t, newMemTemplates())
	done := make(chan error, 8)
	for g := range 8 {
		go func() {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				var out *notify.Rendered
				out, err = r.Render(context.Background(), email.Kind, sampleAccount(), "out-for-delivery", "",
					with(deliveryVars(), "NAME", strings.Repeat("x", g+1)))
				if err == nil && !strings.Contains(out.Text, "Hello "+strings.Repeat("x", g+1)+",") {
					err = errors.New("wrong text")
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestLinkHosts(t *testing.T) {
	r := newRenderer(t, nil)
	for _, c := range []struct {
		link string
		ok   bool
	}{
		{"https://xn--h1aax.example/p", true},
		{"https://खोज.example/p", true},
		{"https://a.example:443", true},
		{"https://a.example:/p", true},
		{"https://a.example%2Fb/p", false},
		{"https://a<b>.example/", false},
		{"https://a.example:80x/", false},
		{"https://a.example/%zz", false},
		{"https://[::1", false},
		{"https://[::1]@evil.example/", false},
		{"https://a.example/p%20q", true},
	} {
		_, err := r.Render(context.Background(), chat.Kind, sampleAccount(), "out-for-delivery", "",
			with(deliveryVars(), "TRACKING_LINK", c.link))
		if (err == nil) != c.ok {
			t.Errorf("link %q: err %v, want ok=%v", c.link, err, c.ok)
		}
	}
}
