package smtp

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/record"
)

// checkAttachments checks m's attachments before anything is fetched or
// sent, for callers that build envelopes without the e-mail channel: at
// most email.MaxAttachments, each a URL or Data (not both), a file name
// and a content type that cannot break a header, and Data within max
// bytes in all. Errors are InvalidArgument naming the field.
func checkAttachments(m *email.Message, max int64) error {
	if len(m.Attachments) == 0 {
		return nil
	}
	var fe record.FieldErrors
	if len(m.Attachments) > email.MaxAttachments {
		fe.Addf("attachments", "must be at most %d files, not %d", email.MaxAttachments, len(m.Attachments))
		return notify.InvalidFields(fe)
	}
	var data int64
	for i, a := range m.Attachments {
		at := fmt.Sprintf("attachments[%d]", i)
		if (a.URL == "") == (len(a.Data) == 0) {
			fe.Add(at+".url", "an attachment is a URL or data: exactly one of them")
		}
		if a.FileName == "" || hasCRLF(a.FileName) || len(a.FileName) > email.MaxFileNameLen {
			fe.Addf(at+".file_name", "must be a file name of at most %d bytes without CR, LF or NUL", email.MaxFileNameLen)
		}
		if hasCRLF(a.ContentType) {
			fe.Add(at+".content_type", "must not contain CR, LF or NUL")
		} else if a.ContentType != "" {
			if mt, _, err := mime.ParseMediaType(a.ContentType); err != nil || !strings.Contains(mt, "/") ||
				strings.HasPrefix(mt, "multipart/") || strings.HasPrefix(mt, "message/") {
				fe.Add(at+".content_type", "must be a file's media type such as application/pdf")
			}
		}
		data += int64(len(a.Data))
	}
	if data > max {
		fe.Addf("attachments", "add up to %d bytes, over the limit of %d", data, max)
	}
	return notify.InvalidFields(fe)
}

// fetcher fetches the attachment URLs of one message through the guard,
// within what is left of the message's allowance.
type fetcher struct {
	ctx   context.Context
	guard *netguard.Guard
	left  int64
}

// appendAttachment appends the part of attachment i: its headers and
// its content in base64, in lines of 76 characters. A URL's file is read
// from the network straight into the encoder, so only its encoded form
// is held. Data counts against the allowance too, so that the files
// together stay within it.
func appendAttachment(b []byte, i int, a *email.Attachment, f *fetcher) ([]byte, error) {
	ct := a.ContentType
	if ct == "" {
		ct = email.DefaultContentType
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, params = email.DefaultContentType, nil
	}
	keep := map[string]string{"name": a.FileName}
	if cs := params["charset"]; cs != "" {
		keep["charset"] = cs
	}
	// mime.FormatMediaType quotes the name, or writes it in RFC 2231
	// form when it is not ASCII; the lines stay far below 998 bytes
	// (file names are at most 240 bytes, 720 percent-encoded).
	b = append(b, "Content-Type: "...)
	b = append(b, mime.FormatMediaType(mt, keep)...)
	b = append(b, "\r\nContent-Disposition: "...)
	b = append(b, mime.FormatMediaType("attachment", map[string]string{"filename": a.FileName})...)
	b = append(b, "\r\nContent-Transfer-Encoding: base64\r\n\r\n"...)

	lw := &lineWriter{b: b}
	enc := base64.NewEncoder(base64.StdEncoding, lw)
	field := fmt.Sprintf("attachments[%d]", i)
	if a.URL == "" {
		if f != nil {
			f.left -= int64(len(a.Data))
		}
		_, _ = enc.Write(a.Data) // writes to memory cannot fail
	} else {
		if f == nil {
			return lw.b, notify.Errorf(rejected, "smtp: %s: no fetcher for a URL attachment", field)
		}
		if err := f.copy(enc, a.URL, field); err != nil {
			return lw.b, err
		}
	}
	_ = enc.Close()
	return lw.b, nil
}

// copy fetches raw through the guard into w, within f.left bytes. Every
// error comes before anything was sent to the SMTP server: a refusal by
// the guard, an HTTP 4xx or a file over the limit is Rejected, a network
// failure, timeout or HTTP 5xx is Unavailable (retried), the end of ctx
// is Unavailable wrapping ctx.Err(); the URL is never in the message,
// since its query may hold a token.
func (f *fetcher) copy(w io.Writer, raw, field string) error {
	if f.left <= 0 {
		return notify.Errorf(rejected, "smtp: %s: the attachments are larger than the limit (Config.MaxAttachmentBytes)", field)
	}
	body, err := f.guard.Open(f.ctx, raw)
	if err != nil {
		return f.fail(field, err)
	}
	defer body.Close()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := body.Read(buf) // within the guard's per-file limit
		if int64(n) > f.left {
			return notify.Errorf(rejected, "smtp: %s: the attachments are larger than the limit (Config.MaxAttachmentBytes)", field)
		}
		f.left -= int64(n)
		_, _ = w.Write(buf[:n]) // the encoder writes to memory
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return f.fail(field, rerr)
		}
	}
}

// fail codes a failed fetch: the guard's code (Rejected or Unavailable,
// both certain refusals since nothing was sent), or Unavailable wrapping
// the context's error.
func (f *fetcher) fail(field string, err error) error {
	if cerr := f.ctx.Err(); cerr != nil {
		return wrapCode(unavailable, fmt.Errorf("smtp: nothing sent: fetching %s: %w", field, cerr))
	}
	if c := notify.CodeOf(err); c == rejected || c == unavailable {
		return fmt.Errorf("smtp: nothing sent: fetching %s: %w", field, err)
	}
	return wrapCode(unavailable, fmt.Errorf("smtp: nothing sent: fetching %s: %w", field, err))
}

// lineWriter appends base64 text to b with a CRLF after every 76
// characters, the line length RFC 2045 sets for base64.
type lineWriter struct {
	b   []byte
	col int
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if l.col == 76 {
			l.b = append(l.b, "\r\n"...)
			l.col = 0
		}
		k := min(76-l.col, len(p))
		l.b = append(l.b, p[:k]...)
		l.col += k
		p = p[k:]
	}
	return n, nil
}
