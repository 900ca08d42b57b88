package smtp

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
)

// FuzzBuildAttachment: a message with a file that checkAttachments lets
// through is well-formed multipart/mixed whose lines stay within the
// limit, and the file comes back with its name, type and bytes; the text
// body and the Cc header too, and the bcc address shows nowhere.
func FuzzBuildAttachment(f *testing.F) {
	f.Add("report.pdf", "application/pdf", []byte("%PDF-1.4\n\x00\xff"), "plain text")
	f.Add("résumé €.pdf", "", []byte{}, "")
	f.Add(strings.Repeat("ü", 120), "text/plain; charset=utf-8", bytes.Repeat([]byte("=_--\r\n"), 200), "--=_x\r\n.\r\n")
	f.Add("a\"b;c=d.txt", "application/x-thing", []byte("x"), "é")
	st := testSettings(f)
	f.Fuzz(func(t *testing.T, name, ctype string, data []byte, text string) {
		if text == "" {
			text = "body"
		}
		m := &email.Message{Subject: "Files", Text: text, Cc: []string{"c@example.com"}, Bcc: []string{"hidden@example.org"},
			Attachments: []email.Attachment{{FileName: name, ContentType: ctype, Data: data}}}
		if len(data) == 0 {
			m.Attachments[0].Data = []byte{0}
		}
		env := &notify.Envelope{ID: "fuzz-1", To: "asha@example.com", Content: m}
		w, err := checkEnvelope(env)
		if err != nil {
			t.Skip("the channel refuses these")
		}
		if checkAttachments(m, DefaultMaxAttachmentBytes) != nil {
			t.Skip("refused before building")
		}
		msg, _, err := build(nil, st, env, w, time.Unix(1700000000, 0))
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		for _, line := range strings.Split(msg.data, "\r\n") {
			if len(line) > maxLine {
				t.Fatalf("line of %d bytes", len(line))
			}
			if strings.ContainsAny(line, "\r\n") {
				t.Fatalf("bare CR or LF in %q", line)
			}
		}
		if strings.Contains(msg.data, "hidden@example.org") {
			t.Fatal("the bcc address is in the message")
		}
		pm, err := mail.ReadMessage(strings.NewReader(msg.data))
		if err != nil {
			t.Fatalf("net/mail: %v", err)
		}
		if cc, err := pm.Header.AddressList("Cc"); err != nil || len(cc) != 1 || cc[0].Address != "c@example.com" {
			t.Errorf("Cc %q: %v", pm.Header.Get("Cc"), err)
		}
		mt, params, err := mime.ParseMediaType(pm.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/mixed" {
			t.Fatalf("Content-Type %q: %v", pm.Header.Get("Content-Type"), err)
		}
		r := multipart.NewReader(pm.Body, params["boundary"])
		body, err := r.NextRawPart()
		if err != nil {
			t.Fatal(err)
		}
		if ct := body.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("first part %q", ct)
		}
		file, err := r.NextRawPart()
		if err != nil {
			t.Fatal(err)
		}
		_, dp, err := mime.ParseMediaType(file.Header.Get("Content-Disposition"))
		if err != nil || dp["filename"] != name {
			t.Errorf("file name %q (%v), want %q", dp["filename"], err, name)
		}
		fmt, _, err := mime.ParseMediaType(file.Header.Get("Content-Type"))
		want := email.DefaultContentType
		if ctype != "" {
			want, _, _ = mime.ParseMediaType(ctype)
		}
		if err != nil || fmt != want {
			t.Errorf("file type %q (%v), want %q", fmt, err, want)
		}
		got, err := io.ReadAll(base64.NewDecoder(base64.StdEncoding, file))
		if err != nil || !bytes.Equal(got, m.Attachments[0].Data) {
			t.Errorf("file data round trip: %v", err)
		}
		if _, err := r.NextRawPart(); err != io.EOF {
			t.Errorf("after the file: %v, want the end", err)
		}
	})
}

func TestLineWriter(t *testing.T) {
	lw := &lineWriter{}
	enc := base64.NewEncoder(base64.StdEncoding, lw)
	data := bytes.Repeat([]byte{0xfb, 0xff, 0x00}, 1000)
	for i := 0; i < len(data); i += 7 { // odd-sized writes
		_, _ = enc.Write(data[i:min(i+7, len(data))])
	}
	_ = enc.Close()
	lines := strings.Split(string(lw.b), "\r\n")
	for i, l := range lines {
		if len(l) != 76 && i != len(lines)-1 || len(l) > 76 {
			t.Fatalf("line %d is %d characters", i, len(l))
		}
	}
	got, err := base64.StdEncoding.DecodeString(strings.Join(lines, ""))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("round trip: %v", err)
	}
}
