package outbox_test

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/provider/memprovider"
)

// mailCode is a code of 10 digits, as package verify sends by e-mail:
// longer than the runs of digits taken for codes undeclared.
const mailCode = "4829135521"

// TestPageMasksADeclaredMailCode: an e-mail that declares its code
// (email.Request.OTP) shows it nowhere but in the value a click reveals:
// not in the subject (list and detail), the HTML part (text and link), the
// text part, nor, once the SMTP server's copy arrives, its headers and
// parts. The words around the code show as sent.
func TestPageMasksADeclaredMailCode(t *testing.T) {
	ch, err := email.New(email.Config{Provider: memprovider.New("capture")})
	if err != nil {
		t.Fatal(err)
	}
	env, err := ch.Prepare(context.Background(), &notify.Account{ID: "acme"}, &email.Request{
		To: "ravi@example.com", Subject: mailCode + " is your Acme code", OTP: mailCode,
		Message: `<p style="color:#123456">Enter <b>` + mailCode + `</b> to sign in, or open ` +
			`<a href="https://acme.example/v?code=` + mailCode + `">this link</a>. Order 12.</p>`,
	})
	if err != nil {
		t.Fatal(err)
	}
	env.ID = "mc1"
	o := newOutbox(t)
	accept(o, env)
	if m, _ := o.Message("mc1"); m.OTP != mailCode {
		t.Fatalf("outbox message OTP %q, want the declared code", m.OTP)
	}
	srv := httptest.NewServer(o)
	defer srv.Close()

	// hiddenIn fails unless every occurrence of the code in a page is a
	// value to reveal, there is at least one, and the words are there.
	hiddenIn := func(what, page string, words ...string) {
		t.Helper()
		all, asCode := strings.Count(page, mailCode), strings.Count(page, `data-code="`+mailCode+`"`)
		if all == 0 || all != asCode {
			t.Errorf("%s: the code appears %d times, %d of them hidden:\n%s", what, all, asCode, page)
		}
		for _, w := range words {
			if !strings.Contains(page, w) {
				t.Errorf("%s: %q is missing:\n%s", what, w, page)
			}
		}
	}
	// absentFrom fails if the code is anywhere in out, or a word is not.
	absentFrom := func(what, out string, words ...string) {
		t.Helper()
		if strings.Contains(out, mailCode) {
			t.Errorf("%s shows the code:\n%s", what, out)
		}
		for _, w := range words {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %q is missing:\n%s", what, w, out)
			}
		}
	}

	// As the channel prepared it.
	_, list := get(t, srv, "/outbox/list")
	hiddenIn("the list", list, "</button> is your Acme code")
	_, page := get(t, srv, "/outbox?id=mc1")
	detail := page[strings.Index(page, `<article`):]
	hiddenIn("the detail", detail, `<h2 class="subject"><button`, "</button> is your Acme code</h2>",
		"Enter ", " to sign in, or open this link (https://acme.example/v?code=", "Show codes")
	_, html := get(t, srv, "/outbox/mail/mc1")
	absentFrom("the HTML part", html, `<p style="color:#123456">Enter <b>••••••</b> to sign in`,
		`href="https://acme.example/v?code=••••••"`, "Order 12.")
	if _, html := get(t, srv, "/outbox/mail/mc1?reveal=1"); !strings.Contains(html, "<b>"+mailCode+"</b>") {
		t.Errorf("revealed HTML %q", html)
	}

	// As the SMTP server received it: the same message, its subject an
	// encoded word, its parts quoted-printable and base64.
	htmlPart := base64.StdEncoding.EncodeToString([]byte(email.MessageOf(env).HTML))
	received := "Date: Mon, 23 Nov 2026 10:00:00 +0000\r\n" +
		"Message-ID: <mc1@example.com>\r\n" +
		"From: Acme <notify@example.com>\r\n" +
		"To: ravi@example.com\r\n" +
		"Subject: =?utf-8?q?" + mailCode + "_is_your_Acme_code_=E2=9C=93?=\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: multipart/alternative; boundary=ALT\r\n\r\n" +
		"--ALT\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
		"Enter " + mailCode + " to sign in.\r\n" +
		"--ALT\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		htmlPart + "\r\n" +
		"--ALT--\r\n"
	if err := o.AddMail([]byte(received), []string{"ravi@example.com"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := o.Message("mc1"); !m.Email.Received || m.OTP != mailCode {
		t.Fatalf("received mail not matched, or its code lost: %+v", m)
	}
	_, list = get(t, srv, "/outbox/list")
	hiddenIn("the list, received", list, "</button> is your Acme code ✓")
	_, page = get(t, srv, "/outbox?id=mc1")
	detail = page[strings.Index(page, `<article`):]
	hiddenIn("the detail, received", detail, "</button> is your Acme code ✓</h2>",
		"<th>Subject</th><td><button", "</button> is your Acme code ✓</td>",
		"Enter <button", "</button> to sign in.",
		// Other headers keep their digits: only the declared code goes.
		"<td>Mon, 23 Nov 2026 10:00:00 &#43;0000</td>")
	_, html = get(t, srv, "/outbox/mail/mc1")
	absentFrom("the HTML part, received", html, "Enter <b>••••••</b> to sign in", "code=••••••", "Order 12.")
}

// Without a declared code, a 10-digit run in an OTP e-mail is taken for a
// number, as a phone number is: what the declaration is for.
func TestUndeclaredLongMailCodeShows(t *testing.T) {
	o := newOutbox(t)
	accept(o, &notify.Envelope{ID: "u1", Kind: email.Kind, To: "ravi@example.com", CarriesOTP: true,
		Content: &email.Message{Purpose: email.PurposeOTP, Subject: "Code " + mailCode, HTML: "<p>" + mailCode + "</p>", Text: mailCode}})
	srv := httptest.NewServer(o)
	defer srv.Close()
	if _, html := get(t, srv, "/outbox/mail/u1"); html != "<p>"+mailCode+"</p>" {
		t.Errorf("HTML %q", html)
	}
}
