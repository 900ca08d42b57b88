// Package msg91test is a strict fake of MSG91's Send SMS (flow) API, for
// tests of package msg91 and of programs that use it, in the style of
// net/http/httptest: NewServer starts it on a loopback port and Close
// stops it.
//
// The fake checks each request the way MSG91 does, and more strictly
// than it needs to, so that a test notices a request MSG91 might read
// otherwise: POST to /api/v5/flow (or /api/v5/flow/), the authkey header,
// a JSON Content-Type, a body of exactly template_id (a template the fake
// knows and has approved), short_url ("0" or "1") and recipients, each
// with mobiles, a 12-digit Indian mobile number (91 and 10 digits
// starting 6-9), and every variable its template names (##name## in
// Template.Content), as a string of at most 30 characters, and no other.
// It answers as MSG91 does: {"type": "success", "message": request ID} on
// success, {"type": "error", "message", "code"} on error, with the HTTP
// status MSG91 gives that error (200 for some, as MSG91 does).
//
// It serves MSG91's balance API as strictly: GET /api/balance.php with
// the authkey query parameter (MissingAuthKey without it, AuthFailure for
// another key) and type 0 (the wallet), 1 or 4 (the promotional and
// transactional routes; BadRequest for any other), answering the wallet's
// balance in rupees as plain text, 1234.56 (SetBalance), whatever the type:
// sends do not change it.
//
// Failures can be injected for the next request, and the fake can be
// slowed (SetLatency):
//
//   - FailNext: MSG91 refuses the request, a send or a balance call,
//     with one of its errors (Kind);
//   - FailNextHTTP: a proxy in front of MSG91 answers an HTTP error with
//     its own HTML page, and MSG91 never sees the request;
//   - FailNextHTTPAfterAccept: MSG91 accepts the message, and the proxy
//     answers an HTTP error page instead of MSG91's answer;
//   - BreakNext: MSG91 accepts the message, and the connection drops after
//     the request was read, before the answer.
//
// The fake posts delivery reports to the receiver under test, over real
// HTTP and only when a test asks (Report), so that a test decides when
// they arrive: in the shape of MSG91's webhook v2 (one form POST whose
// data field holds the request's reports as JSON) or v3 (one JSON POST
// per number), as Config.ReportVersion says.
//
// A Server is safe for concurrent use. It is for tests only.
package msg91test

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// Kind is an error MSG91 answers a send with.
type Kind int

// The errors the fake answers with, as MSG91 gives them: the HTTP status,
// the code (none for some) and the message.
const (
	// AuthFailure: 401, code 401, "AuthenticationFailure": a wrong auth
	// key.
	AuthFailure Kind = iota + 1
	// MissingAuthKey: 401, code 106, "Missing Authentication Key".
	MissingAuthKey
	// IPNotWhitelisted: 200, code 418: the auth key's IP security refused
	// the caller's address.
	IPNotWhitelisted
	// InsufficientBalance: 200, code 301.
	InsufficientBalance
	// InvalidMobile: 400, code 202.
	InvalidMobile
	// TemplateNotFound: 400, no code: the template ID is not the
	// account's.
	TemplateNotFound
	// TemplateNotApproved: 400, no code: the template is not approved
	// yet (or was rejected).
	TemplateNotApproved
	// InvalidVariables: 400, no code: a variable of the template is
	// missing, unknown or too long for DLT.
	InvalidVariables
	// Duplicate: 200, code 311: the same request twice within 10
	// seconds.
	Duplicate
	// TooManyRequests: 429, no code.
	TooManyRequests
	// InternalError: 500, code 601: MSG91's own failure, answered with its
	// own body.
	InternalError
	// BadRequest: 400, no code: a body MSG91 cannot read (not JSON, an
	// unknown parameter, a bad short_url, no recipients).
	BadRequest
)

// Status returns the HTTP status MSG91 answers the error with.
func (k Kind) Status() int {
	switch k {
	case AuthFailure, MissingAuthKey:
		return http.StatusUnauthorized
	case IPNotWhitelisted, InsufficientBalance, Duplicate:
		return http.StatusOK
	case TooManyRequests:
		return http.StatusTooManyRequests
	case InternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// Code returns MSG91's code for the error, "" when it gives none.
func (k Kind) Code() string {
	switch k {
	case AuthFailure:
		return "401"
	case MissingAuthKey:
		return "106"
	case IPNotWhitelisted:
		return "418"
	case InsufficientBalance:
		return "301"
	case InvalidMobile:
		return "202"
	case Duplicate:
		return "311"
	case InternalError:
		return "601"
	}
	return ""
}

// Message returns MSG91's message for the error.
func (k Kind) Message() string {
	switch k {
	case AuthFailure:
		return "AuthenticationFailure"
	case MissingAuthKey:
		return "Missing Authentication Key"
	case IPNotWhitelisted:
		return "IP not whitelisted"
	case InsufficientBalance:
		return "Insufficient balance"
	case InvalidMobile:
		return "Invalid mobile number"
	case TemplateNotFound:
		return "Template ID is invalid"
	case TemplateNotApproved:
		return "Template is not approved"
	case InvalidVariables:
		return "Template variables do not match"
	case Duplicate:
		return "Request discarded because same request was generated twice within 10 seconds"
	case TooManyRequests:
		return "Too many requests"
	case InternalError:
		return "Internal error. Please contact support for details"
	case BadRequest:
		return "Bad request"
	}
	return "Unknown error"
}

// Template is an SMS template in the fake's MSG91 panel.
type Template struct {
	// ID is the MSG91 template ID, which requests name it by.
	ID string
	// DLTTemplateID is the template's ID on the DLT platform, mapped in
	// MSG91; Sender its DLT header. Both are recorded in Sent.
	DLTTemplateID string
	Sender        string
	// Content is the template's text with its variables as ##name##
	// (##VAR1##, ##OTP##): a request must give each of them.
	Content string
	// Pending marks a template not approved (yet): sends are refused
	// with TemplateNotApproved.
	Pending bool
}

// Version is the shape of the delivery reports the fake posts, as MSG91's
// webhook versions are chosen in its panel.
type Version string

// The webhook versions.
const (
	// V2 posts one form (application/x-www-form-urlencoded) per report,
	// whose data field holds [{"senderId", "requestId", "report": [{"date",
	// "number", "status", "desc", "failedReason", ...}], "userId",
	// "campaignName"}] as JSON: every number of the request in one POST.
	V2 Version = "v2"
	// V3 posts one JSON object per number: {"date", "number", "senderId",
	// "requestId", "status", "desc", ...}.
	V3 Version = "v3"
)

// Config configures a Server.
type Config struct {
	// AuthKey is the only auth key the fake accepts. Required.
	AuthKey string
	// Templates are the account's templates. Default none.
	Templates []Template
	// ReportURL is the webhook URL of the delivery-report receiver under
	// test, its token included (http://127.0.0.1:port/webhooks/msg91/
	// <token>): where Report posts. It must be an http(s) URL. Default
	// none: Report fails.
	ReportURL string
	// ReportVersion is the shape of the reports: V2 or V3. Default V2.
	ReportVersion Version
	// Now is the fake's clock, for the times in its reports. Default
	// time.Now.
	Now func() time.Time
	// Balance is the wallet's balance in paise, which the balance API
	// answers. Default 0.
	Balance int64
}

// Recipient is one recipient of a request the fake accepted.
type Recipient struct {
	// Mobile is the number as sent, 919876543210.
	Mobile string
	// Vars are the template's variables as sent.
	Vars map[string]string
	// Text is the template's content with the variables filled in: the
	// SMS.
	Text string
}

// Sent is a request the fake accepted.
type Sent struct {
	RequestID string
	// TemplateID is the MSG91 template ID; DLTTemplateID and Sender are
	// the template's.
	TemplateID    string
	DLTTemplateID string
	Sender        string
	ShortURL      bool
	Recipients    []Recipient
}

// Server is the fake MSG91.
type Server struct {
	// URL is the base URL of the fake, for msg91.Config.BaseURL.
	URL string
	// Faults are the network's faults of the next request, and latency:
	// FailNextHTTP (MSG91 does not see the request, though Requests
	// counts it), FailNextHTTPAfterAccept and BreakNext (MSG91 accepts
	// the next valid request, once it has read it, and its answer is
	// lost), and SetLatency (the fake waits, after reading a request,
	// before answering it).
	vendorhttptest.Faults
	// Loopback is the fake's server: Close stops it, as
	// httptest.Server.Close does, and Client returns an HTTP client for
	// it.
	vendorhttptest.Loopback

	key       string
	templates map[string]Template
	reportURL string
	version   Version
	now       func() time.Time

	sent     vendorhttptest.Log[Sent]
	accepted atomic.Int64 // recipients
	requests atomic.Int64
	failNext atomic.Int64 // a Kind
	ids      vendorhttptest.IDs
	balance  atomic.Int64 // paise
}

// NewServer starts a fake MSG91 on a loopback port. It panics when
// cfg.AuthKey is empty, ReportURL is not an http(s) URL or ReportVersion
// is not V2 or V3, as httptest.NewServer panics when it cannot listen.
func NewServer(cfg Config) *Server {
	if cfg.AuthKey == "" {
		panic("msg91test: Config.AuthKey is required")
	}
	if cfg.ReportURL != "" && !vendorhttptest.IsHTTPURL(cfg.ReportURL) {
		panic("msg91test: Config.ReportURL must be an http(s) URL")
	}
	switch cfg.ReportVersion {
	case "":
		cfg.ReportVersion = V2
	case V2, V3:
	default:
		panic("msg91test: Config.ReportVersion must be V2 or V3")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{
		key:       cfg.AuthKey,
		templates: make(map[string]Template, len(cfg.Templates)),
		reportURL: cfg.ReportURL,
		version:   cfg.ReportVersion,
		now:       cfg.Now,
	}
	for _, t := range cfg.Templates {
		s.templates[t.ID] = t
	}
	s.balance.Store(cfg.Balance)
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v5/flow", s.flow)
	mux.HandleFunc("/api/v5/flow/", s.flow)
	mux.HandleFunc(BalancePath, s.wallet)
	s.URL = s.Serve(mux)
	return s
}

// Sent returns the requests accepted so far, oldest first.
func (s *Server) Sent() []Sent { return s.sent.All() }

// Accepted returns how many messages (recipients of accepted requests)
// the fake has accepted.
func (s *Server) Accepted() int { return int(s.accepted.Load()) }

// Requests returns how many requests reached the fake's endpoint,
// accepted or not.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// FailNext makes MSG91 refuse the next request that passes the auth
// key check with k, before reading it: nothing is accepted. FailNext(0)
// cancels it.
func (s *Server) FailNext(k Kind) { s.failNext.Store(int64(k)) }

// BalancePath is the path of MSG91's balance API.
const BalancePath = "/api/balance.php"

// SetBalance sets the wallet's balance, in paise, that the balance API
// answers.
func (s *Server) SetBalance(paise int64) { s.balance.Store(paise) }

// Balance returns the wallet's balance in paise.
func (s *Server) Balance() int64 { return s.balance.Load() }

// admit checks a request's auth key and takes FailNext's error: it
// answers the refusal, if any, and reports whether the request goes on.
func (s *Server) admit(w http.ResponseWriter, key string) bool {
	k := Kind(0)
	switch {
	case key == "":
		k = MissingAuthKey
	case key != s.key:
		k = AuthFailure
	default:
		k = Kind(s.failNext.Swap(0))
	}
	if k != 0 {
		fail(w, refusal{kind: k})
	}
	return k == 0
}

// wallet answers the balance API: the wallet's balance as plain text,
// once the auth key and the type are checked.
func (s *Server) wallet(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.Wait(w, r) || s.Proxied(w) {
		return
	}
	q := r.URL.Query()
	if !s.admit(w, q.Get("authkey")) {
		return
	}
	switch q.Get("type") {
	case "0", "1", "4":
	default:
		fail(w, refusal{BadRequest, "type must be 0 (wallet), 1 or 4 (route)"})
		return
	}
	b := s.balance.Load()
	sign := ""
	if b < 0 {
		sign, b = "-", -b
	}
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	fmt.Fprintf(w, "%s%d.%02d", sign, b/100, b%100)
}

// The top-level parameters of a request: those the fake reads, and those
// MSG91 documents that it accepts and ignores.
var (
	params  = map[string]bool{"template_id": true, "short_url": true, "recipients": true}
	ignored = map[string]bool{"short_url_expiry": true, "realTimeResponse": true}
)

// varPattern is a variable of a template's content.
var varPattern = regexp.MustCompile(`##([A-Za-z0-9_]+)##`)

// maxVarLen is the DLT limit on a variable's value, in characters.
const maxVarLen = 30

// refusal is an error answer: a Kind and, when it says more than the
// Kind's message, its own text.
type refusal struct {
	kind Kind
	msg  string
}

func (s *Server) flow(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	sent, bad := s.read(r)
	if !s.Wait(w, r) {
		return
	}
	s.requests.Add(1)
	if s.Proxied(w) {
		return
	}
	if !s.admit(w, r.Header.Get("authkey")) {
		return
	}
	if bad != nil {
		fail(w, *bad)
		return
	}
	sent.RequestID = s.ids.New("", 12) // MSG91's style: 24 lower-case hex digits
	s.sent.Add(sent)
	s.accepted.Add(int64(len(sent.Recipients)))
	if !s.AfterAccept(w) {
		vendorhttptest.ReplyJSON(w, http.StatusOK, map[string]string{"type": "success", "message": sent.RequestID})
	}
}

// read reads and checks a request, in MSG91's order: the request it would
// accept, or its refusal.
func (s *Server) read(r *http.Request) (Sent, *refusal) {
	var sent Sent
	raw, bad := readParams(r)
	if bad != nil {
		return sent, bad
	}
	t, bad := s.readTemplate(raw)
	if bad != nil {
		return sent, bad
	}
	sent.TemplateID, sent.DLTTemplateID, sent.Sender = t.ID, t.DLTTemplateID, t.Sender
	if v, ok := raw["short_url"]; ok {
		switch strings.Trim(string(v), `"`) {
		case "0":
		case "1":
			sent.ShortURL = true
		default:
			return sent, &refusal{BadRequest, `short_url must be "0" or "1"`}
		}
	}
	var recipients []map[string]any
	if json.Unmarshal(raw["recipients"], &recipients) != nil || len(recipients) == 0 {
		return sent, &refusal{BadRequest, "recipients must be a non-empty array of objects"}
	}
	vars := templateVars(t.Content)
	for _, rc := range recipients {
		got, bad := readRecipient(rc, t.Content, vars)
		if bad != nil {
			return sent, bad
		}
		sent.Recipients = append(sent.Recipients, got)
	}
	return sent, nil
}

// readParams reads the body of a request as MSG91 does: a JSON object
// (of at most 1 MiB) of known parameters, which it returns undecoded.
func readParams(r *http.Request) (map[string]json.RawMessage, *refusal) {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "application/json" {
		return nil, &refusal{BadRequest, "Content-Type must be application/json"}
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
	var raw map[string]json.RawMessage
	d := json.NewDecoder(r.Body)
	if err := d.Decode(&raw); err != nil || raw == nil || d.More() {
		return nil, &refusal{BadRequest, "The body is not a JSON object"}
	}
	for k := range raw {
		if !params[k] && !ignored[k] {
			return nil, &refusal{BadRequest, "Unknown parameter " + k}
		}
	}
	return raw, nil
}

// readTemplate returns the approved template that the request's template_id
// names, or MSG91's refusal of it.
func (s *Server) readTemplate(raw map[string]json.RawMessage) (Template, *refusal) {
	var id string
	if json.Unmarshal(raw["template_id"], &id) != nil || id == "" {
		return Template{}, &refusal{TemplateNotFound, "template_id is missing"}
	}
	t, ok := s.templates[id]
	if !ok {
		return Template{}, &refusal{kind: TemplateNotFound}
	}
	if t.Pending {
		return Template{}, &refusal{kind: TemplateNotApproved}
	}
	return t, nil
}

// readRecipient checks one object of recipients: a mobile number and a
// string of at most maxVarLen characters for each of vars, the variables
// of the template content, and nothing else. It returns the recipient
// with content filled in, or the refusal.
func readRecipient(rc map[string]any, content string, vars map[string]bool) (Recipient, *refusal) {
	var got Recipient
	m, _ := rc["mobiles"].(string)
	if !mobile.MatchString(m) {
		return got, &refusal{kind: InvalidMobile}
	}
	got.Mobile, got.Vars = m, make(map[string]string, len(rc)-1)
	for k, v := range rc {
		if k == "mobiles" {
			continue
		}
		if !vars[k] {
			return got, &refusal{InvalidVariables, "Unknown variable " + k}
		}
		str, isString := v.(string)
		if !isString {
			return got, &refusal{InvalidVariables, "Variable " + k + " must be a string"}
		}
		if utf8.RuneCountInString(str) > maxVarLen {
			return got, &refusal{InvalidVariables, fmt.Sprintf("Variable %s is over %d characters", k, maxVarLen)}
		}
		got.Vars[k] = str
	}
	for name := range vars {
		if _, ok := got.Vars[name]; !ok {
			return got, &refusal{InvalidVariables, "Variable " + name + " is missing"}
		}
	}
	got.Text = varPattern.ReplaceAllStringFunc(content, func(v string) string {
		return got.Vars[strings.Trim(v, "#")]
	})
	return got, nil
}

// templateVars returns the variables of a template's content.
func templateVars(content string) map[string]bool {
	vars := make(map[string]bool)
	for _, m := range varPattern.FindAllStringSubmatch(content, -1) {
		vars[m[1]] = true
	}
	return vars
}

// mobile is an Indian mobile number as MSG91 takes it: 91 and 10 digits
// starting 6-9.
var mobile = regexp.MustCompile(`^91[6-9][0-9]{9}$`)

// fail answers a refusal as MSG91 does.
func fail(w http.ResponseWriter, f refusal) {
	body := map[string]string{"type": "error", "message": f.kind.Message()}
	if f.msg != "" {
		body["message"] = f.msg
	}
	if c := f.kind.Code(); c != "" {
		body["code"] = c
	}
	vendorhttptest.ReplyJSON(w, f.kind.Status(), body)
}
