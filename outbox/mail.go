package outbox

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"strings"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/mimewalk"
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
	if err := mimewalk.Walk(msg.Header, msg.Body, rm.addPart); err != nil {
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

// addPart reads one leaf part of a received message: a text part fills
// Text or HTML (the first of each); anything else, or a part with a file
// name, is an attachment.
func (m *Mail) addPart(p mimewalk.Part) error {
	content, err := io.ReadAll(p.Body)
	if err != nil {
		return err
	}
	switch {
	case p.Disposition == "attachment" || p.FileName != "" || !strings.HasPrefix(p.MediaType, "text/"):
		m.Attachments = append(m.Attachments, Attachment{FileName: p.FileName, ContentType: p.MediaType, Size: len(content)})
	case p.MediaType == "text/html" && m.HTML == "":
		m.HTML = string(content)
	case p.MediaType == "text/plain" && m.Text == "":
		m.Text = string(content)
	}
	return nil
}
