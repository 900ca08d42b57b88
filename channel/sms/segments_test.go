package sms_test

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/notifykit/notify/channel/sms"
)

func TestSegments(t *testing.T) {
	r := strings.Repeat
	tests := []struct {
		name     string
		text     string
		enc      sms.Encoding
		segments int
		units    int
	}{
		{"empty", "", sms.GSM7, 1, 0},
		{"plain", "Your OTP is 482913", sms.GSM7, 1, 18},
		{"exactly 160", r("a", 160), sms.GSM7, 1, 160},
		{"161", r("a", 161), sms.GSM7, 2, 161},
		{"153*2", r("a", 306), sms.GSM7, 2, 306},
		{"153*2+1", r("a", 307), sms.GSM7, 3, 307},
		{"153*10", r("a", 1530), sms.GSM7, 10, 1530},
		{"153*10+1", r("a", 1531), sms.GSM7, 11, 1531},
		{"GSM accented letters", "Café £5 ¥ § ¿Ñü? Δ Ω @ _ $", sms.GSM7, 1, 26},
		{"extension chars count 2", "^{}\\[~]|€\f", sms.GSM7, 1, 20},
		{"80 braces fill one segment", r("{", 80), sms.GSM7, 1, 160},
		{"81 braces", r("{", 81), sms.GSM7, 2, 162},
		// 152 septets then '{': the escape pair cannot straddle the
		// boundary, so part one holds 152 and the pair opens part two.
		{"extension char at a part boundary", r("a", 152) + "{" + r("a", 8), sms.GSM7, 2, 162},
		{"extension chars fill parts unevenly", r("€", 154), sms.GSM7, 3, 308},
		{"backtick is not GSM", "a`b", sms.UCS2, 1, 3},
		{"tab is not GSM", "a\tb", sms.UCS2, 1, 3},
		{"one Hindi letter switches", r("a", 69) + "क", sms.UCS2, 1, 70},
		{"Hindi 70", r("क", 70), sms.UCS2, 1, 70},
		{"Hindi 71", r("क", 71), sms.UCS2, 2, 71},
		{"Hindi sentence", "आपका OTP 482913 है। इसे किसी के साथ साझा न करें।", sms.UCS2, 1, 48},
		{"UCS-2 67*2", r("क", 134), sms.UCS2, 2, 134},
		{"UCS-2 67*2+1", r("क", 135), sms.UCS2, 3, 135},
		{"emoji counts 2", "Hi 😀", sms.UCS2, 1, 5},
		{"35 emoji fill one segment", r("😀", 35), sms.UCS2, 1, 70},
		{"36 emoji", r("😀", 36), sms.UCS2, 2, 72},
		// 66 units then an emoji: the surrogate pair moves to part two.
		{"surrogate pair at a part boundary", r("क", 66) + "😀" + r("क", 3), sms.UCS2, 2, 71},
		{"extension chars in UCS-2 count 1", r("{", 70) + "क", sms.UCS2, 2, 71},
		{"invalid UTF-8", "ok\xff", sms.UCS2, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, segments, units := sms.Segments(tt.text)
			if enc != tt.enc || segments != tt.segments || units != tt.units {
				t.Fatalf("Segments = %s, %d segments, %d units; want %s, %d, %d",
					enc, segments, units, tt.enc, tt.segments, tt.units)
			}
		})
	}
}

func TestSegmentsAllocatesNothing(t *testing.T) {
	texts := []string{strings.Repeat("a{", 300), strings.Repeat("आपका 😀", 100), "Café"}
	allocs := testing.AllocsPerRun(100, func() {
		for _, s := range texts {
			sms.Segments(s)
		}
	})
	if allocs != 0 {
		t.Fatalf("Segments allocates %v times per run", allocs)
	}
}

// FuzzSegments checks Segments against a slow reference that splits the
// text into parts one character at a time.
func FuzzSegments(f *testing.F) {
	for _, s := range []string{"", "hello", strings.Repeat("a", 161), strings.Repeat("€", 77),
		"नमस्ते 😀", strings.Repeat("😀", 34) + "a", "\xff\xfe", strings.Repeat("a", 152) + "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		enc, segments, units := sms.Segments(text)
		wantEnc, wantSegments, wantUnits := referenceSegments(text)
		if enc != wantEnc || segments != wantSegments || units != wantUnits {
			t.Fatalf("Segments(%q) = %s %d %d; reference %s %d %d",
				text, enc, segments, units, wantEnc, wantSegments, wantUnits)
		}
	})
}

// referenceSegments is the plain-spoken version of Segments: find the
// encoding, then fill parts character by character.
func referenceSegments(text string) (sms.Encoding, int, int) {
	const basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
		"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	const ext = "\f^{}\\[~]|€"
	var widths []int
	gsm := true
	for _, r := range text {
		switch {
		case strings.ContainsRune(basic, r):
			widths = append(widths, 1)
		case strings.ContainsRune(ext, r):
			widths = append(widths, 2)
		default:
			gsm = false
		}
	}
	enc, single, part := sms.GSM7, 160, 153
	if !gsm {
		enc, single, part = sms.UCS2, 70, 67
		widths = widths[:0]
		for _, r := range text {
			if r == utf8.RuneError {
				widths = append(widths, 1)
				continue
			}
			widths = append(widths, len(utf16.Encode([]rune{r})))
		}
	}
	total := 0
	for _, w := range widths {
		total += w
	}
	if total <= single {
		return enc, 1, total
	}
	parts, fill := 1, 0
	for _, w := range widths {
		if fill+w > part {
			parts++
			fill = 0
		}
		fill += w
	}
	return enc, parts, total
}

// BenchmarkSegments measures each path of Segments beside a baseline that
// only decodes the text's characters (the least any counter must do).
func BenchmarkSegments(b *testing.B) {
	inputs := []struct{ name, text string }{
		{"ascii", strings.Repeat("Your OTP is 482913. Do not share it. ", 40)},
		{"gsm-ext", strings.Repeat("Price: €5 {promo} [code]|~^ Café £ ", 40)},
		{"ucs2-hindi", strings.Repeat("आपका OTP 482913 है। इसे साझा न करें। ", 40)},
		{"ucs2-emoji", strings.Repeat("Sale 😀🎉 today ", 80)},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				sms.Segments(in.text)
			}
		})
		b.Run(in.name+"-baseline", func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			n := 0
			for b.Loop() {
				for range in.text {
					n++
				}
			}
			if n == 0 {
				b.Fatal("no characters")
			}
		})
	}
}
