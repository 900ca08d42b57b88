package qrchat

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/internal/vendorhttp"
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
func (p *Provider) openMedia(ctx context.Context, m *notify.ChatMedia) (*mediaStream, error) {
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
	case m.Kind == notify.MediaImage && !strings.HasPrefix(sniffed, "image/"):
		refusal = notify.Errorf(notify.CodeRejected, "qrchat: media_url did not return an image (it looks like %s)", sniffed)
	case m.Kind == notify.MediaVideo && !strings.HasPrefix(sniffed, "video/") && sniffed != "application/octet-stream":
		refusal = notify.Errorf(notify.CodeRejected, "qrchat: media_url did not return a video (it looks like %s)", sniffed)
	case mime == "application/pdf" && sniffed != "application/pdf":
		refusal = notify.Errorf(notify.CodeRejected, "qrchat: media_url did not return a PDF (it looks like %s)", sniffed)
	}
	if refusal != nil {
		body.Close()
		return nil, refusal
	}
	if m.Kind == notify.MediaImage {
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

// errAbandoned ends a body the transport stopped reading.
var errAbandoned = errors.New("qrchat: the request ended before its body was sent")

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
func (p *Provider) sendMedia(ctx context.Context, path string, body sendBody, ms *mediaStream) (int, http.Header, []byte, error) {
	defer ms.rest.Close()
	body.File.Data = placeholder
	data, err := json.Marshal(body)
	if err != nil {
		return 0, nil, nil, notify.Errorf(notify.CodeInvalidArgument, "qrchat: the envelope cannot be encoded as a request: %v", err)
	}
	prefix, suffix, ok := strings.Cut(string(data), `"`+placeholder+`"`)
	if !ok {
		return 0, nil, nil, notify.Errorf(notify.CodeInternal, "qrchat: cannot build the request body")
	}
	if cerr := ctx.Err(); cerr != nil {
		return 0, nil, nil, notSent(cerr)
	}

	pr, pw := io.Pipe()
	var (
		wg        sync.WaitGroup
		completed bool  // the whole body went to the transport
		mediaErr  error // the media source failed
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		done, merr, werr := p.writeBody(pw, prefix, suffix, ms)
		if werr == nil && merr == nil {
			werr = pw.Close()
		} else if merr != nil {
			pw.CloseWithError(merr)
		}
		completed, mediaErr = done && werr == nil && merr == nil, merr
	}()

	w := vendorhttp.NewWrites()
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, w.Trace()), http.MethodPost, p.base+path, pr)
	if err != nil {
		pr.CloseWithError(errAbandoned)
		wg.Wait()
		return 0, nil, nil, notify.Errorf(notify.CodeRejected, "qrchat: the request cannot be built (check qrchat Config.BaseURL): %s", vendorhttp.Cause(err))
	}
	req.ContentLength = -1 // chunked: a body cut short is never complete
	if p.key != "" {
		req.Header.Set("X-Api-Key", p.key)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	pr.CloseWithError(errAbandoned) // unblocks a body the transport stopped reading
	wg.Wait()
	if !completed {
		if resp != nil {
			resp.Body.Close()
		}
		// The gateway never got the whole body.
		if mediaErr != nil {
			if cerr := ctx.Err(); cerr != nil {
				return 0, nil, nil, notSent(cerr)
			}
			return 0, nil, nil, mediaErr
		}
		if cerr := ctx.Err(); cerr != nil {
			return 0, nil, nil, notSent(cerr)
		}
		cause := "the gateway stopped reading the request"
		if err != nil {
			cause = vendorhttp.Cause(err)
		}
		return 0, nil, nil, notify.Errorf(notify.CodeUnavailable, "qrchat: request not sent whole: %s", cause)
	}
	if err != nil {
		if w.NotWritten() {
			if cerr := ctx.Err(); cerr != nil {
				return 0, nil, nil, notSent(cerr)
			}
			return 0, nil, nil, notify.Errorf(notify.CodeUnavailable, "qrchat: request not sent: %s", vendorhttp.Cause(err))
		}
		return 0, nil, nil, vendorhttp.Unknown(ctx, "qrchat", "no answer", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err == nil && len(answer) > maxResponse {
		err = fmt.Errorf("answer over %d bytes", maxResponse)
	}
	if err != nil {
		return 0, nil, nil, vendorhttp.Unknown(ctx, "qrchat", fmt.Sprintf("HTTP %d, and its answer could not be read whole", resp.StatusCode), err)
	}
	return resp.StatusCode, resp.Header, answer, nil
}

// writeBody writes the JSON body to pw: prefix, the file as a base64
// string, suffix. done reports that all of it was written; merr is a
// failure of the media (its source, or its size), werr one of pw (the
// transport stopped reading).
func (p *Provider) writeBody(pw *io.PipeWriter, prefix, suffix string, ms *mediaStream) (done bool, merr, werr error) {
	bw := bufio.NewWriterSize(pw, 32<<10)
	if _, werr = bw.WriteString(prefix + `"`); werr != nil {
		return false, nil, werr
	}
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	if _, werr = enc.Write(ms.head); werr != nil {
		return false, nil, werr
	}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := ms.rest.Read(buf) // within the size limit
		if n > 0 {
			if _, werr = enc.Write(buf[:n]); werr != nil {
				return false, nil, werr
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return false, fmt.Errorf("qrchat: media_url: before the file was whole: %w", rerr), nil
		}
	}
	if werr = enc.Close(); werr != nil {
		return false, nil, werr
	}
	if _, werr = bw.WriteString(`"` + suffix); werr != nil {
		return false, nil, werr
	}
	if werr = bw.Flush(); werr != nil {
		return false, nil, werr
	}
	return true, nil, nil
}
