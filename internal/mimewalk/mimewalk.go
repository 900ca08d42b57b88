// Package mimewalk walks the leaf parts of a MIME message: the one body
// of a single-part message, or every non-multipart part of a multipart
// one, through nested multipart bodies. smtptest reads a received
// message's attachments with it, and the outbox its text, HTML and
// files.
package mimewalk

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"strings"
)

// Bounds of the structure Walk follows, so that a malformed message
// cannot make it recurse without end or allocate without limit.
const (
	MaxDepth = 8
	MaxParts = 200
)

// ErrTooMany is Walk's error for a message of more than MaxParts parts,
// or multipart bodies nested deeper than MaxDepth.
var ErrTooMany = errors.New("too many or too deeply nested MIME parts")

// Header is what Walk reads of a part's header: mail.Header and
// textproto.MIMEHeader both have it.
type Header interface{ Get(key string) string }

// Part is a leaf part.
type Part struct {
	Header Header
	// MediaType is the Content-Type's media type, lower-cased, without
	// parameters; text/plain when the part has none, and
	// application/octet-stream when it cannot be parsed (BadType then
	// holds it).
	MediaType string
	BadType   string
	// Disposition is the Content-Disposition's type ("attachment",
	// "inline"), or "".
	Disposition string
	// FileName is the Content-Disposition's filename, else the
	// Content-Type's name, RFC 2231 and RFC 2047 forms decoded.
	FileName string
	// Body is the part's content with its Content-Transfer-Encoding
	// (base64, quoted-printable) undone.
	Body io.Reader
}

// Walk calls visit with each leaf part of the message whose top header
// is h and body body, in order, and returns visit's first error, a
// multipart body's read error, or ErrTooMany.
func Walk(h Header, body io.Reader, visit func(Part) error) error {
	parts := 0
	return walk(h, body, 0, &parts, visit)
}

func walk(h Header, body io.Reader, depth int, parts *int, visit func(Part) error) error {
	if *parts++; *parts > MaxParts || depth > MaxDepth {
		return ErrTooMany
	}
	p := Part{Header: h, MediaType: "text/plain"}
	params := map[string]string{}
	if ct := h.Get("Content-Type"); ct != "" {
		mt, ps, err := mime.ParseMediaType(ct)
		if err != nil {
			p.MediaType, p.BadType = "application/octet-stream", ct
		} else {
			p.MediaType, params = mt, ps
		}
	}
	if strings.HasPrefix(p.MediaType, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			child, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", p.MediaType, err)
			}
			if err := walk(child.Header, child, depth+1, parts, visit); err != nil {
				return err
			}
		}
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	p.Disposition = disp
	p.FileName = dparams["filename"]
	if p.FileName == "" {
		p.FileName = params["name"]
	}
	if d, err := new(mime.WordDecoder).DecodeHeader(p.FileName); err == nil {
		p.FileName = d
	}
	p.Body = Decoded(h.Get("Content-Transfer-Encoding"), body)
	return visit(p)
}

// Decoded undoes a Content-Transfer-Encoding: base64 (line breaks and
// spaces inside it skipped) or quoted-printable; any other is r as is.
func Decoded(cte string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &stripSpace{r: r})
	}
	return r
}

// stripSpace drops the line breaks and spaces base64 bodies are wrapped
// with, which encoding/base64's decoder would refuse (it skips only CR and
// LF; some senders also pad lines with spaces).
type stripSpace struct{ r io.Reader }

func (s *stripSpace) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}
