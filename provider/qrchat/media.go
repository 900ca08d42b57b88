package qrchat

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// sniffLen is how much of a media file is read before the send starts:
// all http.DetectContentType looks at.
const sniffLen = 512

// mediaStream is a media file being fetched: its first bytes, read and
// sniffed, and the rest of its body, still to come, within the size limit
// (internal/netguard.Body).
type mediaStream struct {
	mime string
	head []byte
	rest *netguard.Body
}

// openMedia starts fetching m through the guard and checks, from the
// first bytes, that they match the expected kind. It runs before the
// message is sent, so every error is a certain refusal. The caller
// closes the stream's rest.
func (p *Provider) openMedia(ctx context.Context, m *chat.Media) (*mediaStream, error) {
	body, err := p.guard.Open(ctx, m.URL)
	if err != nil {
		return nil, mediaErr(ctx, err)
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(body, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		body.Close()
		return nil, mediaErr(ctx, err)
	}
	head = head[:n]
	sniffed := http.DetectContentType(head)
	mime := m.MIMEType
	var refusal error
	switch {
	case m.Kind == chat.MediaImage && !strings.HasPrefix(sniffed, "image/"):
		refusal = notify.Errorf(notify.CodeRejected, "qrchat: media_url did not return an image (it looks like %s)", sniffed)
	case m.Kind == chat.MediaVideo && !strings.HasPrefix(sniffed, "video/") && sniffed != "application/octet-stream":
		refusal = notify.Errorf(notify.CodeRejected, "qrchat: media_url did not return a video (it looks like %s)", sniffed)
	case mime == "application/pdf" && sniffed != "application/pdf":
		refusal = notify.Errorf(notify.CodeRejected, "qrchat: media_url did not return a PDF (it looks like %s)", sniffed)
	}
	if refusal != nil {
		body.Close()
		return nil, refusal
	}
	if m.Kind == chat.MediaImage {
		mime = sniffed // the bytes say which image format it really is
	}
	if mime == "" {
		mime = sniffed
	}
	return &mediaStream{mime: mime, head: head, rest: body}, nil
}

// mediaErr is a failed media fetch: internal/netguard classifies it (the
// guard's refusal or a file over the limit is CodeRejected, anything else
// CodeUnavailable, without the URL or the address the host resolved to);
// an ended ctx is not sent, with errors.Is seeing it.
func mediaErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return notSent(cerr)
	}
	return fmt.Errorf("qrchat: media_url: %w", err)
}

// placeholder stands for the file's data in the body's JSON, which is
// cut there so that the data can be streamed in.
const placeholder = "qrchat-data-3f1c9a7e"

// sendMedia posts body with the file ms streamed into it as base64
// "data", and reads the answer. The body is built as the media arrive:
// only a few buffers of it are in memory at any time, whatever the
// file's size.
//
// The outcome, when the media source fails (or the file turns out larger
// than Config.MediaMaxBytes) after the request has started: the body is
// sent with chunked transfer encoding, and the body's reader returns the
// error to net/http, which then stops writing and closes the connection
// without the last chunk. The gateway never receives a complete body,
// so it cannot parse the JSON, let alone take the message (a proxy in
// front of it does not pass an incomplete body on either), and the send
// is certainly not accepted: the media's own error, CodeUnavailable or
// CodeRejected, is returned. Only a body written whole may have reached
// the gateway; then the usual rules apply (vendorhttp).
func (p *Provider) sendMedia(ctx context.Context, path string, body sendBody, ms *mediaStream) (*vendorhttp.Answer, error) {
	defer ms.rest.Close()
	body.File.Data = placeholder
	data, err := json.Marshal(body)
	if err != nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "qrchat: the envelope cannot be encoded as a request: %v", err)
	}
	prefix, suffix, ok := strings.Cut(string(data), `"`+placeholder+`"`)
	if !ok {
		return nil, notify.Errorf(notify.CodeInternal, "qrchat: cannot build the request body")
	}
	return p.conn.Do(ctx, vendorhttp.Request{Name: "qrchat", Method: http.MethodPost, URL: p.base + path,
		URLConfig: "qrchat Config.BaseURL", Header: p.header(), Limit: maxResponse,
		Stream: func(w io.Writer) error { return writeBody(w, prefix, suffix, ms) }})
}

// writeBody writes the JSON body to w: prefix, the file as a base64
// string, suffix. It returns an error of w as it is, and a failure of the
// media (its source, or its size) as the send's error.
func writeBody(w io.Writer, prefix, suffix string, ms *mediaStream) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	if _, err := bw.WriteString(prefix + `"`); err != nil {
		return err
	}
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	if _, err := enc.Write(ms.head); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := ms.rest.Read(buf) // within the size limit
		if n > 0 {
			if _, err := enc.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("qrchat: media_url: before the file was whole: %w", rerr)
		}
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if _, err := bw.WriteString(`"` + suffix); err != nil {
		return err
	}
	return bw.Flush()
}
