package smtptest_test

import (
	"context"
	"errors"
	"fmt"
	"net/smtp"
	"net/textproto"
	"time"

	"github.com/notifykit/notify/provider/smtp/smtptest"
)

func Example() {
	srv := smtptest.NewServer()
	defer srv.Close()

	msg := "From: shop@example.com\r\nTo: asha@example.com\r\nSubject: Welcome\r\n\r\nHello Asha.\r\n"
	err := smtp.SendMail(srv.Addr, nil, "shop@example.com", []string{"asha@example.com"}, []byte(msg))
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.WaitMessages(ctx, 1); err != nil {
		fmt.Println(err)
		return
	}
	m := srv.Messages()[0]
	fmt.Println(m.From, "->", m.To[0])
	fmt.Println("Subject:", m.Header.Get("Subject"))
	// Output:
	// shop@example.com -> asha@example.com
	// Subject: Welcome
}

// A server that wants a login over STARTTLS; clients trust its
// self-signed certificate through ClientTLSConfig or CertPool.
func ExampleWithStartTLS() {
	srv := smtptest.NewServer(smtptest.WithStartTLS(), smtptest.WithAuth("mailer", "secret"))
	defer srv.Close()

	c, err := smtp.Dial(srv.Addr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.StartTLS(srv.ClientTLSConfig()); err != nil {
		fmt.Println(err)
		return
	}
	// net/smtp's PLAIN insists on TLS or localhost; it has TLS here.
	if err := c.Auth(smtp.PlainAuth("", "mailer", "secret", srv.Host)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("logged in over TLS")
	// Output: logged in over TLS
}

// RejectNext makes the next message fail, here with a temporary error.
func ExampleServer_RejectNext() {
	srv := smtptest.NewServer()
	defer srv.Close()
	srv.RejectNext(451, "4.3.0 Try again later")

	msg := []byte("Subject: x\r\n\r\nx\r\n")
	err := smtp.SendMail(srv.Addr, nil, "a@example.com", []string{"b@example.com"}, msg)
	var reply *textproto.Error
	if errors.As(err, &reply) {
		fmt.Println(reply.Code, reply.Msg)
	}
	err = smtp.SendMail(srv.Addr, nil, "a@example.com", []string{"b@example.com"}, msg)
	fmt.Println(err, srv.Received())
	// Output:
	// 451 4.3.0 Try again later
	// <nil> 1
}

// A message with a file, as a mail client would send it; Attachments
// decodes the file parts of what the server received.
func ExampleMessage_Attachments() {
	srv := smtptest.NewServer()
	defer srv.Close()

	msg := "From: shop@example.com\r\nTo: asha@example.com\r\nSubject: Invoice\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: text/plain\r\n\r\nAttached.\r\n" +
		"--B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"INV-7.pdf\"\r\n" +
		"Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n--B--\r\n"
	err := smtp.SendMail(srv.Addr, nil, "shop@example.com", []string{"asha@example.com", "audit@example.com"}, []byte(msg))
	if err != nil {
		fmt.Println(err)
		return
	}
	m := srv.Messages()[0]
	files, err := m.Attachments()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("RCPT TO:", m.To)
	fmt.Printf("%s %s %q\n", files[0].FileName, files[0].ContentType, files[0].Data)
	// Output:
	// RCPT TO: [asha@example.com audit@example.com]
	// INV-7.pdf application/pdf "%PDF-1.4\n"
}
