package phone

import (
	"strings"
	"testing"
)

// Canonical drops the separators people write and keeps only an E.164
// number; the form a channel's envelope already has costs no copy.
func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"+919876543210":     "+919876543210",
		" +91 98765-43210 ": "+919876543210",
		"+1 (415) 555-0100": "+14155550100",
		"9876543210":        "",
		"+91 98765 4321x":   "",
		"":                  "",
	} {
		got, ok := Canonical(in)
		if ok != (want != "") || ok && got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Canonical("+919876543210") }); n != 0 {
		t.Errorf("Canonical of an E.164 number allocates %v times; want none", n)
	}
}

func TestParseType(t *testing.T) {
	for typ := Mobile; typ <= Voicemail; typ++ {
		name := strings.ReplaceAll(typ.String(), " ", "-")
		for _, s := range []string{name, strings.ToUpper(name)} {
			if got, ok := ParseType(s); !ok || got != typ {
				t.Errorf("ParseType(%q) = %v, %v; want %v", s, got, ok, typ)
			}
		}
	}
	for _, bad := range []string{"", "unknown", "fixed line", "mobile ", "cell"} {
		if got, ok := ParseType(bad); ok {
			t.Errorf("ParseType(%q) = %v, want false", bad, got)
		}
	}
}

// The registered plan reads for every Parse given none; a plan given
// wins, IndiaOnly reads nothing beyond India, and nil removes it.
func TestRegisterPlan(t *testing.T) {
	t.Cleanup(func() { RegisterPlan(nil) })
	us := Number{E164: "+14155550100", CallingCode: 1, Region: "US", Type: FixedLineOrMobile}
	if _, err := Parse("+14155550100", "IN", nil); err == nil || !strings.Contains(err.Error(), "phone/world's plan does: import it") {
		t.Fatalf("no plan: %v", err)
	}
	reg := &fakePlan{n: us}
	RegisterPlan(reg)
	if RegisteredPlan() != reg {
		t.Fatalf("RegisteredPlan = %v", RegisteredPlan())
	}
	if n, err := Parse("+14155550100", "IN", nil); err != nil || n != us || reg.raw != "+14155550100" {
		t.Fatalf("registered plan: %+v, %v (it read %q)", n, err, reg.raw)
	}
	if n, err := Parse("9876543210", "", nil); err != nil || n.Region != "IN" || reg.raw != "+14155550100" {
		t.Fatalf("an Indian number went past the fast path: %+v, %v", n, err)
	}
	own := &fakePlan{n: Number{E164: "+447700900123", CallingCode: 44, Region: "GB", Type: Mobile}}
	if n, err := Parse("+447700900123", "IN", own); err != nil || n.Region != "GB" {
		t.Fatalf("a plan given: %+v, %v", n, err)
	}
	if _, err := Parse("+14155550100", "IN", IndiaOnly{}); err == nil || !strings.Contains(err.Error(), "not an Indian number") {
		t.Fatalf("IndiaOnly: %v", err)
	}
	if _, err := Parse("4155550100", "US", IndiaOnly{}); err == nil || !strings.Contains(err.Error(), "numbers of US need a numbering plan") {
		t.Fatalf("IndiaOnly, a national number: %v", err)
	}
	if n, err := Parse("+919876543210", "IN", IndiaOnly{}); err != nil || n.Region != "IN" {
		t.Fatalf("IndiaOnly, an Indian number: %+v, %v", n, err)
	}
	RegisterPlan(nil)
	if RegisteredPlan() != nil {
		t.Fatal("RegisterPlan(nil) kept the plan")
	}
}

// A number without a country code that is no Indian number says how it
// was read and how to write another country's.
func TestNationalNumberErrorsNameTheFix(t *testing.T) {
	for raw, want := range map[string]string{
		"4155550100":    "must start with 6, 7, 8 or 9",
		"14155550100":   "must be 10 digits, found 11",
		"+1 4155550100": "",
	} {
		_, err := Parse(raw, "IN", nil)
		if want == "" {
			if err == nil || strings.Contains(err.Error(), "country code, such as") {
				t.Errorf("%s: %v, want the no-plan error without the national hint", raw, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "as a number of the account's region, IN; write") ||
			!strings.Contains(err.Error(), "with its country code, such as +1 415 555 0100") || strings.Contains(err.Error(), raw) {
			t.Errorf("%s: %v", raw, err)
		}
	}
	if _, err := Parse("12345", "IN", nil); err == nil || err.Error() != "must be 10 digits, found 5" {
		t.Errorf("a short typo: %v, want no hint", err)
	}
	if _, err := Parse("+91 415555010", "IN", nil); err == nil || strings.Contains(err.Error(), "such as") {
		t.Errorf("+91 with a bad number: %v, want no hint (it has its country code)", err)
	}
}
