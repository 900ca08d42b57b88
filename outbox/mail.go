package outbox

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"

	"github.com/notifykit/notify/channel/email"
)

// Bounds of a received message's structure, so that a hostile one cannot
// make AddMail recurse or loop without end.
const (
	maxDepth = 8
	maxParts = 100
)

// AddMail takes an e-mail as an SMTP server received it (headers and
// body, CRLF or LF line endings) for the recipients rcpt (the envelope's
// RCPT TO). The message whose ID is the local part of its Message-ID (the
// notify message ID, which provider/smtp puts there) then shows the mail
// as received: its parts, headers and attachments. Mail that matches no
// kept message is kept on its own, with status received. It returns an
// error only when data is not a readable message.
func (o *Outbox) AddMail(data []byte, rcpt []string) error {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("outbox.AddMail: %w", err)
	}
	rm := &Mail{Received: true, Size: len(data), Headers: orderedHeaders(data)}
	dec := new(mime.WordDecoder)
	rm.Subject = decodeHeader(dec, msg.Header.Get("Subject"))
	if from, err := mail.ParseAddress(msg.Header.Get("From")); err == nil {
		rm.FromName = from.Name
	}
	if rt, err := mail.ParseAddress(msg.Header.Get("Reply-To")); err == nil {
		rm.ReplyTo = rt.Address
	}
	// Cc from its header; Bcc is in no header, so it is every envelope
	// recipient that To and Cc do not name.
	shown := map[string]bool{}
	for _, h := range []string{"To", "Cc"} {
		list, _ := msg.Header.AddressList(h)
		for _, a := range list {
			shown[strings.ToLower(a.Address)] = true
			if h == "Cc" {
				rm.Cc = append(rm.Cc, a.Address)
			}
		}
	}
	for _, r := range rcpt {
		if !shown[strings.ToLower(r)] {
			rm.Bcc = append(rm.Bcc, r)
		}
	}
	w := &walker{mail: rm}
	if err := w.part(msg.Header, msg.Body, 0); err != nil {
		return fmt.Errorf("outbox.AddMail: %w", err)
	}

	id := strings.Trim(msg.Header.Get("Message-ID"), "<> ")
	if at := strings.LastIndexByte(id, '@'); at >= 0 {
		id = id[:at]
	}
	o.mu.Lock()
	en, ok := o.byID[id]
	if ok && en.m.Kind == email.Kind {
		m := &en.m
		m.Email = rm
		m.UpdatedAt = o.now()
		o.bytes -= en.size
		en.size = sizeOf(m)
		o.bytes += en.size
	}
	o.mu.Unlock()
	if ok {
		o.wake()
		return nil
	}
	now := o.now()
	if id == "" {
		id = fmt.Sprintf("mail-%d", now.UnixNano())
	}
	o.add(Message{ID: id, Kind: email.Kind, To: strings.Join(rcpt, ", "), Status: StatusReceived,
		CreatedAt: now, UpdatedAt: now, Email: rm})
	return nil
}

func decodeHeader(dec *mime.WordDecoder, v string) string {
	if d, err := dec.DecodeHeader(v); err == nil {
		return d
	}
	return v
}

// orderedHeaders returns the header fields of data in their order,
// unfolded and with encoded words decoded (net/mail's Header is a map).
func orderedHeaders(data []byte) []Header {
	head := data
	if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 {
		head = data[:i]
	} else if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
		head = data[:i]
	}
	dec := new(mime.WordDecoder)
	var out []Header
	for _, line := range strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n") {
		if line == "" {
			continue
		}
		if (line[0] == ' ' || line[0] == '\t') && len(out) > 0 {
			out[len(out)-1].Value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		out = append(out, Header{Name: name, Value: strings.TrimSpace(value)})
	}
	for i := range out {
		out[i].Value = decodeHeader(dec, out[i].Value)
	}
	return out
}

// header is the part of a MIME header the walker reads: mail.Header or
// textproto.MIMEHeader.
type header interface{ Get(string) string }

// walker collects the parts of a received message into mail.
type walker struct {
	mail  *Mail
	parts int
}

// part reads one MIME part: a multipart recurses into its children, a
// text part fills Text or HTML (the first of each), anything else, or a
// part with a file name, is an attachment.
func (w *walker) part(h header, body io.Reader, depth int) error {
	if w.parts++; w.parts > maxParts || depth > maxDepth {
		return errors.New("too many MIME parts")
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mediaType, params, err := mime.ParseMediaType(ct)
	if err != nil {
		mediaType, params = "application/octet-stream", nil
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := w.part(p.Header, p, depth+1); err != nil {
				return err
			}
		}
	}
	content, err := io.ReadAll(decoded(h.Get("Content-Transfer-Encoding"), body))
	if err != nil {
		return err
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	switch {
	case disp == "attachment" || name != "" || !strings.HasPrefix(mediaType, "text/"):
		w.mail.Attachments = append(w.mail.Attachments, Attachment{FileName: decodeHeader(new(mime.WordDecoder), name),
			ContentType: mediaType, Size: len(content)})
	case mediaType == "text/html" && w.mail.HTML == "":
		w.mail.HTML = string(content)
	case mediaType == "text/plain" && w.mail.Text == "":
		w.mail.Text = string(content)
	}
	return nil
}

// decoded undoes a Content-Transfer-Encoding.
func decoded(cte string, r io.Reader) io.Reader {
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
