package smtp

import (
	"strings"
	"testing"
	"time"

	mail "github.com/xhit/go-simple-mail/v2"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
)

// BenchmarkBuild compares building one message of 1 KB HTML with its text
// alternative here against go-simple-mail's Email builder, in one run:
//
//	go test -run '^$' -bench Build -count 6 ./provider/smtp
func BenchmarkBuild(b *testing.B) {
	html := "<html><body><h1>Your order has shipped</h1>" +
		strings.Repeat("<p>Thank you for shopping with us. Your parcel is on its way and will arrive soon.</p>\n", 10) +
		"<p><a href=\"https://shop.example/track\">Track it</a></p></body></html>"
	text := "Your order has shipped. Track it (https://shop.example/track)"

	b.Run("go-simple-mail", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e := mail.NewMSG()
			e.SetFrom("Shop <noreply@shop.example>").AddTo("asha@example.com").SetSubject("Your order has shipped")
			e.SetBody(mail.TextHTML, html)
			e.AddAlternative(mail.TextPlain, text)
			if e.GetError() != nil || len(e.GetMessage()) == 0 {
				b.Fatal(e.GetError())
			}
		}
	})
	b.Run("provider", func(b *testing.B) {
		st, err := Server{Host: "127.0.0.1", From: "noreply@shop.example", FromName: "Shop"}.settings()
		if err != nil {
			b.Fatal(err)
		}
		env := &notify.Envelope{ID: "3f1c2a4e-1b2c-4d5e-8f90-a1b2c3d4e5f6", To: "asha@example.com",
			Content: &email.Message{Subject: "Your order has shipped", HTML: html, Text: text}}
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		for b.Loop() {
			w, err := checkEnvelope(env)
			if err != nil {
				b.Fatal(err)
			}
			_, out, err := build(buf, st, env, w, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			buf = out[:0]
		}
	})
}
