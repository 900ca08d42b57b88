package mimewalk

import (
	"errors"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"testing"
)

const nested = "Content-Type: multipart/mixed; boundary=outer\r\n\r\n" +
	"--outer\r\nContent-Type: multipart/alternative; boundary=inner\r\n\r\n" +
	"--inner\r\nContent-Type: text/plain\r\n\r\nhello\r\n" +
	"--inner\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>h=C3=A9</p>\r\n" +
	"--inner--\r\n" +
	"--outer\r\nContent-Type: application/pdf; name=\"=?utf-8?q?r=C3=A9sum=C3=A9.pdf?=\"\r\n" +
	"Content-Disposition: attachment\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBE\r\n Ri0x\r\n" +
	"--outer\r\nContent-Type: ;;bad\r\n\r\nx\r\n" +
	"--outer--\r\n"

func TestWalk(t *testing.T) {
	msg, err := mail.ReadMessage(strings.NewReader(nested))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = Walk(msg.Header, msg.Body, func(p Part) error {
		b, err := io.ReadAll(p.Body)
		if err != nil {
			return err
		}
		got = append(got, p.MediaType+"|"+p.Disposition+"|"+p.FileName+"|"+p.BadType+"|"+strings.TrimSpace(string(b)))
		return nil
	})
	want := []string{
		"text/plain||||hello",
		"text/html||||<p>hé</p>",
		"application/pdf|attachment|résumé.pdf||%PDF-1",
		"application/octet-stream|||;;bad|x",
	}
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Walk = %v\n%s\nwant\n%s", err, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWalkBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("Content-Type: multipart/mixed; boundary=b\r\n\r\n")
	for range MaxParts + 1 {
		b.WriteString("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n")
	}
	b.WriteString("--b--\r\n")
	msg, err := mail.ReadMessage(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := Walk(msg.Header, msg.Body, func(Part) error { return nil }); !errors.Is(err, ErrTooMany) {
		t.Fatalf("%d parts: %v, want ErrTooMany", MaxParts+1, err)
	}
	var deep strings.Builder
	for i := range MaxDepth + 2 {
		fmt.Fprintf(&deep, "Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n", i, i)
	}
	msg, err = mail.ReadMessage(strings.NewReader(deep.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := Walk(msg.Header, msg.Body, func(Part) error { return nil }); !errors.Is(err, ErrTooMany) {
		t.Fatalf("nested %d deep: %v, want ErrTooMany", MaxDepth+2, err)
	}
	stop := errors.New("stop")
	msg, _ = mail.ReadMessage(strings.NewReader(nested))
	if err := Walk(msg.Header, msg.Body, func(Part) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("visit's error: %v", err)
	}
}
