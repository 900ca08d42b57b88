package dlt_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/notifykit/notify/template/dlt"
)

const otpTemplate = "Your OTP for {#var#} is {#var#}. It is valid for 10 minutes. - ACME"

func TestMatch(t *testing.T) {
	tests := []struct {
		name    string
		content string
		text    string
		want    []string
	}{
		{"no placeholders", "Your order has shipped.", "Your order has shipped.", nil},
		{"two values", otpTemplate, "Your OTP for login is 482913. It is valid for 10 minutes. - ACME", []string{"login", "482913"}},
		{"empty value", "Hello {#var#}!", "Hello !", []string{""}},
		{"value with spaces and punctuation", "Dear {#var#}, thanks.", "Dear Asha K. (Pune), thanks.", []string{"Asha K. (Pune)"}},
		{"exactly 30 characters", "Ref {#var#} ok", "Ref " + strings.Repeat("x", 30) + " ok", []string{strings.Repeat("x", 30)}},
		{"30 Hindi characters", "नमस्ते {#var#}", "नमस्ते " + strings.Repeat("क", 30), []string{strings.Repeat("क", 30)}},
		{"placeholder at both ends", "{#var#} is your code {#var#}", "1234 is your code for login", []string{"1234", "for login"}},
		{"adjacent placeholders", "A{#var#}{#var#}B", "AxyB", []string{"", "xy"}},
		{"value contains the next literal", "Hi {#var#}, bye", "Hi a, b, bye", []string{"a, b"}},
		{"backtracking past a too-long early split", "{#var#} x {#var#}", "a x " + strings.Repeat("b", 30), []string{"a", strings.Repeat("b", 30)}},
		{"value may contain a newline", "Code:{#var#}.", "Code:12\n34.", []string{"12\n34"}},
		{"upper-case marker is literal", "Hi {#VAR#}", "Hi {#VAR#}", nil},
		{"empty template and text", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dlt.Match(tt.content, tt.text)
			if err != nil {
				t.Fatalf("Match: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("values = %q, want %q", got, tt.want)
			}
			filled, err := dlt.Fill(tt.content, got)
			if err != nil || filled != tt.text {
				t.Fatalf("Fill(values) = %q, %v; want the text back", filled, err)
			}
		})
	}
}

func TestMatchMismatch(t *testing.T) {
	long := strings.Repeat("n", 31)
	tests := []struct {
		name    string
		content string
		text    string
		want    dlt.MismatchError
		msg     string
	}{
		{
			name: "changed word after a value", content: otpTemplate,
			text: "Your OTP for login is 482913. It is good for 10 minutes. - ACME",
			want: dlt.MismatchError{Offset: 36, Expected: "valid for 10 minutes. - …", Found: "good for 10 minutes. - A…"},
			msg:  `at character 37: expected "valid for 10 minutes. - …", found "good for 10 minutes. - A…"`,
		},
		{
			name: "changed first word", content: otpTemplate,
			text: "Our OTP for login is 1. It is valid for 10 minutes. - ACME",
			want: dlt.MismatchError{Offset: 0, Expected: "Your OTP for {#var#} is …", Found: "Our OTP for login is 1. …"},
		},
		{
			name: "case differs", content: "Dear {#var#}, your bill is due.",
			text: "Dear Asha, your Bill is due.",
			want: dlt.MismatchError{Offset: 16, Expected: "bill is due.", Found: "Bill is due."},
		},
		{
			name: "missing punctuation right after a value", content: "Hi {#var#}, welcome",
			text: "Hi Asha welcome",
			want: dlt.MismatchError{Offset: 3, Expected: "{#var#}, welcome", Found: "Asha welcome"},
		},
		{
			name: "text runs past the template", content: "Hello {#var#}. Bye",
			text: "Hello A. Bye now",
			want: dlt.MismatchError{Offset: 12, Expected: "", Found: " now"},
			msg:  `expected end of text, found " now"`,
		},
		{
			name: "text stops early", content: "Pay {#var#} by {#var#} please",
			text: "Pay 100 by Monday",
			want: dlt.MismatchError{Offset: 11, Expected: "{#var#} please", Found: "Monday"},
		},
		{
			name: "no placeholders, extra text", content: "Fixed text", text: "Fixed text!",
			want: dlt.MismatchError{Offset: 10, Expected: "", Found: "!"},
		},
		{
			name: "no placeholders, short text", content: "Fixed text", text: "Fixed",
			want: dlt.MismatchError{Offset: 5, Expected: " text", Found: ""},
			msg:  `expected " text", found end of text`,
		},
		{
			name: "multi-byte difference", content: "नमस्ते {#var#} जी", text: "नमस्ते राम जा",
			want: dlt.MismatchError{Offset: 11, Expected: "जी", Found: "जा"},
		},
		{
			name: "value of 31 characters", content: "Dear {#var#}, thanks",
			text: "Dear " + long + ", thanks",
			want: dlt.MismatchError{Offset: 5, Expected: "{#var#}, thanks", Found: strings.Repeat("n", 24) + "…", Var: 1, Len: 31},
			msg:  "value 1 (at character 6) is 31 characters, over the limit of 30",
		},
		{
			name: "second value too long", content: otpTemplate,
			text: "Your OTP for login is " + long + ". It is valid for 10 minutes. - ACME",
			want: dlt.MismatchError{Offset: 22, Expected: "{#var#}. It is valid for…", Found: strings.Repeat("n", 24) + "…", Var: 2, Len: 31},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values, err := dlt.Match(tt.content, tt.text)
			var me *dlt.MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("Match = %q, %v; want a *MismatchError", values, err)
			}
			if *me != tt.want {
				t.Fatalf("error = %+v\nwant    %+v", *me, tt.want)
			}
			if tt.msg != "" && !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("message %q does not contain %q", err, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "dlt: ") {
				t.Fatalf("message %q lacks the package prefix", err)
			}
		})
	}
}

func TestFill(t *testing.T) {
	got, err := dlt.Fill(otpTemplate, []string{"login", "4829"})
	if err != nil || got != "Your OTP for login is 4829. It is valid for 10 minutes. - ACME" {
		t.Fatalf("Fill = %q, %v", got, err)
	}
	bad := []struct {
		name   string
		values []string
		want   string
	}{
		{"too few", []string{"login"}, "2 placeholders, got 1 values"},
		{"too many", []string{"a", "b", "c"}, "2 placeholders, got 3 values"},
		{"too long", []string{"login", strings.Repeat("9", 31)}, "value 2 is 31 characters, over the limit of 30"},
	}
	for _, tt := range bad {
		if _, err := dlt.Fill(otpTemplate, tt.values); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Fill error = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// FuzzMatch checks that Match never panics, that what it accepts Fill
// builds back, and that a text built by Fill is accepted.
func FuzzMatch(f *testing.F) {
	f.Add(otpTemplate, "Your OTP for login is 482913. It is valid for 10 minutes. - ACME", "a", "b")
	f.Add("{#var#}{#var#}", "xyz", "", "")
	f.Add("Hi {#var#}, bye", "Hi a, b, bye", "a, b", "")
	f.Add("{#var#", "{#var#", "\xff", "")
	f.Add("नमस्ते {#var#} जी", "नमस्ते राम जी", "राम", "{#var#}")
	f.Fuzz(func(t *testing.T, content, text, v1, v2 string) {
		values, err := dlt.Match(content, text)
		if err == nil {
			filled, ferr := dlt.Fill(content, values)
			if ferr != nil || filled != text {
				t.Fatalf("Match(%q, %q) = %q but Fill gives %q, %v", content, text, values, filled, ferr)
			}
		} else if utf8.ValidString(text) && utf8.ValidString(content) {
			var me *dlt.MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *MismatchError", err)
			}
			if me.Offset < 0 || me.Offset > utf8.RuneCountInString(text) {
				t.Fatalf("offset %d out of range for %q", me.Offset, text)
			}
		}
		// A text built from the template must match it.
		n := strings.Count(content, dlt.Placeholder)
		vals := make([]string, n)
		for i := range vals {
			if i%2 == 0 {
				vals[i] = v1
			} else {
				vals[i] = v2
			}
		}
		built, err := dlt.Fill(content, vals)
		if err != nil {
			return // a value over the limit
		}
		got, err := dlt.Match(content, built)
		if err != nil {
			t.Fatalf("Match(%q, Fill(...) = %q): %v", content, built, err)
		}
		if again, _ := dlt.Fill(content, got); again != built {
			t.Fatalf("Match(%q, %q) = %q, which does not fill back", content, built, got)
		}
	})
}
