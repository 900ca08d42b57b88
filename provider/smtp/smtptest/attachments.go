package smtptest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
)

// Attachment is a file part of a received message, decoded.
type Attachment struct {
	// FileName is the part's file name (Content-Disposition filename,
	// else Content-Type name), RFC 2231 and RFC 2047 forms decoded.
	FileName string
	// ContentType is the part's media type, without parameters.
	ContentType string
	// Data is the part's content with its transfer encoding undone.
	Data []byte
}

// Bounds of the structure Attachments walks, so that a malformed
// message cannot make it recurse without end.
const (
	maxDepth = 8
	maxParts = 200
)

// Attachments returns the file parts of the message, in order: every
// part whose Content-Disposition is attachment or that names a file,
// found through nested multipart bodies. It returns an error when Data
// is not a readable MIME message or a part cannot be decoded.
func (m Message) Attachments() ([]Attachment, error) {
	msg, err := m.Parse()
	if err != nil {
		return nil, err
	}
	w := &partWalker{}
	if err := w.walk(textproto.MIMEHeader(msg.Header), msg.Body, 0); err != nil {
		return nil, err
	}
	return w.out, nil
}

type partWalker struct {
	out   []Attachment
	parts int
}

func (w *partWalker) walk(h textproto.MIMEHeader, body io.Reader, depth int) error {
	if w.parts++; w.parts > maxParts || depth > maxDepth {
		return errors.New("smtptest: too many or too deeply nested MIME parts")
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Errorf("smtptest: Content-Type %q: %w", ct, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("smtptest: %s: %w", mt, err)
			}
			if err := w.walk(p.Header, p, depth+1); err != nil {
				return err
			}
		}
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if disp != "attachment" && name == "" {
		return nil
	}
	var r io.Reader = body
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, body) // skips CR and LF
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("smtptest: attachment %q: %w", name, err)
	}
	if d, err := new(mime.WordDecoder).DecodeHeader(name); err == nil {
		name = d
	}
	w.out = append(w.out, Attachment{FileName: name, ContentType: mt, Data: data})
	return nil
}
