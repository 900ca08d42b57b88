package vendorhttptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Faults holds the faults a test has asked of a fake vendor, and answers
// them at the points of the fake's flow where a real network path would
// fail. Embed it in the fake's Server: its setters become the fake's. The
// zero value injects nothing; it is safe for concurrent use.
type Faults struct {
	mu         sync.Mutex
	failHTTP   int
	acceptHTTP int
	breakNext  bool
	latency    time.Duration
}

// FailNextHTTP makes a proxy in front of the vendor answer the next
// request with status and an HTML error page (such as 502 or 503). The
// vendor does not see the request: nothing is accepted, though the fake
// counts the request.
func (f *Faults) FailNextHTTP(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failHTTP = status
}

// FailNextHTTPAfterAccept makes the vendor accept (and charge) the next
// valid request and a proxy answer status and an HTML error page instead
// of the vendor's answer, as one does when the vendor answers too late
// (504) or its answer breaks (502): the sender cannot know that the
// message went out.
func (f *Faults) FailNextHTTPAfterAccept(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acceptHTTP = status
}

// BreakNext makes the vendor accept (and charge) the next valid request
// and the connection drop before the answer: the sender cannot know that
// the message went out.
func (f *Faults) BreakNext() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.breakNext = true
}

// SetLatency makes the fake wait d before answering each request, or until
// the client gives up. Zero answers at once.
func (f *Faults) SetLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

// Wait sleeps the latency SetLatency set, or until the client gives up,
// and reports whether to answer. Call it once the request's body has been
// read, so that net/http cancels the request's context when the client
// goes. When the client gave up, Wait has closed the connection (Drop)
// and the handler returns: a handler that returned without writing would
// answer 200 with an empty body, which a client that only half-closed its
// side on giving up could read as an acceptance.
func (f *Faults) Wait(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	d := f.latency
	f.mu.Unlock()
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		Drop(w)
		return false
	case <-t.C:
		return true
	}
}

// Proxied answers the request with the proxy's error page FailNextHTTP
// asked for, if any, and reports whether it did: the fake's handler then
// returns without the vendor seeing the request.
func (f *Faults) Proxied(w http.ResponseWriter) bool {
	status := f.TakeProxyError()
	if status == 0 {
		return false
	}
	ProxyError(w, status)
	return true
}

// AfterAccept answers a request the vendor has just accepted with the
// fault BreakNext or FailNextHTTPAfterAccept asked for, if any, and
// reports whether it did: the fake's handler then returns without its own
// answer.
func (f *Faults) AfterAccept(w http.ResponseWriter) bool {
	f.mu.Lock()
	brk, status := f.breakNext, f.acceptHTTP
	f.breakNext, f.acceptHTTP = false, 0
	f.mu.Unlock()
	switch {
	case brk:
		Drop(w)
	case status != 0:
		ProxyError(w, status)
	default:
		return false
	}
	return true
}

// ReplyJSON answers status with v as JSON, as vendors' APIs do.
func ReplyJSON(w http.ResponseWriter, status int, v any) {
	ReplyJSONAs(w, "application/json", status, v)
}

// ProxyError answers status with an error page of the kind a reverse proxy
// or load balancer in front of a vendor serves: HTML, not the vendor's
// own format.
func ProxyError(w http.ResponseWriter, status int) {
	title := fmt.Sprintf("%d %s", status, http.StatusText(status))
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<html>\r\n<head><title>%s</title></head>\r\n<body>\r\n<center><h1>%s</h1></center>\r\n<hr><center>proxy</center>\r\n</body>\r\n</html>\r\n", title, title)
}

// Drop closes the connection without an answer.
func Drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler) // net/http closes the connection
}

// A CallbackError is a receiver's answer other than 2xx to a report Post
// delivered.
type CallbackError struct {
	Name       string // the fake that posted, such as "msg91test"
	StatusCode int    // such as 401
	Status     string // such as "401 Unauthorized"
}

// Error says what the receiver answered.
func (e *CallbackError) Error() string {
	return e.Name + ": the delivery-report receiver answered " + e.Status
}

// A Report is one delivery report as a vendor posts it.
type Report struct {
	// URL is the receiver's callback URL. It may carry a secret token:
	// Post's errors never name it.
	URL string
	// ContentType is the body's, such as "application/json".
	ContentType string
	Body        []byte
	// Header holds further headers, such as the vendor's signature.
	Header http.Header
}

// Post posts rep with client (http.DefaultClient when nil) and reads the
// answer. It returns a *CallbackError for an answer other than 2xx, and
// for a failure on the way an error prefixed with name ("msg91test") that
// never names the URL.
func Post(ctx context.Context, client *http.Client, name string, rep Report) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rep.URL, bytes.NewReader(rep.Body))
	if err != nil {
		return errors.New(name + ": the callback URL cannot be requested")
	}
	for k, vs := range rep.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", rep.ContentType)
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// *url.Error names the URL, and the URL may hold a token.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s: posting the delivery report: %w", name, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &CallbackError{Name: name, StatusCode: resp.StatusCode, Status: resp.Status}
	}
	return nil
}
