// Package vendorhttp makes the one HTTP request a provider sends to its
// vendor, and classifies what can go wrong on the way in one way for every
// HTTP provider (smsgateway, cloudchat, qrchat). What matters to the
// Notifier is whether the vendor may have the message:
//
//   - the request was certainly not written (no connection, refused, DNS,
//     TLS, or the context ended first): CodeUnavailable, which the Notifier
//     retries; errors.Is still sees a context error;
//   - the request was written but no complete answer came back: the vendor
//     may have accepted the message, so the error must not be retried. A
//     context that ended is returned wrapped (the Notifier classifies it as
//     Canceled or DeadlineExceeded), a network timeout is
//     CodeDeadlineExceeded, and anything else is a bare error, which the
//     Notifier treats as Unavailable but never retries.
//
// Messages never contain the request's URL (it may carry credentials) or
// headers.
package vendorhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/notifykit/notify"
)

// Answer is what the vendor said.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Request describes one request.
type Request struct {
	// Name prefixes error messages, such as "cloudchat".
	Name   string
	Method string
	URL    string
	// Body is sent as application/json when not nil.
	Body   []byte
	Header http.Header
	// Limit caps the answer's body; a longer answer is an error of unknown
	// outcome. Default 1 MiB.
	Limit int64
}

// Do sends r once with client. On a transport failure it returns an error
// classified as the package documentation says. When the answer's body
// cannot be read it returns the Answer (with Status and Header) and the
// error, so that the caller may weigh the status.
func Do(ctx context.Context, client *http.Client, r Request) (*Answer, error) {
	// The transport reports from its own goroutine.
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			wrote.Store(true)
		}
	}}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), r.Method, r.URL, body)
	if err != nil {
		return nil, notify.Errorf(notify.CodeInternal, "%s: building the request: %v", r.Name, Cause(err))
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		if !wrote.Load() {
			if cerr := ctx.Err(); cerr != nil {
				return nil, &notify.Error{Code: notify.CodeUnavailable, Err: fmt.Errorf("%s: request not sent: %w", r.Name, cerr)}
			}
			return nil, notify.Errorf(notify.CodeUnavailable, "%s: request not sent: %s", r.Name, Cause(err))
		}
		return nil, Unknown(ctx, r.Name, "no answer", err)
	}
	defer resp.Body.Close()
	limit := r.Limit
	if limit <= 0 {
		limit = 1 << 20
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("answer over %d bytes", limit)
	}
	ans := &Answer{Status: resp.StatusCode, Header: resp.Header}
	if err != nil {
		return ans, Unknown(ctx, r.Name, fmt.Sprintf("reading the answer (HTTP %d)", resp.StatusCode), err)
	}
	ans.Body = data
	return ans, nil
}

// Unknown classifies a failure after the request was written, when the
// vendor may have accepted the message: never a retryable error.
func Unknown(ctx context.Context, name, what string, err error) error {
	const why = "the vendor may have accepted the message, so it is not retried"
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %s (%s): %w", name, what, why, cerr)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &notify.Error{Code: notify.CodeDeadlineExceeded, Err: fmt.Errorf("%s: %s: timed out (%s): %s", name, what, why, Cause(err))}
	}
	return fmt.Errorf("%s: %s (%s): %s", name, what, why, Cause(err))
}

// Cause returns err's message without the URL that net/http puts in its
// errors, on one line.
func Cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
