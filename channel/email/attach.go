package email

import (
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/internal/rules"
	"github.com/notifykit/notify/record"
)

// Limits of recipients and attachments.
const (
	// MaxRecipients bounds to, cc and bcc together: each is an RCPT TO
	// of the one SMTP transaction, and a unit of the price.
	MaxRecipients = 50
	// MaxAttachments bounds the attachments of one message.
	MaxAttachments = 10
	// MaxFileNameLen is the longest attachment file name, in bytes.
	MaxFileNameLen = 240
	// DefaultContentType is the content type of an attachment whose type
	// is not given and whose file name's extension says nothing.
	DefaultContentType = "application/octet-stream"
)

// checkRecipients checks the counts of cc and bcc (their addresses have
// been checked by their tags) and refuses an address given twice across
// to, cc and bcc, compared without case and surrounding spaces: each
// recipient is priced, so a repeat would charge for one mailbox twice.
// It fills msg.Cc and msg.Bcc, trimmed.
func checkRecipients(fe *record.FieldErrors, r *Request, msg *Message) {
	if (r.OTP != "" || r.Purpose == PurposeOTP) && len(r.Cc)+len(r.Bcc) > 0 {
		// A one-time code proves that its one recipient reads the mail:
		// a copy to anyone else gives it away.
		field := "cc"
		if len(r.Cc) == 0 {
			field = "bcc"
		}
		fe.Addf(field, "must be empty: a one-time code (otp, or purpose otp) goes to its one recipient only")
		return
	}
	if n := 1 + len(r.Cc) + len(r.Bcc); n > MaxRecipients {
		fe.Addf("cc", "to, cc and bcc together must be at most %d addresses, not %d", MaxRecipients, n)
		return
	}
	seen := map[string]string{strings.ToLower(strings.TrimSpace(r.To)): "to"}
	list := func(name string, in []string) []string {
		if len(in) == 0 {
			return nil
		}
		out := make([]string, 0, len(in))
		for i, a := range in {
			field := fmt.Sprintf("%s[%d]", name, i)
			a = strings.TrimSpace(a)
			k := strings.ToLower(a)
			if prev, dup := seen[k]; dup && !fe.Has(field) {
				fe.Addf(field, "repeats the address of %s: give each recipient once", prev)
				continue
			}
			seen[k] = field
			out = append(out, a)
		}
		return out
	}
	msg.Cc = list("cc", r.Cc)
	msg.Bcc = list("bcc", r.Bcc)
}

// checkAttachments checks r's attachments and puts them, completed, in
// msg. A URL's form is checked here, without a DNS lookup (Prepare has
// no side effects): https only, a host name that is not an IP literal or
// a local-only name. The provider's guard checks every address it dials.
func checkAttachments(fe *record.FieldErrors, atts []Attachment, msg *Message) {
	if len(atts) == 0 {
		return
	}
	if len(atts) > MaxAttachments {
		fe.Addf("attachments", "must be at most %d files, not %d", MaxAttachments, len(atts))
		return
	}
	out := make([]Attachment, 0, len(atts))
	for i, a := range atts {
		at := fmt.Sprintf("attachments[%d]", i)
		ok := true
		switch {
		case a.URL == "" && len(a.Data) == 0:
			fe.Add(at+".url", "is required: give the file's https URL (or, from Go, its Data)")
			ok = false
		case a.URL != "" && len(a.Data) > 0:
			fe.Add(at+".url", "must not be given with data: an attachment is a URL or bytes, not both")
			ok = false
		case a.URL != "":
			if err := netguard.CheckSyntax(a.URL); err != nil {
				var ge *netguard.Error
				why := "is not acceptable"
				if errors.As(err, &ge) {
					why = ge.Reason
				}
				fe.Add(at+".url", "must be a public https URL: "+why)
				ok = false
			}
		}
		if a.FileName == "" && a.URL != "" {
			a.FileName = nameFromURL(a.URL)
		}
		if why := fileNameRule(a.FileName); why != "" {
			fe.Add(at+".file_name", why)
			ok = false
		}
		ct, why := contentType(a.ContentType, a.FileName)
		if why != "" {
			fe.Add(at+".content_type", why)
			ok = false
		}
		a.ContentType = ct
		if ok {
			out = append(out, a)
		}
	}
	msg.Attachments = out
}

// fileNameRule returns why name cannot be an attachment's file name, or
// "". CR, LF and NUL are refused with every other control character, so
// a name cannot add a header; bidirectional controls are refused so that
// "invoice\u202Efdp.exe" cannot pass for a PDF.
func fileNameRule(name string) string {
	switch {
	case name == "":
		return "is required for an attachment given as data"
	case len(name) > MaxFileNameLen:
		return fmt.Sprintf("must be at most %d bytes", MaxFileNameLen)
	case !utf8.ValidString(name):
		return "must be valid UTF-8"
	case strings.ContainsAny(name, "\r\n\x00"):
		return "must not contain CR, LF or NUL"
	case strings.ContainsAny(name, `/\`), name == ".", name == "..", strings.TrimSpace(name) == "":
		return "must be a plain file name, without a path"
	}
	// Control, bidirectional and invisible characters, and encoded
	// words: the display name's rule, for the same reasons.
	return rules.DisplayName(name)
}

// contentType returns the media type an attachment is sent as: ct
// normalised (lower case, parameters other than charset dropped), or
// the type of name's extension, or DefaultContentType; or why ct is
// refused.
func contentType(ct, name string) (string, string) {
	if ct == "" {
		ct = mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			return DefaultContentType, ""
		}
	} else if strings.ContainsAny(ct, "\r\n\x00") {
		return "", "must not contain CR, LF or NUL"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(mt, "/") {
		return "", "must be a media type such as application/pdf"
	}
	if strings.HasPrefix(mt, "multipart/") || strings.HasPrefix(mt, "message/") {
		// A part of such a type would be read as structure, not as a file.
		return "", "must be a file's media type, not " + rules.Clip(mt)
	}
	keep := map[string]string{}
	if cs := params["charset"]; cs != "" {
		keep["charset"] = cs
	}
	out := mime.FormatMediaType(mt, keep)
	if out == "" {
		return "", "must be a media type such as application/pdf"
	}
	return out, ""
}

// nameFromURL returns the last segment of raw's path when it makes a
// good file name, else "attachment".
func nameFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil {
		if n := path.Base(u.Path); n != "." && n != "/" && fileNameRule(n) == "" {
			return n
		}
	}
	return "attachment"
}
