package smtptest

import (
	"fmt"
	"io"

	"github.com/notifykit/notify/internal/mimewalk"
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

// Attachments returns the file parts of the message, in order: every
// part whose Content-Disposition is attachment or that names a file,
// found through nested multipart bodies. It returns an error when Data
// is not a readable MIME message, a part's Content-Type cannot be parsed,
// or a part cannot be decoded.
func (m Message) Attachments() ([]Attachment, error) {
	msg, err := m.Parse()
	if err != nil {
		return nil, err
	}
	var out []Attachment
	err = mimewalk.Walk(msg.Header, msg.Body, func(p mimewalk.Part) error {
		switch {
		case p.BadType != "":
			return fmt.Errorf("Content-Type %q cannot be parsed", p.BadType)
		case p.Disposition != "attachment" && p.FileName == "":
			return nil
		}
		data, err := io.ReadAll(p.Body)
		if err != nil {
			return fmt.Errorf("attachment %q: %w", p.FileName, err)
		}
		out = append(out, Attachment{FileName: p.FileName, ContentType: p.MediaType, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("smtptest: %w", err)
	}
	return out, nil
}
