package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify/prefpage"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/verify"

	"github.com/notifykit/notify"
)

// BasePath is the prefix of every route: a client's base URL ends in it.
const BasePath = "/api/v1"

// Handler serves the gateway API of docs/api.md under BasePath.
// Create one with New; it is safe for concurrent use and holds no
// goroutines, so it needs no Close.
type Handler struct {
	n        *notify.Notifier
	queued   *queued.Sender // n's queue side
	accounts store.Accounts
	log      *slog.Logger
	maxBody  int64
	maxHead  int           // largest request head, in bytes (WithMaxHeaderBytes)
	timeout  time.Duration // bound of a send detached from its request
	root     http.Handler

	sends  []sendRoute       // the send endpoints: the spec's, then WithRoute's
	verify *verify.Service   // the /verifications routes' service (WithVerifications), or nil
	prefs  store.Preferences // the /categories and /preferences routes' store (WithPreferences), or nil
	// links makes /preferences/link's links to the page at linkURL
	// (WithPreferenceLinks), or nil.
	links   *prefpage.Page
	linkURL string
	async   bool       // Prefer: respond-async queues a send (WithRespondAsync)
	push    PushConfig // the push registry and VAPID key (WithPush)

	idPrefix string
	idSeq    atomic.Uint64
	pool     sync.Pool // *exchange
}

// Option configures a Handler in New.
type Option func(*Handler) error

// WithLogger sets the logger of the access log: one record per request
// with method, path, status, duration, account, request ID, the message
// ID of a send that made one (message_id; a verification's send lists
// its legs' IDs, comma-separated), the verification a /verifications
// request concerned (verification_id) and, for errors, the error code.
// API keys, request bodies and OTP codes are never logged. Sends
// run with a context that carries the request ID (RequestID), so that a
// logger whose handler is wrapped by NewLogHandler names the request on
// the lines providers and observers log. Default: no access log.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		h.log = l
		return nil
	}
}

// WithMaxBodyBytes sets the largest request body accepted; a larger one is
// answered 413 with "Connection: close". Default 1 MiB.
//
// Many clients (Python's urllib, curl without "Expect: 100-continue")
// write the whole body before they read anything; closing the connection
// on unread data makes the kernel reset it, and such a client sees the
// reset instead of the 413. So before answering, the handler reads and
// discards the rest of a body of up to DrainFactor times n; a longer one,
// or one whose client asked for 100-continue and so has not sent it, is
// not read, and the connection is closed after the answer. The time spent
// draining is bounded by the http.Server's ReadTimeout.
func WithMaxBodyBytes(n int64) Option {
	return func(h *Handler) error {
		if n <= 0 {
			return errors.New("WithMaxBodyBytes: limit must be positive")
		}
		h.maxBody = n
		return nil
	}
}

// DrainFactor bounds the reading of a body over the limit: a body of up to
// DrainFactor times WithMaxBodyBytes is read to its end before the 413, so
// that a client still writing it reads the answer (see WithMaxBodyBytes).
const DrainFactor = 4

// DefaultMaxHeaderBytes is the default of WithMaxHeaderBytes.
const DefaultMaxHeaderBytes = 64 << 10

// WithMaxHeaderBytes sets the largest request head accepted: the request
// line and the header fields, each counted as sent in HTTP/1.1 (name,
// ": ", value, CRLF), Host included. A larger head is answered 431 with
// the JSON error body, code request_headers_too_large. Default
// DefaultMaxHeaderBytes (64 KiB).
//
// The http.Server's MaxHeaderBytes (default http.DefaultMaxHeaderBytes,
// 1 MiB) must be larger than n: net/http answers a head over its own limit
// with a plain-text 431 before any Handler sees the request, and that
// answer cannot be customised. Only heads between the two limits get the
// JSON answer.
func WithMaxHeaderBytes(n int) Option {
	return func(h *Handler) error {
		if n <= 0 {
			return errors.New("WithMaxHeaderBytes: limit must be positive")
		}
		h.maxHead = n
		return nil
	}
}

// WithSendTimeout bounds each send. A send runs detached from the
// client's connection, so that a client that hangs up while the vendor
// call is in flight changes nothing about what is charged, sent or
// recorded; this timeout is then its only bound, besides the Notifier's
// per-attempt timeouts. Default 30s.
func WithSendTimeout(d time.Duration) Option {
	return func(h *Handler) error {
		if d <= 0 {
			return errors.New("WithSendTimeout: timeout must be positive")
		}
		h.timeout = d
		return nil
	}
}

// sendRoute is one send endpoint: POST BasePath+path, its body decoded by
// decode and sent with Notifier.Send, or, on a route that can queue,
// with queued.Sender.SendAt for a body with a send_at and queued.Sender.Enqueue
// for "Prefer: respond-async" (queued.go).
type sendRoute struct {
	path   string
	body   string // the body's shape, for the OpenAPI test: sms, otp, email, chat; "" for WithRoute's
	decode sendDecoder
	queue  bool // a single message, which may be scheduled or queued
}

// specRoutes are the send endpoints of the gateway API specification.
// The OTP endpoints cannot queue: their decoders refuse a send_at.
func specRoutes() []sendRoute {
	return []sendRoute{
		{"/sms", "sms", timed(decodeSMSAt), true},
		{"/sms/send", "sms", timed(decodeSMSAt), true},
		{"/send-otp", "otp", timed(decodeOTPAt), false},
		{"/email/send", "email", timed(decodeEmailAt), true},
		{"/messenger/send", "chat", timed(decodeChatSend), true},
		{"/messenger/send-otp", "chat", timed(decodeChatOTP), false},
		{"/send-messenger", "chat", timed(decodeChatSend), true},
		{"/push", "push", decodePushAt, true}, // beyond the spec (push.go)
	}
}

// WithRoute adds the send endpoint POST BasePath+p, whose JSON body d
// decodes into the request that is sent: the way a channel of your own
// (or another body shape for a built-in one) joins the API. The endpoint
// is authenticated, limited, detached and answered exactly as the
// built-in ones are (the receipt's JSON, the error answers), but it
// always sends at once: the Handler reads no send_at of its body and
// ignores "Prefer: respond-async" there (see WithRespondAsync). p starts
// with "/" and must not be one the handler has already.
func WithRoute(p string, d Decoder) Option {
	return func(h *Handler) error {
		switch {
		case d == nil:
			return fmt.Errorf("WithRoute %q: nil decoder", p)
		case !strings.HasPrefix(p, "/") || strings.ContainsAny(p, " {}?#") || p != path.Clean(p):
			return fmt.Errorf("WithRoute %q: the path must be a clean absolute path without patterns", p)
		case p == "/balance" || p == "/sms/bulk" || strings.HasPrefix(p, "/messages/") || p == "/openapi.json" ||
			p == "/verifications" || strings.HasPrefix(p, "/verifications/") ||
			p == "/categories" || p == "/preferences" || strings.HasPrefix(p, "/preferences/") ||
			p == "/push/bulk" || p == "/push/confirm" || p == "/push/vapid-public-key" || p == "/push/subscriptions" || strings.HasPrefix(p, "/push/subscriptions/"):
			return fmt.Errorf("WithRoute %q: the API has that endpoint already", p)
		}
		for _, rt := range h.sends {
			if rt.path == p {
				return fmt.Errorf("WithRoute %q: the API has that endpoint already", p)
			}
		}
		h.sends = append(h.sends, sendRoute{path: p, decode: untimed(d)})
		return nil
	}
}

// New returns a Handler that sends through n and authenticates API keys
// with accounts (AccountByKey). Mount it at the server root, or anywhere
// that leaves BasePath intact.
func New(n *notify.Notifier, accounts store.Accounts, opts ...Option) (*Handler, error) {
	if n == nil || accounts == nil {
		return nil, errors.New("httpapi.New: needs a Notifier and a store.Accounts")
	}
	h := &Handler{
		n:        n,
		queued:   queued.New(n),
		accounts: accounts,
		log:      slog.New(slog.DiscardHandler),
		maxBody:  1 << 20,
		maxHead:  DefaultMaxHeaderBytes,
		timeout:  30 * time.Second,
		sends:    specRoutes(),
	}
	for _, opt := range opts {
		if err := opt(h); err != nil {
			return nil, fmt.Errorf("httpapi.New: %w", err)
		}
	}
	var seed [6]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("httpapi.New: request ID seed: %w", err)
	}
	h.idPrefix = hex.EncodeToString(seed[:]) + "-"
	h.pool.New = func() any { return new(exchange) }
	h.root = h.routes()
	return h, nil
}

// routes builds the mux. Each path has a method-specific pattern and a
// catch-all one for the JSON 405; "/" answers the JSON 404.
func (h *Handler) routes() http.Handler {
	mux := http.NewServeMux()
	post := func(path string, fn func(*exchange, *http.Request, *notify.Account)) {
		mux.Handle("POST "+BasePath+path, h.authed(fn))
		mux.Handle(BasePath+path, methodNotAllowed("POST"))
	}
	for _, rt := range h.sends {
		post(rt.path, h.sender(rt))
	}
	post("/sms/bulk", h.bulkSMS)         // one SMS to many recipients (bulk.go)
	post("/push/bulk", h.pushBulk)       // one push to many devices (push.go)
	post("/push/confirm", h.confirmPush) // the app confirms a push (push.go)
	if h.push.Registry != nil {          // WithPush (push.go)
		post("/push/subscriptions", h.registerDevice)
		post("/push/subscriptions/lookup", h.lookupDevices)
		post("/push/subscriptions/delete", h.deleteDevice)
	}
	if h.push.VAPIDPublicKey != "" {
		mux.HandleFunc("GET "+BasePath+"/push/vapid-public-key", h.vapidPublicKey)
		mux.Handle(BasePath+"/push/vapid-public-key", methodNotAllowed("GET, HEAD"))
	}
	mux.Handle("GET "+BasePath+"/balance", h.authed(h.balance))
	mux.Handle(BasePath+"/balance", methodNotAllowed("GET, HEAD"))
	mux.Handle("GET "+BasePath+"/messages/{id}", h.authed(h.message))
	mux.Handle("DELETE "+BasePath+"/messages/{id}", h.authed(h.cancelMessage)) // queued.go
	mux.Handle(BasePath+"/messages/{id}", methodNotAllowed("GET, HEAD, DELETE"))
	if h.verify != nil { // WithVerifications (verify.go)
		post("/verifications", h.startVerification)
		post("/verifications/{id}/check", h.checkVerification)
		post("/verifications/{id}/resend", h.resendVerification)
		mux.Handle("GET "+BasePath+"/verifications/{id}", h.authed(h.getVerification))
		mux.Handle("DELETE "+BasePath+"/verifications/{id}", h.authed(h.cancelVerification))
		mux.Handle(BasePath+"/verifications/{id}", methodNotAllowed("GET, HEAD, DELETE"))
	}
	if h.prefs != nil { // WithPreferences (preference.go)
		mux.Handle("GET "+BasePath+"/categories", h.authed(h.categories))
		mux.Handle(BasePath+"/categories", methodNotAllowed("GET, HEAD"))
		post("/preferences/lookup", h.lookupPreferences)
		post("/preferences", h.setPreferences)
	}
	if h.links != nil { // WithPreferenceLinks (preflink.go)
		post("/preferences/link", h.preferenceLink)
	}
	h.routeOpenAPI(mux) // GET /openapi.json, without a key (openapi.go)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, r, notify.Errorf(notify.CodeNotFound, "no such endpoint: %s %s (the API lives under %s)",
			r.Method, r.URL.Path, BasePath), nil)
	})
	return recoverer(h.log)(mux)
}

// ServeHTTP implements http.Handler: it assigns the request ID, refuses
// an oversized head (431) and a path that is not clean (404), routes, and
// writes the access log record. Every answer it writes is JSON.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	x := h.pool.Get().(*exchange)
	x.reset(w)
	x.h = h
	x.id = h.requestID(r.Header.Get("X-Request-ID"))
	w.Header().Set("X-Request-ID", x.id)

	switch p := r.URL.EscapedPath(); {
	case headBytesOver(r, h.maxHead):
		writeErr(x, r, notify.Errorf(CodeHeadersTooLarge, "the request line and headers are larger than %d bytes", h.maxHead), nil)
	case p == "" || p[0] != '/' || path.Clean(p) != p:
		// ServeMux would answer a plain redirect to the cleaned path
		// (and a client would resend the POST there); paths are matched
		// exactly instead.
		writeErr(x, r, notify.Errorf(notify.CodeNotFound, "no such endpoint: %s %s (paths are matched exactly: no empty, \".\" or \"..\" segments and no trailing slash)",
			r.Method, p), nil)
	default:
		h.root.ServeHTTP(x, r)
	}
	if x.status >= 400 {
		// A refusal before the body was read (401, 404, 405, 415, 431)
		// must not become a reset for a client still sending it. A body
		// read to its end costs one more Read here.
		h.drain(r, 0)
	}

	if x.status == 0 {
		x.status = http.StatusOK
	}
	status := x.status
	if status >= 500 && r.Context().Err() != nil && x.code == notify.CodeCanceled {
		status = statusClientClosed
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	if h.log.Enabled(r.Context(), level) {
		attrs := [...]slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
			slog.String("account", x.account),
			slog.String("request_id", x.id),
			{}, {}, {}, {},
		}
		n := len(attrs) - 4
		// The optional ones, only when set: the message the request made,
		// and what went wrong.
		if x.message != "" {
			attrs[n] = slog.String("message_id", x.message)
			n++
		}
		if x.verification != "" {
			attrs[n] = slog.String("verification_id", x.verification)
			n++
		}
		if x.code != "" || x.detail != "" {
			attrs[n] = slog.String("code", string(x.code))
			n++
		}
		if x.detail != "" {
			attrs[n] = slog.String("detail", x.detail)
			n++
		}
		h.log.LogAttrs(r.Context(), level, "http request", attrs[:n]...)
	}
	x.release(&h.pool)
}

// headBytesOver reports whether the request line and headers of r are
// longer than limit bytes, counted as sent in HTTP/1.1. It stops counting
// at the limit.
func headBytesOver(r *http.Request, limit int) bool {
	// "METHOD URI PROTO\r\n" and "Host: host\r\n" (net/http moves Host
	// out of the header map).
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
		if n > limit {
			return true
		}
	}
	return n > limit
}

// ValidRequestID reports whether id, a client's X-Request-ID, may be
// echoed and logged as it is: 1 to 128 characters of ASCII letters,
// digits and . _ : -. The Handler replaces any other with one of its own;
// a host serving other routes beside it applies the same rule.
func ValidRequestID(id string) bool {
	n := len(id)
	if n == 0 || n > 128 {
		return false
	}
	for i := 0; i < n; i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// requestID returns the client's X-Request-ID when it is sane
// (ValidRequestID), else a new one.
func (h *Handler) requestID(in string) string {
	if ValidRequestID(in) {
		return in
	}
	var b [40]byte
	out := append(b[:0], h.idPrefix...)
	out = appendInt(out, int64(h.idSeq.Add(1)))
	return string(out)
}

// exchange is the per-request state, pooled: the response writer wrapper
// that records the status for the access log, and the request's buffers.
// Route handlers reach it by asserting their ResponseWriter.
type exchange struct {
	w       http.ResponseWriter
	h       *Handler
	status  int
	id      string
	account string
	keyed   *record.Account // the account the API key found (RequestAccounts)
	code    notify.Code     // error code of an error response
	detail  string          // internal error detail, for the log only
	message string          // the message ID of a send's receipt, for the log
	// verification is the ID of the verification a request concerned,
	// for the log.
	verification string
	body         []byte
	out          []byte
}

func (x *exchange) reset(w http.ResponseWriter) {
	x.w, x.status, x.account, x.code, x.detail, x.message, x.verification = w, 0, "", "", "", "", ""
	x.keyed = nil
	x.body, x.out = x.body[:0], x.out[:0]
}

// release returns x to the pool, dropping buffers grown by a large body.
func (x *exchange) release(p *sync.Pool) {
	x.w, x.h = nil, nil
	if cap(x.body) > 64<<10 {
		x.body = nil
	}
	if cap(x.out) > 64<<10 {
		x.out = nil
	}
	p.Put(x)
}

// Header implements http.ResponseWriter.
func (x *exchange) Header() http.Header { return x.w.Header() }

// WriteHeader implements http.ResponseWriter.
func (x *exchange) WriteHeader(code int) {
	if x.status == 0 {
		x.status = code
	}
	x.w.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (x *exchange) Write(p []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	return x.w.Write(p)
}

// Unwrap lets http.ResponseController reach the server's writer.
func (x *exchange) Unwrap() http.ResponseWriter { return x.w }

// writeJSON sends body with status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeErr answers err as the JSON error body, with Retry-After for
// rate_limited. r is the failed receipt, if any.
func writeErr(w http.ResponseWriter, req *http.Request, err error, r *notify.Receipt) {
	code := notify.CodeOf(err)
	var buf []byte
	x, _ := w.(*exchange)
	if x != nil {
		x.code = code
		if x.detail == "" {
			x.detail = errorDetail(err, r) // what the answer does not show
		}
		buf = x.out[:0]
	}
	buf = appendError(buf, err, r, w.Header().Get("X-Request-ID"))
	setRetryAfter(w, err, code)
	writeJSON(w, StatusOf(code), buf)
	if x != nil {
		x.out = buf
	}
}

// setRetryAfter sets Retry-After for an error of code rate_limited that
// says when to try again.
func setRetryAfter(w http.ResponseWriter, err error, code notify.Code) {
	var e *notify.Error
	if code == notify.CodeRateLimited && errors.As(err, &e) && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", itoa(retrySeconds(e.RetryAfter)))
	}
}

// methodNotAllowed answers 405 with the Allow header and a JSON body.
func methodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeErr(w, r, notify.Errorf(CodeMethodNotAllowed, "%s is not allowed here; use %s", r.Method, allow), nil)
	})
}

// recoverer turns a panic into a 500 JSON answer (when nothing was written
// yet) and an error log record; http.ErrAbortHandler passes through, as
// net/http expects.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler {
					panic(p)
				}
				detail := fmt.Sprintf("panic: %v", p)
				x, _ := w.(*exchange)
				if x != nil && x.status != 0 {
					x.detail = detail
					log.LogAttrs(r.Context(), slog.LevelError, "panic after the response started",
						slog.String("request_id", x.id), slog.String("detail", detail))
					return
				}
				writeErr(w, r, notify.Errorf(notify.CodeInternal, "%s", detail), nil)
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// authed wraps a route: it authenticates the API key and passes the
// account on. Rate limits and the OTP throttle are the Notifier's
// (notify.WithRateLimit, notify.WithOTPThrottle): they count valid sends,
// after validation.
func (h *Handler) authed(fn func(*exchange, *http.Request, *notify.Account)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := w.(*exchange)
		// Before the key is looked at: with two keys, a 401 or not would
		// tell which of them is valid.
		if err := singleHeaders(r.Header); err != nil {
			writeErr(x, r, err, nil)
			return
		}
		key, ok := apiKey(r.Header.Get("Authorization"))
		if !ok {
			writeErr(x, r, notify.Errorf(notify.CodeUnauthenticated,
				"send the API key as \"Authorization: <key>\" or \"Authorization: Bearer <key>\""), nil)
			return
		}
		acct, err := h.accounts.AccountByKey(r.Context(), key)
		if err != nil || acct == nil {
			code := notify.CodeOf(err)
			if err == nil || code == notify.CodeUnauthenticated || code == notify.CodeNotFound {
				// The store's own words might echo the key; ours do not.
				writeErr(x, r, notify.Errorf(notify.CodeUnauthenticated, "the API key is not valid"), nil)
				return
			}
			// For the log only, and without the key, in case the store
			// repeats its argument.
			x.detail = strings.ReplaceAll(err.Error(), key, "<key>")
			writeErr(x, r, &notify.Error{Code: code, Err: &notify.StoreError{Store: "accounts", Err: errors.New("AccountByKey failed")}}, nil)
			return
		}
		x.account = acct.ID
		x.keyed = acct
		fn(x, r, acct)
	})
}

// onceHeaders are the headers that decide what a request does; each may
// be sent at most once, since http.Header.Get would silently take the
// first of two.
var onceHeaders = [...]string{"Authorization", "Content-Type", "Idempotency-Key", "X-Domain"}

// singleHeaders returns an InvalidArgument error when a header of
// onceHeaders is sent more than once.
func singleHeaders(hd http.Header) error {
	for _, name := range onceHeaders {
		if n := len(hd[name]); n > 1 {
			return notify.Errorf(notify.CodeInvalidArgument, "the %s header is sent %d times: send it once", name, n)
		}
	}
	return nil
}

// apiKey extracts the key from an Authorization value: the bare key, or
// "Bearer <key>" with the scheme in any case.
func apiKey(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if scheme, rest, found := strings.Cut(v, " "); found {
		if !strings.EqualFold(scheme, "Bearer") {
			return "", false
		}
		v = strings.TrimSpace(rest)
	} else if strings.EqualFold(v, "Bearer") {
		return "", false
	}
	if v == "" || strings.ContainsAny(v, " \t") {
		return "", false
	}
	return v, true
}

// readObject reads the request's body (readBody) into dst, one JSON
// object whose keys must all be among known (unmarshalKeys), and reports
// whether it could; when not, the request is answered.
func (h *Handler) readObject(x *exchange, r *http.Request, dst any, known []string) bool {
	if !h.readBody(x, r) {
		return false
	}
	if err := unmarshalKeys(x.body, dst, known, true); err != nil {
		writeErr(x, r, err, nil)
		return false
	}
	return true
}

// refuseFields answers the request with fe's invalid fields
// (notify.InvalidFields), if it has any, and reports whether it did.
func refuseFields(x *exchange, r *http.Request, fe record.FieldErrors) bool {
	if err := notify.InvalidFields(fe); err != nil {
		writeErr(x, r, err, nil)
		return true
	}
	return false
}

// readBody checks the content type and reads the body within the limit.
// It answers the error itself and returns false on failure.
func (h *Handler) readBody(x *exchange, r *http.Request) bool {
	if !isJSON(r.Header.Get("Content-Type")) {
		writeErr(x, r, notify.Errorf(CodeUnsupportedMediaType, "send the body as JSON with Content-Type: application/json"), nil)
		return false
	}
	if r.ContentLength > h.maxBody {
		h.tooLarge(x, r, 0)
		return false
	}
	buf := x.body[:0]
	if n := r.ContentLength; n > 0 && int64(cap(buf)) < n {
		buf = make([]byte, 0, n)
	}
	lr := io.LimitReader(r.Body, h.maxBody+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > h.maxBody {
			x.body = buf[:0]
			h.tooLarge(x, r, int64(len(buf)))
			return false
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			x.body = buf[:0]
			writeErr(x, r, notify.Errorf(notify.CodeInvalidArgument, "reading the request body failed"), nil)
			return false
		}
	}
	x.body = buf
	return true
}

// tooLarge answers 413 to a body over the limit, of which read bytes were
// read. A client that writes its whole body before reading must find the
// answer rather than a reset (see WithMaxBodyBytes): the rest of a body of
// up to DrainFactor times the limit is read and discarded first. Either
// way the connection is closed after the answer, as the client cannot
// expect it to carry more.
func (h *Handler) tooLarge(x *exchange, r *http.Request, read int64) {
	h.drain(r, read)
	x.Header().Set("Connection", "close")
	writeErr(x, r, notify.Errorf(CodeRequestTooLarge, "the request body is larger than %d bytes", h.maxBody), nil)
}

// drain reads and discards what is left of a refused request's body, up
// to DrainFactor times the body limit (read bytes of it already read), so
// that a client that writes its whole body before reading gets the answer:
// net/http closes a connection with more than 256 KiB unread, and a close
// with unread data is a reset that can destroy the answer in flight. It
// must run before the handler returns, while the answer is still
// buffered. A body larger than the bound is not read at all.
func (h *Handler) drain(r *http.Request, read int64) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	bound := int64(math.MaxInt64)
	if h.maxBody <= math.MaxInt64/DrainFactor {
		bound = h.maxBody * DrainFactor
	}
	// With 100-continue (HTTP/1.1 and later) and nothing read yet, the
	// client waits for our word before it sends the body: reading would
	// ask for it.
	waiting := read == 0 && r.ProtoAtLeast(1, 1) && strings.EqualFold(r.Header.Get("Expect"), "100-continue")
	if !waiting && r.ContentLength <= bound {
		// An error (the client left, the server's ReadTimeout) only means
		// the answer may not arrive; there is nothing else to do.
		_, _ = io.CopyN(io.Discard, r.Body, bound-read)
	}
}

// isJSON reports whether a Content-Type is application/json, with at most
// a UTF-8 charset parameter.
func isJSON(ct string) bool {
	if ct == "application/json" || strings.EqualFold(ct, "application/json; charset=utf-8") {
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return false
		}
	}
	return true
}

func headerMeta(r *http.Request) Header {
	return Header{
		IdempotencyKey: strings.TrimSpace(r.Header.Get("Idempotency-Key")),
		Domain:         strings.TrimSpace(r.Header.Get("X-Domain")),
	}
}

// sendContext is the context of a send: detached from the client's
// connection (a hang-up must not cut a vendor call short and leave its
// outcome unknown), bounded by the handler's send timeout, and carrying
// the request's ID for whoever logs with it (RequestID) and the account
// its key found (RequestAccounts).
func (h *Handler) sendContext(x *exchange, r *http.Request) (context.Context, context.CancelFunc) {
	scope := &sendScope{requestID: x.id, account: x.keyed}
	return context.WithTimeout(context.WithValue(context.WithoutCancel(r.Context()), sendScopeKey{}, scope), h.timeout)
}

// finish answers the outcome of a send: 200 with the receipt, or 202
// when the receipt is queued or scheduled (a worker sends it later).
func finish(x *exchange, r *http.Request, rec *notify.Receipt, err error) {
	if rec != nil {
		x.message = rec.MessageID
	}
	if err != nil {
		writeErr(x, r, err, rec)
		return
	}
	x.detail = errorDetail(nil, rec) // a note's or a leg's errors
	x.out = appendSuccess(x.out[:0], rec, x.id)
	status := http.StatusOK
	if rec.Status.Waiting() {
		status = http.StatusAccepted
	}
	writeJSON(x, status, x.out)
}

// sender is the handler of the send endpoint rt.
func (h *Handler) sender(rt sendRoute) func(*exchange, *http.Request, *notify.Account) {
	return func(x *exchange, r *http.Request, acct *notify.Account) {
		if !h.readBody(x, r) {
			return
		}
		req, at, err := rt.decode(x.body, acct.ID, headerMeta(r))
		if err != nil {
			writeErr(x, r, err, nil)
			return
		}
		if req == nil {
			writeErr(x, r, &notify.Error{Code: notify.CodeInternal, Err: errors.New("httpapi: the decoder returned no request")}, nil)
			return
		}
		ctx, cancel := h.sendContext(x, r)
		defer cancel()
		var rec *notify.Receipt
		wf, fallback := req.(*withFallback)
		switch {
		case fallback:
			rec, err = h.queued.SendWithFallback(ctx, wf.Request, wf.chain...)
		case !at.IsZero() && rt.queue:
			rec, err = h.queued.SendAt(ctx, req, at)
		case h.async && rt.queue && preferAsync(r.Header):
			rec, err = h.queued.Enqueue(ctx, req)
			if err == nil || rec != nil && rec.Status == record.StateUnknown {
				x.Header().Set("Preference-Applied", "respond-async")
			}
		default:
			rec, err = h.n.Send(ctx, req)
		}
		finish(x, r, rec, err)
	}
}

func (h *Handler) balance(x *exchange, r *http.Request, acct *notify.Account) {
	b, err := h.n.Balance(r.Context(), acct.ID)
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	if b.Account == "" {
		b.Account = acct.ID
	}
	if b.Name == "" {
		b.Name = acct.Name
	}
	x.out = appendBalance(x.out[:0], b)
	writeJSON(x, http.StatusOK, x.out)
}

// Interface guards
var (
	_ http.Handler        = (*Handler)(nil)
	_ http.ResponseWriter = (*exchange)(nil)
)
