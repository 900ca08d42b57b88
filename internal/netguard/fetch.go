package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/notifykit/notify"
)

// Body is a response body being fetched through the guard (Open). Read
// returns at most Config.MaxBytes in all: reading past them is the
// CodeRejected error of a file over the limit; a failed read is
// classified as Open's errors are. The caller must Close it.
type Body struct {
	// ContentType is the response's Content-Type header, possibly empty.
	ContentType string
	// Host is the URL's host, for messages.
	Host string

	ctx  context.Context
	g    *Guard
	body io.ReadCloser
	left int64 // bytes the limit still allows
}

// Read reads the body, within the limit.
func (b *Body) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	if int64(n) > b.left {
		return 0, b.g.tooLarge(b.Host)
	}
	b.left -= int64(n)
	if err != nil && err != io.EOF {
		err = b.g.fetchErr(b.ctx, b.Host, err)
	}
	return n, err
}

// Close closes the body.
func (b *Body) Close() error { return b.body.Close() }

// Open checks raw with CheckURL, GETs it through the guarded client and
// returns the body of a 2xx answer whose declared length is within
// Config.MaxBytes, for the caller to stream. Errors are *notify.Error,
// classified for a provider that fetches a file before sending it
// (nothing was sent yet, so every temporary failure is safe to retry):
//
//   - a URL or address the guard refuses (see CheckURL), a redirect it
//     refuses, a body over the limit, or an HTTP 4xx answer: CodeRejected;
//   - a failed DNS lookup other than "no such host" (see CheckURL),
//     network errors, timeouts and HTTP 5xx or 429 answers:
//     CodeUnavailable;
//   - the end of ctx: ctx.Err() wrapped, so errors.Is sees it.
//
// Messages name the host but never the whole URL, nor an address the host
// resolved to.
func (g *Guard) Open(ctx context.Context, raw string) (*Body, error) {
	host, err := checkSyntax(raw)
	if err != nil {
		return nil, notify.WithCode(notify.CodeRejected, err)
	}
	if _, err := g.resolve(ctx, host); err != nil {
		return nil, g.fetchErr(ctx, host, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, notify.Errorf(notify.CodeRejected, "media URL on %q: cannot build the request", host)
	}
	req.Header.Set("Accept", "*/*")
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, g.fetchErr(ctx, host, err)
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		resp.Body.Close()
		return nil, notify.Errorf(notify.CodeUnavailable, "fetching media from %q: HTTP %d", host, resp.StatusCode)
	default:
		resp.Body.Close()
		return nil, notify.Errorf(notify.CodeRejected, "fetching media from %q: HTTP %d", host, resp.StatusCode)
	}
	if resp.ContentLength > g.cfg.MaxBytes {
		resp.Body.Close()
		return nil, g.tooLarge(host)
	}
	return &Body{ContentType: resp.Header.Get("Content-Type"), Host: host,
		ctx: ctx, g: g, body: resp.Body, left: g.cfg.MaxBytes}, nil
}

func (g *Guard) tooLarge(host string) error {
	return notify.Errorf(notify.CodeRejected, "media from %q is larger than the limit of %d bytes", host, g.cfg.MaxBytes)
}

// fetchErr classifies a failed fetch, dropping the URL that *url.Error
// would print and the address that *net.OpError would (a dial error's
// text is "dial tcp 93.184.216.34:443: ..."; the address is not the
// client's business).
func (g *Guard) fetchErr(ctx context.Context, host string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("fetching media from %q: %w", host, cerr)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ge *Error
	if errors.As(err, &ge) {
		return notify.WithCode(notify.CodeRejected, ge)
	}
	if notify.CodeOf(err) == notify.CodeUnavailable {
		return err // a failed lookup, already worded for the client
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = &withoutAddr{op: oe.Op, err: oe}
	}
	return notify.WithCode(notify.CodeUnavailable, fmt.Errorf("fetching media from %q: %w", host, err))
}

// withoutAddr is a *net.OpError as its text would be without the
// addresses: "dial: connect: connection refused". It unwraps to the
// OpError, so errors.As and errors.Is still see the cause.
type withoutAddr struct {
	op  string
	err *net.OpError
}

func (w *withoutAddr) Error() string { return w.op + ": " + w.err.Err.Error() }
func (w *withoutAddr) Unwrap() error { return w.err }
