package adminapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/errtext"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/wallet"
)

// BasePath is the path under which the Handler serves.
const BasePath = "/admin/v1"

// MinKeyLen is the shortest admin key New accepts, in bytes.
const MinKeyLen = 32

// MaxBodyBytes bounds a request body; a longer one is 413
// request_too_large.
const MaxBodyBytes = 64 << 10

// ChangeTimeout bounds the store calls of one request. They run detached
// from the client's connection: a client that hangs up mid-change does
// not cut the change short, so it is made or not as the store answers,
// and a retry (a top-up with the same reference) settles which.
const ChangeTimeout = 30 * time.Second

// Pagination: ?limit= defaults to DefaultLimit and may be 1 to MaxLimit.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// TopUpRefPrefix is put before a top-up's reference to make the wallet
// ref of its credit: a reference cannot collide with the Notifier's own
// refs (message IDs, "refund:..." and "adjust:...").
const TopUpRefPrefix = "topup:"

// Store is what the Handler needs of the stores: memstore.Admin and
// *pgstore.Store implement it. See store.Admin for the contract.
type Store = store.Admin

// Option configures a Handler in New.
type Option func(*Handler) error

// WithLogger sets the logger of the Handler: every change at Info, with
// the request ID, the action and the account (never an API key), and
// store failures at Error. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) error {
		if l == nil {
			return errors.New("adminapi: nil logger")
		}
		h.log = l
		return nil
	}
}

// WithCurrencies names the currencies accounts may be created in, by
// ISO 4217 code ("INR", "USD"): those the server has prices in, so that
// an account it could not price is refused when it is created (400 naming
// "currency" and these codes) rather than at its first send. Each must be
// a currency wallet.CurrencyOf knows. Default: any ISO 4217 currency.
func WithCurrencies(codes ...string) Option {
	return func(h *Handler) error {
		for _, c := range codes {
			if _, err := wallet.CurrencyOf(c); err != nil {
				return fmt.Errorf("adminapi: WithCurrencies: %w", err)
			}
		}
		h.currencies = slices.Clone(codes)
		return nil
	}
}

// Handler serves the admin API under BasePath. It is safe for concurrent
// use; its state is its Store's. Make one with New.
type Handler struct {
	store  Store
	keySum [sha256.Size]byte
	log    *slog.Logger
	mux    *http.ServeMux
	// suppressions serves the suppression endpoints (suppress.go); nil:
	// not routed.
	suppressions store.Suppressions
	recipients   Recipients // the canonical form of each channel's recipients (WithSuppressions)
	// preferences serves the preference endpoints (preference.go), its
	// recipients put in canonical form by preferenceRecipients
	// (WithPreferences); nil: not routed.
	preferences          store.Preferences
	preferenceRecipients Recipients
	currencies           []string // WithCurrencies; nil: any
}

// New returns a Handler over store that admits requests carrying
// "Authorization: Bearer <key>". A nil store, or a key shorter than
// MinKeyLen bytes, is an InvalidArgument error.
func New(store Store, key string, opts ...Option) (*Handler, error) {
	if store == nil {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "adminapi: nil store")
	}
	if len(key) < MinKeyLen {
		return nil, notify.Errorf(notify.CodeInvalidArgument, "adminapi: the admin key must have at least %d bytes", MinKeyLen)
	}
	h := &Handler{store: store, keySum: sha256.Sum256([]byte(key)), log: slog.Default()}
	for _, o := range opts {
		if err := o(h); err != nil {
			return nil, notify.WithCode(notify.CodeInvalidArgument, err)
		}
	}
	h.routes()
	return h, nil
}

// route is one path and the handlers of its methods.
type route struct {
	path    string
	methods map[string]func(*request)
}

func (h *Handler) routes() {
	const acct = BasePath + "/accounts/{id}"
	table := []route{
		{BasePath + "/accounts", map[string]func(*request){"GET": (*request).listAccounts, "POST": (*request).createAccount}},
		{acct, map[string]func(*request){"GET": (*request).getAccount}},
		{acct + "/disable", map[string]func(*request){"POST": (*request).disable}},
		{acct + "/enable", map[string]func(*request){"POST": (*request).enable}},
		{acct + "/rotate-key", map[string]func(*request){"POST": (*request).rotateKey}},
		{acct + "/countries", map[string]func(*request){"PUT": (*request).putCountries}},
		{acct + "/locale", map[string]func(*request){"PUT": (*request).putLocale}},
		{acct + "/topups", map[string]func(*request){"POST": (*request).topUp}},
		{acct + "/ledger", map[string]func(*request){"GET": (*request).ledger}},
		{acct + "/messages", map[string]func(*request){"GET": (*request).messages}},
		{acct + "/dlt-templates", map[string]func(*request){"GET": (*request).listDLT}},
		{acct + "/dlt-templates/{template}", map[string]func(*request){"PUT": (*request).putDLT, "DELETE": (*request).deleteDLT}},
		{acct + "/templates", map[string]func(*request){"GET": (*request).listTemplates}},
		{acct + "/templates/{slug}", map[string]func(*request){"PUT": (*request).putTemplate, "DELETE": (*request).deleteTemplate}},
	}
	table = append(table, h.suppressionRoutes()...)
	table = append(table, h.preferenceRoutes()...)
	h.mux = http.NewServeMux()
	for _, rt := range table {
		var allow []string
		for m, fn := range rt.methods {
			allow = append(allow, m)
			h.mux.HandleFunc(m+" "+rt.path, func(w http.ResponseWriter, r *http.Request) {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), ChangeTimeout)
				defer cancel()
				q := &request{h: h, w: w, r: r, id: requestID(w), c: ctx}
				if q.pathKeys() {
					fn(q)
				}
			})
		}
		allowed := strings.Join(slices.Sorted(slices.Values(allow)), ", ")
		h.mux.HandleFunc(rt.path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			writeError(w, httpapi.CodeMethodNotAllowed, r.Method+" is not allowed here; allowed: "+allowed, nil)
		})
	}
	h.mux.HandleFunc(BasePath+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notify.CodeNotFound, "no such admin endpoint", nil)
	})
}

// requestID returns the request's ID, set by ServeHTTP.
func requestID(w http.ResponseWriter) string { return w.Header().Get("X-Request-ID") }

// ServeHTTP answers one admin request. It gives each request a random ID,
// returned as X-Request-ID and logged with every change; checks the admin
// key (401 unauthenticated when it is missing or wrong) before anything
// else; and answers paths outside BasePath, or unknown below it, with 404
// not_found and a known path with another method with 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Request-ID", newRequestID())
	w.Header().Set("Cache-Control", "no-store")
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="admin"`)
		msg := "missing or invalid admin key: send Authorization: Bearer <NOTIFY_ADMIN_KEY>"
		writeError(w, notify.CodeUnauthenticated, msg, nil)
		return
	}
	if r.URL.Path != BasePath && !strings.HasPrefix(r.URL.Path, BasePath+"/") {
		writeError(w, notify.CodeNotFound, "no such admin endpoint", nil)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// authorized compares the request's bearer key with the admin key in
// constant time, over their SHA-256 digests so that neither the length
// nor the content of the key shows in the timing.
func (h *Handler) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		key = ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(key)))
	return subtle.ConstantTimeCompare(sum[:], h.keySum[:]) == 1 && key != ""
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// newAPIKey returns a fresh API key: "nk_" and 32 base32 characters (160
// bits).
func newAPIKey() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "nk_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// request is one request being answered.
type request struct {
	h  *Handler
	w  http.ResponseWriter
	r  *http.Request
	id string
	c  context.Context
}

// ctx is the context of the request's store calls: detached from the
// client's connection, so that a client that hangs up mid-change never
// cuts a store call short (which would leave the change made or not, the
// client not knowing which), and bounded by ChangeTimeout.
func (q *request) ctx() context.Context { return q.c }

// changed logs a change at Info.
func (q *request) changed(action, account string, attrs ...any) {
	q.h.log.LogAttrs(q.ctx(), slog.LevelInfo, "admin change",
		append([]slog.Attr{slog.String("request_id", q.id), slog.String("action", action),
			slog.String("account", account)}, argsToAttrs(attrs)...)...)
}

func argsToAttrs(args []any) []slog.Attr {
	var out []slog.Attr
	for i := 0; i+1 < len(args); i += 2 {
		out = append(out, slog.Any(args[i].(string), args[i+1]))
	}
	return out
}

// fail answers err. An error the admin is to act on (errtext.Shown, the
// public API's rule: its code says the request is at fault, and it is
// not a store's own words; or a store's record.FieldErrors, the fields
// and rules alone) is answered with message, what the admin should know,
// or for InvalidArgument its fields. Any other, a store failing, is
// answered with a plain sentence and the request ID, and logged in full
// under that ID: a store's words name its package, hosts, ports and
// database users.
func (q *request) fail(err error, message string) {
	code := notify.CodeOf(err)
	if errtext.Shown(err) || storeFieldsOnly(err) {
		switch code {
		case notify.CodeInvalidArgument:
			if message == "" {
				message = fieldsMessage(err)
			}
			writeError(q.w, code, message, err)
			return
		case notify.CodeNotFound, notify.CodeConflict, notify.CodePermissionDenied:
			if message == "" {
				message = string(code)
			}
			writeError(q.w, code, message, nil)
			return
		}
	}
	q.h.log.LogAttrs(q.ctx(), slog.LevelError, "admin request failed", slog.String("request_id", q.id),
		slog.String("method", q.r.Method), slog.String("path", q.r.URL.Path), slog.Any("error", err))
	code, message = plainAnswer(code)
	writeError(q.w, code, message+" (request "+q.id+")", nil)
}

// plainAnswer is the code and sentence of an error not answered in its
// own words: the codes the admin API answers keep theirs, any other is
// internal.
func plainAnswer(code notify.Code) (notify.Code, string) {
	switch code {
	case notify.CodeUnavailable:
		return code, "the store is unavailable; try again later"
	case notify.CodeDeadlineExceeded:
		return code, "the store did not answer in time; try again later"
	case notify.CodeCanceled:
		return code, "the request was canceled"
	case notify.CodeInvalidArgument:
		return code, "the store refused a value of the request"
	case notify.CodeNotFound, notify.CodeConflict, notify.CodePermissionDenied:
		return code, string(code)
	}
	return notify.CodeInternal, "internal error"
}

// notFound answers 404 for the account.
func (q *request) noAccount(account string) {
	writeError(q.w, notify.CodeNotFound, fmt.Sprintf("no account %q", account), nil)
}

// decode reads the JSON body into v: application/json only (415), at most
// MaxBodyBytes (413), one object with no unknown fields and nothing after
// it (400 naming the field).
func (q *request) decode(v any) bool {
	mt, _, err := mime.ParseMediaType(q.r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(q.w, httpapi.CodeUnsupportedMediaType, "the body must be JSON, sent with Content-Type: application/json", nil)
		return false
	}
	body := http.MaxBytesReader(q.w, q.r.Body, MaxBodyBytes)
	dec := jsonDecoder(body)
	err = dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("trailing data after the JSON object")
		}
	}
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(q.w, httpapi.CodeRequestTooLarge, fmt.Sprintf("the body is over %d bytes", MaxBodyBytes), nil)
		return false
	}
	fe := decodeError(err)
	writeError(q.w, notify.CodeInvalidArgument, fieldsMessage(fe), fe)
	return false
}
