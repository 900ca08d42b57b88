package email_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/notifykit/notify/channel/email"
)

func TestHTMLToText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain words", "Hello   world", "Hello world"},
		{"paragraphs", "<p>One</p><p>Two\n   lines</p>", "One\n\nTwo lines"},
		{"line break", "Line one<br>Line two<br/>Line three", "Line one\nLine two\nLine three"},
		{"entities", "<p>Tom &amp; Jerry &lt;3 &#8377;499&nbsp;only &copy;</p>", "Tom & Jerry <3 ₹499 only ©"},
		{"link", `<p>Pay <a href="https://pay.example/i/42">here</a> today.</p>`, "Pay here (https://pay.example/i/42) today."},
		{"link is its url", `<a href="https://x.example/">https://x.example/</a>`, "https://x.example/"},
		{"mailto", `Write to <a href="mailto:help@x.example">help@x.example</a>`, "Write to help@x.example"},
		{"link without text", `<a href="https://x.example/"><img src="logo.png"></a>`, "https://x.example/"},
		{"image alt in link", `<a href='https://x.example/'><img alt="Logo" src="l.png"/></a>`, "Logo (https://x.example/)"},
		{"anchor and script links", `<a href="#top">Top</a> <a href="javascript:alert(1)">x</a>`, "Top x"},
		{"entities in href", `<a href="https://x.example/?a=1&amp;b=2">go</a>`, "go (https://x.example/?a=1&b=2)"},
		{"list", "<ul><li>One</li><li>Two</li></ul><p>After</p>", "- One\n- Two\n\nAfter"},
		{"heading", "<h1>Invoice</h1>Total: 5", "Invoice\n\nTotal: 5"},
		{"table", "<table><tr><td>Item</td><td>₹5</td></tr><tr><td>Tax</td><td>₹1</td></tr></table>", "Item ₹5\nTax ₹1"},
		{"skipped", "<html><head><title>T</title><style>p{color:red}</style></head><body><script>if (a<b) x()</script>Hi</body></html>", "Hi"},
		{"comment", "A<!-- hidden <p>x</p> -->B", "AB"},
		{"doctype", "<!DOCTYPE html><p>x</p>", "x"},
		{"unclosed comment", "A<!-- never closed", "A"},
		{"less-than in text", "a < b and 3<4", "a < b and 3<4"},
		{"broken tag", "x <p class='y", "x <p class='y"},
		{"pre", "<pre>  two\n   spaces</pre>after", "two\n   spaces\n\nafter"},
		{"attribute with >", `<p title="a>b">text</p>`, "text"},
		{"nested blocks", "<div><div><p>Deep</p></div></div><div>Next</div>", "Deep\n\nNext"},
		{"empty", "", ""},
		{"only tags", "<p></p><br><div></div>", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := email.HTMLToText(tc.in); got != tc.want {
				t.Errorf("HTMLToText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestIsHTML(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"<p>Hi</p>", true},
		{"Hello<br>there", true},
		{"Hello<br/>there", true},
		{"x</b>", true},
		{"<!DOCTYPE html>", true},
		{"<!-- note -->", true},
		{`<a href="x">y</a>`, true},
		{"Plain text", false},
		{"a < b > c", false},
		{"I <3 you", false},
		{"Tom &amp; Jerry", false},
		{"<notclosed", false},
		{"price <= 5", false},
		{"", false},
	} {
		if got := email.IsHTML(tc.in); got != tc.want {
			t.Errorf("IsHTML(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzHTMLToText checks that any input converts without panicking, in
// bounded output, leaving no run of more than one blank line and no markup
// of the input's tags.
func FuzzHTMLToText(f *testing.F) {
	f.Add("<p>Hello <b>world</b></p>")
	f.Add(`<a href="https://x.example/?a=1&amp;b=2">go</a><ul><li>x</ul>`)
	f.Add("<script>if(a<b)</script><pre>x\n y</pre><!--")
	f.Add("<<<>>> </ < a href= '")
	f.Add("<table><tr><td>&#x20B9;</td></tr></table><br><br><br>")
	f.Fuzz(func(t *testing.T, in string) {
		out := email.HTMLToText(in)
		// Links repeat their URL once, so the text cannot grow beyond
		// twice the input (plus list markers).
		if len(out) > 3*len(in)+16 {
			t.Fatalf("output of %d bytes for %d bytes of input", len(out), len(in))
		}
		if strings.Contains(out, "\n\n\n") && !strings.Contains(in, "pre") {
			t.Errorf("more than one blank line in %q", out)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Errorf("valid input gave invalid UTF-8 %q", out)
		}
		if out != strings.TrimSpace(out) {
			t.Errorf("untrimmed output %q", out)
		}
	})
}
