package vendorhttp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
	"golang.org/x/net/http/httpguts"
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
	// URLConfig names the configuration the URL is built from, such as
	// "cloudchat Config.BaseURL", for the error when the URL cannot be
	// used. Default "the provider's base URL".
	URLConfig string
	// Body is sent, as ContentType, when not nil.
	Body []byte
	// ContentType is the body's media type; default application/json
	// (a form-encoded API gives "application/x-www-form-urlencoded").
	ContentType string
	// Stream, when Body is nil, writes the body (of ContentType) as the
	// request goes, with chunked transfer encoding, so that a body cut
	// short is never complete and cannot be taken. An error Stream
	// returns that is not one of writing to w (its source failed) ends
	// the request, and Do returns it as it is, for the provider to give
	// it a code: the vendor certainly has nothing. When ctx has ended
	// too, Do returns the ended context's CodeUnavailable instead.
	Stream func(w io.Writer) error
	Header http.Header
	// Limit caps the answer's body; a longer answer is an error of unknown
	// outcome. Default 1 MiB.
	Limit int64
}

// settleWait bounds how long Do waits, after the client has failed, for
// the transport to say whether a request it was writing got out whole. On
// a failure net/http closes the connection first, so the answer comes at
// once; without it the outcome is unknown.
const settleWait = 250 * time.Millisecond

// writes follows the attempts of one request through the client trace,
// to tell whether the request may have reached the server: install
// Trace on the request's context, and after a failed client.Do ask
// NotWritten. Do uses it to tell "not sent" from "maybe sent".
// The transport may make more than one attempt (it retries on a fresh
// connection a request it wrote nothing of); the request may have reached
// the vendor if any attempt wrote it whole, or may still be doing so.
type writes struct {
	mu      sync.Mutex
	asked   int  // GetConn: attempts that asked for a connection
	got     int  // GotConn: attempts that have a connection
	settled int  // WroteRequest: attempts whose writing ended
	whole   bool // some attempt wrote the request whole
	change  chan struct{}
}

// newWrites returns a writes for one request.
func newWrites() *writes { return &writes{change: make(chan struct{}, 1)} }

// Trace returns the client trace that feeds w.
func (w *writes) Trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			w.mu.Lock()
			w.asked++
			w.mu.Unlock()
		},
		GotConn: func(httptrace.GotConnInfo) {
			w.mu.Lock()
			w.got++
			w.mu.Unlock()
		},
		// Called by the transport's writer, once the request is in its
		// buffer (before that is flushed) or has failed to get there:
		// nothing can have reached the vendor whole before Err == nil
		// is reported.
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			w.mu.Lock()
			w.settled++
			if info.Err == nil {
				w.whole = true
			}
			w.mu.Unlock()
			select {
			case w.change <- struct{}{}:
			default:
			}
		},
	}
}

// NotWritten reports whether the request certainly did not reach the
// vendor whole: the transport reported asking for or getting a connection,
// and every attempt that got one reported that its writing failed. An
// attempt still writing is waited for, up to settleWait.
func (w *writes) NotWritten() bool {
	timer := time.NewTimer(settleWait)
	defer timer.Stop()
	for {
		w.mu.Lock()
		asked, got, settled, whole := w.asked, w.got, w.settled, w.whole
		w.mu.Unlock()
		switch {
		case whole || asked+got == 0: // written, or no word at all
			return false
		case settled >= got:
			return true
		}
		select {
		case <-w.change:
		case <-timer.C:
			return false
		}
	}
}

// Do sends r once with client and reads the whole answer. Its errors are
// classified as the package documentation says: CodeRejected or
// CodeUnavailable when the vendor certainly has nothing, CodeOutcomeUnknown
// when it may have the request. An answer whose body cannot be read whole
// is of unknown outcome whatever its status.
func Do(ctx context.Context, client *http.Client, r Request) (*Answer, error) {
	if cerr := ctx.Err(); cerr != nil {
		return nil, &notify.Error{Code: notify.CodeUnavailable, Err: fmt.Errorf("%s: request not sent: %w", r.Name, cerr)}
	}
	var body io.Reader
	var st *stream
	switch {
	case r.Body != nil:
		body = bytes.NewReader(r.Body)
	case r.Stream != nil:
		st = startStream(r.Stream)
		defer st.end() // on every early return; a second end is harmless
		body = st.pr
	}
	w := newWrites()
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, w.Trace()), r.Method, r.URL, body)
	if err != nil {
		return nil, notify.Errorf(notify.CodeRejected, "%s: the request cannot be built (check %s): %s", r.Name, urlConfig(r), Cause(err))
	}
	// net/http refuses what follows before any I/O, in a way that would
	// look like an unknown outcome here: say it is certain, and why.
	if (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		return nil, notify.Errorf(notify.CodeRejected, "%s: the request cannot be built (check %s): not an http(s) URL with a host", r.Name, urlConfig(r))
	}
	for k, vs := range r.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, notify.Errorf(notify.CodeRejected, "%s: %q is not a valid HTTP header name", r.Name, k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, notify.Errorf(notify.CodeRejected,
					"%s: the %s header holds a control character, which HTTP forbids (check the provider's credentials in its Config)", r.Name, k)
			}
		}
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", cmp.Or(r.ContentType, "application/json"))
	}
	if st != nil {
		req.ContentLength = -1 // chunked: a body cut short is never complete
	}
	// net/http's HTTP/1 transport takes a request with an
	// Idempotency-Key for idempotent, and writes it again on a fresh
	// connection when a reused one fails after writing it: a second send
	// of a message whose outcome is unknown. Without GetBody it is never
	// written again; a failure before it was written is the Notifier's to
	// retry. Other requests keep GetBody: HTTP/1 never writes a POST
	// without the key twice, and HTTP/2 rewrites one only when the server
	// refused its stream unprocessed (REFUSED_STREAM, GOAWAY), which is
	// safe and keeps a certain refusal from looking unknown. A GET
	// without a body is net/http's to write again: it is for reading.
	if req.Header.Get("Idempotency-Key") != "" || req.Header.Get("X-Idempotency-Key") != "" {
		req.GetBody = nil
	}
	resp, err := client.Do(req)
	if st != nil {
		if whole, srcErr := st.end(); !whole {
			return nil, cut(ctx, r.Name, resp, err, srcErr)
		}
	}
	if err != nil {
		if w.NotWritten() {
			return nil, notSent(ctx, r.Name, err)
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
	if err != nil {
		return nil, Unknown(ctx, r.Name, fmt.Sprintf("HTTP %d, and its answer could not be read whole", resp.StatusCode), err)
	}
	return &Answer{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// urlConfig names what r's URL is built from, for an error.
func urlConfig(r Request) string { return cmp.Or(r.URLConfig, "the provider's base URL") }

// notSent classifies a failure before the request was written whole: a
// certain, temporary refusal.
func notSent(ctx context.Context, name string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return &notify.Error{Code: notify.CodeUnavailable, Err: fmt.Errorf("%s: request not sent: %w", name, cerr)}
	}
	return &notify.Error{Code: notify.CodeUnavailable, Err: &notSentError{msg: fmt.Sprintf("%s: request not sent: %s", name, Cause(err)), cause: err}}
}

// notSentError is the cause of a refusal before the request was written
// whole. Its text is Cause's words, never the URL or the transport's own
// text; it keeps the transport's error for errors.As, so that a provider
// can tell a guard's refusal of the address (internal/netguard) from a
// network that failed.
type notSentError struct {
	msg   string
	cause error
}

func (e *notSentError) Error() string { return e.msg }
func (e *notSentError) Unwrap() error { return e.cause }

// unknownError is the cause of every unknown outcome made here. Its text
// ends with why it is not retried; ReadOnly drops that.
type unknownError struct {
	msg   string // "name: what happened"
	cause error  // an ended context, for errors.Is; may be nil
}

func (e *unknownError) Error() string {
	return e.msg + " (the vendor may have accepted the message, so it is not retried)"
}

func (e *unknownError) Unwrap() error { return e.cause }

// readOnlyError is an unknownError of a request that sends nothing.
type readOnlyError struct{ *unknownError }

func (e readOnlyError) Error() string { return e.msg }

// Unknown classifies a failure after the request may have been written,
// when the vendor may have accepted the message: CodeOutcomeUnknown, never
// retried. what says what happened; an ended context is wrapped (errors.Is
// sees it), a network timeout is named.
func Unknown(ctx context.Context, name, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return &notify.Error{Code: notify.CodeOutcomeUnknown,
			Err: &unknownError{msg: fmt.Sprintf("%s: %s: %v", name, what, cerr), cause: cerr}}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		what += ": timed out"
	}
	return &notify.Error{Code: notify.CodeOutcomeUnknown,
		Err: &unknownError{msg: fmt.Sprintf("%s: %s: %s", name, what, Cause(err))}}
}

// Unknownf returns a CodeOutcomeUnknown error for an answer that does not
// prove the vendor refused the message, such as a 5xx without the vendor's
// error body or a success without a message ID. The message is name and
// the formatted text, followed by why the message is not retried.
func Unknownf(name, format string, args ...any) *notify.Error {
	return &notify.Error{Code: notify.CodeOutcomeUnknown,
		Err: &unknownError{msg: name + ": " + fmt.Sprintf(format, args...)}}
}

// ReadOnly classifies err for a request that sends nothing, such as a
// session-status or balance query: whatever became of it, the vendor has
// no message, so an unknown outcome becomes CodeUnavailable, with the same
// cause (errors.Is still sees an ended context). Other errors are returned
// as they are.
func ReadOnly(err error) error {
	if err == nil || notify.OutcomeOf(err) != record.StateUnknown {
		return err
	}
	var ue *unknownError
	if errors.As(err, &ue) {
		return &notify.Error{Code: notify.CodeUnavailable, Err: readOnlyError{ue}}
	}
	return notify.WithCode(notify.CodeUnavailable, err)
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

// clipLimit is how much vendor text Clip keeps.
const clipLimit = 300

// Clip shortens vendor text to a sane length for an error message (300
// bytes and "..."), without splitting a UTF-8 sequence.
func Clip(s string) string { return clip(s, clipLimit) }

// clip shortens s to limit bytes and "...", without splitting a UTF-8
// sequence.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
