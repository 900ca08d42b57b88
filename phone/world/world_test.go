package world_test

import (
	"strings"
	"testing"

	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/phone/world"
)

func TestParse(t *testing.T) {
	good := []struct {
		raw, region, e164, country string
		typ                        phone.Type
	}{
		{"+1 415 555 0100", "IN", "+14155550100", "US", phone.FixedLineOrMobile},
		{"(415) 555-0100", "US", "+14155550100", "US", phone.FixedLineOrMobile},
		{"+44 7400 123456", "IN", "+447400123456", "GB", phone.Mobile},
		{"07400 123456", "GB", "+447400123456", "GB", phone.Mobile},
		{"+44 20 7946 0958", "IN", "+442079460958", "GB", phone.FixedLine},
		{"+1 900 555 0100", "IN", "+19005550100", "US", phone.PremiumRate},
		{"+44 909 876 5432", "IN", "+449098765432", "GB", phone.PremiumRate},
		{"+1 800 555 0100", "IN", "+18005550100", "US", phone.TollFree},
		{"+49 1512 3456789", "IN", "+4915123456789", "DE", phone.Mobile},
		{"+1 416 555 0100", "IN", "+14165550100", "CA", phone.FixedLineOrMobile},
		{"+91 22 2345 6789", "US", "+912223456789", "IN", phone.FixedLine},
	}
	for _, c := range good {
		n, err := world.Plan{}.Parse(c.raw, c.region)
		if err != nil || n.E164 != c.e164 || n.Region != c.country || n.Type != c.typ {
			t.Errorf("Parse(%q, %s) = %+v, %v; want %s %s %s", c.raw, c.region, n, err, c.e164, c.country, c.typ)
		}
	}
	bad := map[string]string{
		"+1 415 555":         "too short",
		"+1 415 555 0100 99": "too long",
		"+999 1234 5678":     "country code",
		"hello":              "not a phone number",
		"+44 7700 900123":    "not a valid number of +44", // Ofcom's range for drama: assigned to no one
		"":                   "not a phone number",
	}
	for raw, want := range bad {
		_, err := world.Plan{}.Parse(raw, "US")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v; want it to mention %q", raw, err, want)
		}
		if err != nil && raw != "" && strings.Contains(err.Error(), strings.TrimSpace(raw)) {
			t.Errorf("the error repeats the number: %v", err)
		}
	}
}

func TestIndianNumbersTakeTheFastPath(t *testing.T) {
	// Through phone.Parse the plan sees only the others: the same result
	// either way for an Indian mobile number.
	fast, err := phone.Parse("+91 98765 43210", "IN", world.Plan{})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := world.Plan{}.Parse("+91 98765 43210", "IN")
	if err != nil || slow != fast {
		t.Errorf("world reads %+v, %v; the fast path %+v", slow, err, fast)
	}
}

func BenchmarkParse(b *testing.B) {
	for _, in := range []string{"+1 415 555 0100", "+44 7400 123456"} {
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				if _, err := (world.Plan{}).Parse(in, "IN"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A national number that does not read as one of the region says how it
// was read and how to write another country's; an international one
// does not need the hint.
func TestNationalErrorsNameTheFix(t *testing.T) {
	_, err := world.Plan{}.Parse("555 01", "US")
	if err == nil || !strings.Contains(err.Error(), "read as a number of the account's region, US; write") || !strings.Contains(err.Error(), "with its country code") {
		t.Errorf("national: %v", err)
	}
	_, err = world.Plan{}.Parse("+1 555 01", "US")
	if err == nil || strings.Contains(err.Error(), "account's region") {
		t.Errorf("international: %v", err)
	}
}
