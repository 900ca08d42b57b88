package webpush

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/notifykit/notify/internal/netguard"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// exchange is the HTTP client webpush-go is given (webpush.HTTPClient):
// it sends the request webpush-go built, once, through the vendor kit
// (vendorhttp.Do), so that a failure on the way is classified as for
// every HTTP provider (not written: CodeUnavailable; maybe written:
// CodeOutcomeUnknown), and keeps the kit's answer or error for Send,
// which reads them rather than what webpush-go hands back. One exchange
// serves one Send; it is not safe for concurrent use.
type exchange struct {
	ctx    context.Context
	client *http.Client
	called bool // webpush-go got as far as sending
	answer *vendorhttp.Answer
	err    error
}

// Do implements webpush.HTTPClient. The body webpush-go built (the
// encrypted record) is in memory: reading it does no I/O.
func (x *exchange) Do(req *http.Request) (*http.Response, error) {
	x.called = true
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil { // a bytes.Buffer: never
		x.err = notSent(err)
		return nil, x.err
	}
	header := req.Header.Clone()
	ct := header.Get("Content-Type")
	header.Del("Content-Type") // the kit sets it from ContentType
	x.answer, x.err = vendorhttp.Do(x.ctx, x.client, vendorhttp.Request{
		Name:        "webpush",
		Method:      req.Method,
		URL:         req.URL.String(),
		URLConfig:   "the subscription's endpoint",
		Body:        body,
		ContentType: ct,
		Header:      header,
		Limit:       maxAnswer,
	})
	if x.err != nil {
		return nil, x.err
	}
	return &http.Response{
		Status:        http.StatusText(x.answer.Status),
		StatusCode:    x.answer.Status,
		Header:        x.answer.Header,
		Body:          io.NopCloser(bytes.NewReader(x.answer.Body)),
		ContentLength: int64(len(x.answer.Body)),
		Request:       req,
	}, nil
}

// guardedClient returns the default client: netguard's transport (no
// proxy, every address checked at dial time and dialed only if public,
// or as guard allows in tests), whole requests bounded by timeout, and no
// redirect followed: a push service answers where it is asked, and a
// redirect would carry the message elsewhere, so it is handed back as
// the answer (a refusal). The guard's own client is not used: it follows
// redirects.
func guardedClient(timeout time.Duration, guard netguard.Config) *http.Client {
	guard.MaxRedirects, guard.Timeout = -1, timeout
	g := netguard.New(guard)
	return &http.Client{
		Transport:     g.Client().Transport,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
