package phone

import (
	"strings"
	"testing"
)

func TestParseIndian(t *testing.T) {
	good := map[string]string{
		"9876543210":          "+919876543210",
		"+91 98765 43210":     "+919876543210",
		"+91-98765-43210":     "+919876543210",
		"919876543210":        "+919876543210",
		"09876543210":         "+919876543210",
		"6000000000":          "+916000000000",
		" 98765-432-10 ":      "+919876543210",
		"+919876543210":       "+919876543210",
		"7 8 9 0 1 2 3 4 5 6": "+917890123456",
		"(+91) 98765.43210":   "+919876543210",
	}
	for in, want := range good {
		got, err := Parse(in, "", nil)
		if err != nil || got.E164 != want || got.Region != "IN" || got.CallingCode != 91 || got.Type != Mobile {
			t.Errorf("Parse(%q) = %+v, %v; want %s, IN, 91, mobile", in, got, err, want)
		}
		if err == nil && got.National() != want[3:] {
			t.Errorf("Parse(%q).National() = %q", in, got.National())
		}
	}
	bad := map[string]string{
		"":                   "required",
		"  ":                 "required",
		"987654321":          "10 digits, found 9",
		"98765432101":        "10 digits, found 11",
		"98765abc10":         `found "a"`,
		"5876543210":         "start with 6, 7, 8 or 9",
		"+91 5876543210":     "start with 6, 7, 8 or 9",
		"0000000000":         "start with 6",
		"+1 9876543210":      "not an Indian number",
		"++919876543210":     `found "+"`,
		"98765+43210":        `found "+"`,
		"919876543210123456": "too long",
		"१२३४५६७८९०":         "only digits",
		"+":                  "required",
		"+9":                 "not an Indian number",
	}
	for in, want := range bad {
		_, err := Parse(in, "IN", nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v; want it to mention %q", in, err, want)
		}
	}
}

func TestParseNeedsAPlanAbroad(t *testing.T) {
	// A number without a country code dialled from another region is not
	// read as Indian, even when it looks like one.
	_, err := Parse("9876543210", "US", nil)
	if err == nil || !strings.Contains(err.Error(), "numbers of US need a numbering plan") {
		t.Errorf("Parse from US without a plan: %v", err)
	}
	// The fast path still reads +91 numbers for any region.
	n, err := Parse("+91 98765 43210", "US", nil)
	if err != nil || n.E164 != "+919876543210" {
		t.Errorf("Parse(+91…, US) = %+v, %v", n, err)
	}
}

func TestParseAsksThePlanForTheRest(t *testing.T) {
	p := &fakePlan{n: Number{E164: "+14155550100", CallingCode: 1, Region: "US", Type: FixedLineOrMobile}}
	n, err := Parse("+1 415 555 0100", "IN", p)
	if err != nil || n != p.n || p.raw != "+1 415 555 0100" || p.region != "IN" {
		t.Errorf("Parse = %+v, %v; plan asked %q, %q", n, err, p.raw, p.region)
	}
	// Indian numbers never reach the plan.
	p.raw = ""
	if _, err := Parse("+91 98765 43210", "IN", p); err != nil || p.raw != "" {
		t.Errorf("an Indian number went to the plan: %v, %q", err, p.raw)
	}
}

type fakePlan struct {
	n           Number
	raw, region string
}

func (p *fakePlan) Parse(raw, region string) (Number, error) {
	p.raw, p.region = raw, region
	return p.n, nil
}

func TestAllowed(t *testing.T) {
	in := Number{E164: "+919876543210", CallingCode: 91, Region: "IN", Type: Mobile}
	us := Number{E164: "+14155550100", CallingCode: 1, Region: "US", Type: FixedLineOrMobile}
	cases := []struct {
		n         Number
		region    string
		countries []string
		want      string // "" allowed, else part of the error
	}{
		{in, "", nil, ""},
		{us, "", nil, "is a number of US, and the account may send to IN only"},
		{us, "US", nil, ""},
		{in, "US", nil, "may send to US only"},
		{us, "IN", []string{"IN", "US"}, ""},
		{us, "IN", []string{"IN", "GB"}, "not among the account's countries (IN, GB)"},
		{us, "IN", []string{AnyCountry}, ""},
		{us, "IN", []string{"A", "B", "C", "D", "E", "F"}, "(A, B, C, D, E, …)"},
	}
	for _, c := range cases {
		err := Allowed(c.n, c.region, c.countries)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Allowed(%s, %q, %v) = %v; want %q", c.n.Region, c.region, c.countries, err, c.want)
		}
	}
}

func TestTypes(t *testing.T) {
	for typ := Unknown; typ <= Voicemail; typ++ {
		if typ.String() == "" || strings.HasPrefix(typ.String(), "type ") {
			t.Errorf("type %d has no name", typ)
		}
		if want := typ == Mobile || typ == FixedLineOrMobile; typ.TakesSMS() != want {
			t.Errorf("%s.TakesSMS() = %v", typ, !want)
		}
	}
	if Type(99).String() != "type 99" {
		t.Errorf("Type(99) = %q", Type(99).String())
	}
}

func FuzzParseIndian(f *testing.F) {
	for _, s := range []string{"9876543210", "+91 98765 43210", "0", "+", "91", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s, "IN", nil)
		if err != nil {
			return
		}
		nat := got.National()
		if len(got.E164) != 13 || got.E164[:3] != "+91" || !nationalMobile(nat) {
			t.Fatalf("Parse(%q) = %+v: not an Indian mobile number", s, got)
		}
		for _, form := range []string{got.E164, nat} {
			if again, err := Parse(form, "IN", nil); err != nil || again != got {
				t.Fatalf("Parse not idempotent on %q: %+v, %v", form, again, err)
			}
		}
	})
}

func BenchmarkParseIndian(b *testing.B) {
	for _, in := range []string{"9876543210", "+919876543210", "+91 98765 43210"} {
		b.Run(in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(in, "IN", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestParseAllowed(t *testing.T) {
	if n, err := ParseAllowed("9876543210", "", nil, nil); err != nil || n.E164 != "+919876543210" {
		t.Errorf("an Indian number for an Indian account: %+v, %v", n, err)
	}
	if _, err := ParseAllowed("+91 98765 43210", "US", nil, nil); err == nil || !strings.Contains(err.Error(), "may send to US only") {
		t.Errorf("an Indian number for a US account: %v", err)
	}
	if _, err := ParseAllowed("98765", "", nil, nil); err == nil || !strings.Contains(err.Error(), "10 digits") {
		t.Errorf("a bad number: %v", err)
	}
}
