// Package smsgatewaytest is a fake of the Fast2SMS-style bulk SMS API, for
// tests of package smsgateway and of programs that use it, in the style of
// net/http/httptest: NewServer starts it on a loopback port and Close stops
// it.
//
// The fake checks each request the way the vendor does (authorization
// header, route, numbers as comma-separated 10-digit mobile numbers, the
// fields each route needs, the language of the text, the sender and
// template of DLT messages, the wallet) and answers with the vendor's
// bodies: {"return": true, "request_id", "message": ["SMS sent
// successfully."]} on success, {"return": false, "status_code", "message"}
// with HTTP 400 (401 for a bad key) on error. It implements the routes q,
// otp, dlt (a template by its DLT-manager Message ID, Template.MessageID,
// and its values joined by '|') and dlt_manual of POST /dev/bulkV2 and the wallet call, POST
// /dev/wallet (or GET with ?authorization=). Each accepted message is
// charged to the fake's wallet: Config.PartPrice per segment and number.
//
// Failures can be injected for the next request and the fake can be
// slowed (SetLatency):
//
//   - FailNext: the vendor refuses the message with one of its error codes;
//   - RefuseNext: the vendor refuses the next n messages, or all of them,
//     with its own error body on an HTTP status of the test's choosing, as
//     it does when it sheds load ({"return": false, "status_code": 503,
//     "message": "busy"} on an HTTP 503);
//   - FailNextHTTP: a proxy in front of the vendor answers an HTTP error
//     with its own HTML page, and the vendor never sees the request;
//   - FailNextHTTPAfterAccept: the vendor accepts (and charges) the message,
//     and the proxy answers an HTTP error page instead of the vendor's
//     answer, as one does when the vendor is slow (504) or its answer
//     breaks (502);
//   - BreakNext: the vendor accepts the message and the connection drops
//     before the answer.
//
// The fake posts delivery reports (DLRs) to the receiver under test, over
// real HTTP and only when a test asks, so that a test decides when they
// arrive: ReportNumber posts one now; with Config.AutoDLR every accepted
// send queues one per number, which FlushDLRs posts. Both post to
// Config.DLRURL, in the shape of the vendor's Standard webhook (see
// ReportNumber). Report and PostDLR post to any URL, as a JSON array in a
// generic Indian DLR shape (number, status, error_code, description,
// delivered_at), which smsgateway.Webhook reads too.
//
// A Server is safe for concurrent use. It is for tests only.
package smsgatewaytest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/template/dlt"
)

// The vendor's error codes and messages that the fake answers with.
const (
	SenderMissing     = 401
	MessageMissing    = 402
	RouteMissing      = 403
	LanguageMissing   = 404
	NumbersMissing    = 405
	InvalidSender     = 406
	InvalidRoute      = 408
	InvalidLanguage   = 410
	InvalidNumbers    = 411
	InvalidKey        = 412
	DisabledKey       = 413
	LowBalance        = 416
	UseUnicode        = 417
	InvalidMessageID  = 424
	InvalidTemplate   = 425
	Spamming          = 995
	NumericOTPOnly    = 997
	templateBlacklist = 500
)

// Message returns the vendor's message for one of its error codes, or ""
// for a code it does not have.
func Message(code int) string {
	switch code {
	case SenderMissing:
		return "Sender ID Missing"
	case MessageMissing:
		return "Message Text Missing"
	case RouteMissing:
		return "Route Missing"
	case LanguageMissing:
		return "Language Missing"
	case NumbersMissing:
		return "Numbers Missing"
	case InvalidSender:
		return "Invalid Sender ID"
	case 407:
		return "Invalid words used in message"
	case InvalidRoute:
		return "Invalid Route"
	case 409:
		return "Invalid Route Authentication"
	case InvalidLanguage:
		return "Invalid Language"
	case InvalidNumbers:
		return "Invalid Numbers"
	case InvalidKey:
		return "Invalid Authentication, Check Authorization Key"
	case DisabledKey:
		return "Invalid Authentication, Authorization Key Disabled"
	case 414:
		return "IP is blacklisted from Dev API section"
	case 415:
		return "Account Disabled"
	case LowBalance:
		return "You don't have sufficient wallet balance"
	case UseUnicode:
		return "Use english letters or change language to unicode"
	case InvalidMessageID:
		return "Invalid Message ID"
	case InvalidTemplate:
		return "Invalid Template"
	case 426:
		return "Invalid link used in variables"
	case templateBlacklist:
		return "Template/Sender id blacklisted at DLT"
	case 990:
		return "You're hitting old API. Refer updated documentation"
	case Spamming:
		return "Spamming detected (sending multiple SMS to same number is not allowed)"
	case 996:
		return "Before using OTP SMS API, complete KYC."
	case NumericOTPOnly:
		return "Only numeric variable_values is allowed in OTP route"
	case 998:
		return "Use DLT or Quick SMS route for sending Bulk SMS"
	case 999:
		return "Complete single transaction of minimum 100 INR in Fast2SMS wallet before using API"
	}
	return ""
}

// Template is a DLT template registered with the fake vendor.
type Template struct {
	ID       string
	EntityID string
	// MessageID is the template's ID in the vendor's DLT manager, which
	// the dlt route names it by. Default "": the template can be sent on
	// dlt_manual only.
	MessageID string
	// Sender is the 6-letter header the template is approved for.
	Sender string
	// Content is the approved text with {#var#} slots.
	Content string
}

// Config configures a Server.
type Config struct {
	// APIKey is the only authorization key the fake accepts. Required.
	APIKey string
	// Balance is the opening wallet balance in paise. Default 100000
	// (₹1,000).
	Balance int64
	// PartPrice is what one SMS segment to one number costs, in paise.
	// Default 25.
	PartPrice int64
	// Templates are the DLT templates registered with the vendor; their
	// senders are the approved DLT senders. Default none.
	Templates []Template
	// DLRURL is the callback URL of the delivery-report receiver under
	// test, its token included (http://127.0.0.1:port/webhooks/smsgateway/
	// <token>): where ReportNumber and FlushDLRs post. It must be an
	// http(s) URL. Default none: ReportNumber fails.
	DLRURL string
	// AutoDLR, when set, is the status (delivered, undelivered, ...) of the
	// report the fake queues for each number of each send it accepts,
	// including one whose answer is then lost (FailNextHTTPAfterAccept,
	// BreakNext), as the vendor reports every message it took. The queue
	// is posted only by FlushDLRs: the vendor reports after its answer,
	// and a report that reached the receiver while the message was still
	// being sent would be answered 503. It needs DLRURL. Default "":
	// nothing is queued.
	AutoDLR string
	// Now is the fake's clock, for the times in its reports. Default
	// time.Now.
	Now func() time.Time
}

// Sent is a message the fake accepted.
type Sent struct {
	RequestID string
	// Route is q, otp, dlt or dlt_manual. On dlt, Message is the text the
	// template and values make and TemplateID the template's DLT ID.
	Route   string
	Numbers []string
	// Message is the text (the code on the otp route is in
	// VariablesValues).
	Message         string
	Language        string
	VariablesValues string
	SenderID        string
	TemplateID      string
	EntityID        string
	Flash           bool
	// Parts is the segments of one message; Cost is what was charged for
	// all numbers, in paise.
	Parts int
	Cost  int64
}

// Server is the fake vendor.
//
// Its network faults are vendorhttptest.Faults': FailNextHTTP's proxy page
// answers the next send request before the key is checked (the wallet
// call does not take it), and FailNextHTTPAfterAccept and BreakNext fire
// once the next valid send is accepted and charged. SetLatency delays
// every request, sends and wallet calls, once its body is read.
//
// Its URL is the base URL of the fake, for smsgateway.Config.BaseURL, and
// Close (of its Loopback) stops it.
type Server struct {
	// URL is the base URL of the fake, for smsgateway.Config.BaseURL.
	URL string
	// Loopback is the server the fake answers on: Close and Client.
	vendorhttptest.Loopback
	// Faults are the network's faults of the next request, and latency.
	vendorhttptest.Faults

	key       string
	price     int64
	templates map[string]Template
	// byMessageID holds the templates with a MessageID, by it.
	byMessageID map[string]Template
	senders     map[string]bool

	mu       sync.Mutex
	balance  int64
	sent     []Sent
	requests int
	failCode int
	// refuseN sends are refused with the vendor's own body (RefuseNext);
	// negative: every one.
	refuseN      int
	refuseStatus int
	refuseCode   int
	refuseMsg    string
	ids          map[string]bool

	dlrURL   string
	autoDLR  string
	now      func() time.Time
	pending  vendorhttptest.Queue[vendorDLR] // queued by AutoDLR
	attempts map[string]int                  // posts per request ID and number
}

// NewServer starts a fake vendor on a loopback port. It panics when
// cfg.APIKey is empty, DLRURL is not an http(s) URL, or AutoDLR is set
// without DLRURL, as httptest.NewServer panics when it cannot listen.
func NewServer(cfg Config) *Server {
	if cfg.APIKey == "" {
		panic("smsgatewaytest: Config.APIKey is required")
	}
	if cfg.DLRURL != "" && !vendorhttptest.IsHTTPURL(cfg.DLRURL) {
		panic("smsgatewaytest: Config.DLRURL must be an http(s) URL")
	}
	if cfg.AutoDLR != "" && cfg.DLRURL == "" {
		panic("smsgatewaytest: Config.AutoDLR needs Config.DLRURL")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Balance = cmp.Or(cfg.Balance, 100000)
	cfg.PartPrice = cmp.Or(cfg.PartPrice, 25)
	s := &Server{
		key: cfg.APIKey, price: cfg.PartPrice, balance: cfg.Balance,
		dlrURL: cfg.DLRURL, autoDLR: cfg.AutoDLR, now: cfg.Now,
		templates:   make(map[string]Template, len(cfg.Templates)),
		byMessageID: make(map[string]Template),
		senders:     make(map[string]bool),
		ids:         make(map[string]bool),
		attempts:    make(map[string]int),
	}
	for _, t := range cfg.Templates {
		s.templates[t.ID] = t
		if t.MessageID != "" {
			s.byMessageID[t.MessageID] = t
		}
		s.senders[t.Sender] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/dev/bulkV2", s.bulk)
	mux.HandleFunc("/dev/wallet", s.wallet)
	s.URL = s.Serve(mux)
	return s
}

// Sent returns the messages accepted so far, oldest first.
func (s *Server) Sent() []Sent {
	return vendorhttptest.Locked(&s.mu, func() []Sent { return append([]Sent(nil), s.sent...) })
}

// Accepted returns how many messages the fake has accepted.
func (s *Server) Accepted() int {
	return vendorhttptest.Locked(&s.mu, func() int { return len(s.sent) })
}

// Requests returns how many send requests reached the fake, accepted or
// not.
func (s *Server) Requests() int {
	return vendorhttptest.Locked(&s.mu, func() int { return s.requests })
}

// Balance returns the wallet balance in paise.
func (s *Server) Balance() int64 {
	return vendorhttptest.Locked(&s.mu, func() int64 { return s.balance })
}

// SetBalance sets the wallet balance in paise.
func (s *Server) SetBalance(paise int64) {
	vendorhttptest.WithLock(&s.mu, func() { s.balance = paise })
}

// FailNext makes the next authorised send request fail with the vendor
// error code (HTTP 400 and the vendor's message for it).
func (s *Server) FailNext(code int) { vendorhttptest.WithLock(&s.mu, func() { s.failCode = code }) }

// RefuseNext makes the vendor refuse the next n authorised send requests
// (every one from now on when n is negative; RefuseNext(0, ...) ends it)
// with its own error body, {"return": false, "status_code": code,
// "message": message}, answered with HTTP status: the vendor formed that
// answer and took nothing, whatever the status. Use it for the answers the
// vendor gives outside its documented list, such as {"return": false,
// "status_code": 503, "message": "busy"} on an HTTP 503 when it sheds
// load. Nothing is accepted or charged, though Requests counts each.
func (s *Server) RefuseNext(n, status, code int, message string) {
	vendorhttptest.WithLock(&s.mu, func() { s.refuseN, s.refuseStatus, s.refuseCode, s.refuseMsg = n, status, code, message })
}

// request is a send request as the vendor reads it: every field a string,
// though clients send flash as a number too.
type request struct {
	Route, Numbers, Message, Language, VariablesValues string
	SenderID, TemplateID, EntityID, Flash              string
}

func (s *Server) bulk(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	in, decodeErr := decode(r)
	if !s.Wait(w, r) {
		return
	}
	s.mu.Lock()
	s.requests++
	failCode := s.failCode
	s.mu.Unlock()
	if s.Proxied(w) {
		return
	}
	if code := s.auth(r); code != 0 {
		fail(w, code)
		return
	}
	s.mu.Lock()
	refuse := s.refuseN != 0
	status, code, message := s.refuseStatus, s.refuseCode, s.refuseMsg
	if s.refuseN > 0 {
		s.refuseN--
	}
	s.mu.Unlock()
	if refuse {
		vendorhttptest.ReplyJSON(w, status, map[string]any{"return": false, "status_code": code, "message": message})
		return
	}
	if failCode != 0 {
		s.mu.Lock()
		s.failCode = 0
		s.mu.Unlock()
		fail(w, failCode)
		return
	}
	if decodeErr != nil {
		fail(w, RouteMissing) // the vendor cannot read a route from it either
		return
	}
	msg, code := s.check(in)
	if code != 0 {
		fail(w, code)
		return
	}
	s.mu.Lock()
	msg.Cost = int64(msg.Parts) * int64(len(msg.Numbers)) * s.price
	if msg.Cost > s.balance {
		s.mu.Unlock()
		fail(w, LowBalance)
		return
	}
	s.balance -= msg.Cost
	msg.RequestID = s.newID()
	s.sent = append(s.sent, msg)
	if s.autoDLR != "" {
		at := s.now()
		for _, n := range msg.Numbers {
			s.pending.Add(s.vendorDLR(msg, n, s.autoDLR, at))
		}
	}
	s.mu.Unlock()
	if s.AfterAccept(w) {
		return
	}
	vendorhttptest.ReplyJSON(w, http.StatusOK, map[string]any{
		"return":     true,
		"request_id": msg.RequestID,
		"message":    []string{"SMS sent successfully."},
	})
}

// check validates a send request as the vendor does, in its order, and
// returns the message it would send or its error code.
func (s *Server) check(in request) (Sent, int) {
	msg := Sent{Route: in.Route, Message: in.Message, Language: in.Language, VariablesValues: in.VariablesValues,
		SenderID: in.SenderID, TemplateID: in.TemplateID, EntityID: in.EntityID, Flash: in.Flash == "1"}
	switch in.Route {
	case "":
		return msg, RouteMissing
	case "q", "otp", "dlt_manual", "dlt":
	default:
		return msg, InvalidRoute
	}
	if in.Numbers == "" {
		return msg, NumbersMissing
	}
	for n := range strings.SplitSeq(in.Numbers, ",") {
		if !mobile(n) {
			return msg, InvalidNumbers
		}
		msg.Numbers = append(msg.Numbers, n)
	}
	var code int
	switch in.Route {
	case "q":
		code = checkQuick(in, &msg)
	case "otp":
		code = checkOTP(in, &msg)
	case "dlt_manual":
		code = s.checkDLTManual(in, &msg)
	case "dlt":
		code = s.checkDLT(in, &msg)
	}
	return msg, code
}

// checkQuick checks what the quick route ("q") needs: a message, and a
// language its text fits. It sets msg's parts, or returns the error code.
func checkQuick(in request, msg *Sent) int {
	if in.Message == "" {
		return MessageMissing
	}
	switch in.Language {
	case "":
		return LanguageMissing
	case "english", "unicode":
	default:
		return InvalidLanguage
	}
	enc, parts, _ := sms.Segments(in.Message)
	if in.Language == "english" && enc != sms.GSM7 {
		return UseUnicode
	}
	msg.Parts = parts
	return 0
}

// checkOTP checks what the OTP route needs: a numeric code in
// variables_values. It sets msg's parts, or returns the error code.
func checkOTP(in request, msg *Sent) int {
	if in.VariablesValues == "" {
		return MessageMissing
	}
	for _, c := range in.VariablesValues {
		if c < '0' || c > '9' {
			return NumericOTPOnly
		}
	}
	msg.Parts = 1
	return 0
}

// checkDLTManual checks what the manual DLT route needs: an approved
// sender, a registered template of that sender (and entity, when given)
// and a message that matches it. It sets msg's parts, or returns the
// error code.
func (s *Server) checkDLTManual(in request, msg *Sent) int {
	if code := s.checkDLTBasics(in); code != 0 {
		return code
	}
	t, ok := s.templates[in.TemplateID]
	if !ok || (in.EntityID != "" && in.EntityID != t.EntityID) {
		return InvalidTemplate
	}
	if t.Sender != in.SenderID {
		return InvalidSender
	}
	if _, err := dlt.Match(t.Content, in.Message); err != nil {
		return InvalidTemplate
	}
	_, msg.Parts, _ = sms.Segments(in.Message)
	return 0
}

// checkDLT checks what the vendor's own DLT route needs: message is the
// template's Message ID in its DLT manager, variables_values its {#var#}
// values joined by '|' (docs.fast2sms.com/reference/dlt-sms-single). It
// sets msg's template ID, text and parts to those of the filled
// template, or returns the error code.
func (s *Server) checkDLT(in request, msg *Sent) int {
	if code := s.checkDLTBasics(in); code != 0 {
		return code
	}
	t, ok := s.byMessageID[in.Message]
	if !ok {
		return InvalidMessageID
	}
	if t.Sender != in.SenderID {
		return InvalidSender
	}
	var values []string
	if strings.Contains(t.Content, dlt.Placeholder) || in.VariablesValues != "" {
		values = strings.Split(in.VariablesValues, "|")
	}
	text, err := dlt.Fill(t.Content, values)
	if err != nil {
		return InvalidTemplate
	}
	msg.TemplateID, msg.Message = t.ID, text
	_, msg.Parts, _ = sms.Segments(text)
	return 0
}

// checkDLTBasics checks what both DLT routes need first, in the vendor's
// order: an approved sender and a message.
func (s *Server) checkDLTBasics(in request) int {
	switch {
	case in.SenderID == "":
		return SenderMissing
	case !s.senders[in.SenderID]:
		return InvalidSender
	case in.Message == "":
		return MessageMissing
	}
	return 0
}

func (s *Server) wallet(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.Wait(w, r) {
		return
	}
	if code := s.auth(r); code != 0 {
		fail(w, code)
		return
	}
	s.mu.Lock()
	balance := s.balance
	s.mu.Unlock()
	vendorhttptest.ReplyJSON(w, http.StatusOK, map[string]any{
		"return":    true,
		"wallet":    fmt.Sprintf("%d.%02d", balance/100, balance%100),
		"sms_count": balance / s.price,
	})
}

// auth checks the key: in the authorization header, or for GET in the
// query.
func (s *Server) auth(r *http.Request) int {
	key := r.Header.Get("authorization")
	if key == "" && r.Method == http.MethodGet {
		key = r.URL.Query().Get("authorization")
	}
	if key != s.key {
		return InvalidKey
	}
	return 0
}

// decode reads a request from a JSON body, a form body or, for GET, the
// query, as the vendor accepts all three.
func decode(r *http.Request) (request, error) {
	var in request
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		return fromValues(q.Get), nil
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" {
		if err := r.ParseForm(); err != nil {
			return in, err
		}
		return fromValues(r.PostForm.Get), nil
	}
	var raw map[string]any
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		return in, err
	}
	get := func(k string) string {
		switch v := raw[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}
	return fromValues(get), nil
}

func fromValues(get func(string) string) request {
	return request{
		Route: get("route"), Numbers: get("numbers"), Message: get("message"), Language: get("language"),
		VariablesValues: get("variables_values"), SenderID: get("sender_id"), TemplateID: get("template_id"),
		EntityID: get("entity_id"), Flash: get("flash"),
	}
}

// mobile reports whether n is a 10-digit Indian mobile number.
func mobile(n string) bool {
	if len(n) != 10 || n[0] < '6' || n[0] > '9' {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// newID returns a fresh request ID in the vendor's style: 15 lower-case
// letters and digits. Called with mu held.
func (s *Server) newID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	for {
		b := make([]byte, 15)
		rand.Read(b)
		for i := range b {
			b[i] = alphabet[int(b[i])%len(alphabet)]
		}
		if id := string(b); !s.ids[id] {
			s.ids[id] = true
			return id
		}
	}
}

func fail(w http.ResponseWriter, code int) {
	status := http.StatusBadRequest
	if code == InvalidKey || code == DisabledKey {
		status = http.StatusUnauthorized
	}
	msg := Message(code)
	if msg == "" {
		msg = "Unknown error"
	}
	vendorhttptest.ReplyJSON(w, status, map[string]any{"return": false, "status_code": code, "message": msg})
}

// vendorDLR is a delivery report in the shape of the vendor's Standard
// webhook: one JSON object per number, posted as its own request.
type vendorDLR struct {
	RequestID string `json:"request_id"`
	Route     string `json:"route"`
	Channel   string `json:"channel"`
	Mobile    string `json:"mobile"`
	// Status is in lower case: delivered, failed, ...
	Status            string `json:"status"`
	StatusDescription string `json:"status_description"`
	FailureReason     string `json:"failure_reason,omitempty"`
	// DeliveryTime is "2006-01-02 15:04:05" in IST; DeliveryTimestamp is
	// the same in Unix seconds.
	DeliveryTime      string `json:"delivery_time"`
	DeliveryTimestamp int64  `json:"delivery_timestamp"`
	SMSCount          int    `json:"sms_count"`
	// AmountDebited is what the number cost, in rupees.
	AmountDebited string `json:"amount_debited"`
	PostAttempt   int    `json:"post_attempt"`
}

// failureReasons are the texts the fake gives the failures it reports.
var failureReasons = map[string]string{
	"undelivered": "Undelivered: the handset could not be reached",
	"dnd":         "Number is registered in DND",
	"expired":     "Validity expired before delivery",
	"rejected":    "Rejected by the operator",
	"blocked":     "Number is blocked",
}

// vendorDLR builds the report of m to number with status at at.
func (s *Server) vendorDLR(m Sent, number, status string, at time.Time) vendorDLR {
	status = strings.ToLower(status)
	d := vendorDLR{RequestID: m.RequestID, Route: m.Route, Channel: "sms", Mobile: number, Status: status,
		StatusDescription: status, DeliveryTime: at.In(vendorhttp.IST).Format(time.DateTime), DeliveryTimestamp: at.Unix(),
		SMSCount: m.Parts}
	cost := int64(m.Parts) * s.price
	d.AmountDebited = fmt.Sprintf("%d.%02d", cost/100, cost%100)
	switch status {
	case "delivered":
		d.StatusDescription = "Delivered successfully"
	case "sent", "submitted", "pending", "queued":
	default:
		d.FailureReason = failureReasons[status]
		if d.FailureReason == "" {
			d.FailureReason = "Delivery failed"
		}
	}
	return d
}

// CallbackError is the error of a post the receiver answered with a
// status other than 2xx: its StatusCode and Status ("401 Unauthorized"),
// and Name "smsgatewaytest".
type CallbackError = vendorhttptest.CallbackError

// ReportNumber posts, now, to Config.DLRURL, the vendor's delivery report
// of the message the fake accepted under requestID to number (its 10
// digits, or with the country code before them), with status (delivered,
// undelivered, failed, expired, dnd, ... sent in lower case). The body is
// one JSON object, in the shape of the vendor's Standard webhook:
//
//	{"request_id", "route", "channel": "sms", "mobile", "status",
//	 "status_description", "failure_reason" (for a failure),
//	 "delivery_time": "2006-01-02 15:04:05" in IST,
//	 "delivery_timestamp": Unix seconds, "sms_count", "amount_debited",
//	 "post_attempt": 1, 2, ... for each post of the same report}
//
// with times from Config.Now. It returns a *CallbackError when the
// receiver answered other than 2xx, and an error when DLRURL is not set,
// the fake accepted no such message, or the post failed (never naming the
// URL, which holds the receiver's token).
func (s *Server) ReportNumber(ctx context.Context, requestID, number, status string) error {
	if s.dlrURL == "" {
		return errors.New("smsgatewaytest: Config.DLRURL is not set")
	}
	s.mu.Lock()
	var d *vendorDLR
	for _, m := range s.sent {
		if m.RequestID != requestID {
			continue
		}
		for _, n := range m.Numbers {
			if lastTen(n) == lastTen(number) {
				v := s.vendorDLR(m, n, status, s.now())
				d = &v
			}
		}
	}
	s.mu.Unlock()
	if d == nil {
		return fmt.Errorf("smsgatewaytest: no message to %s was accepted under request ID %q", number, requestID)
	}
	return s.postVendorDLR(ctx, *d)
}

// FlushDLRs posts the reports AutoDLR queued, oldest first, each as its
// own request to Config.DLRURL, as ReportNumber does. It stops at the
// first that fails (a *CallbackError for an answer other than 2xx), which
// stays queued with those after it, as the vendor keeps a report the
// receiver did not take; posted counts the reports taken. Calls of
// FlushDLRs run one at a time.
func (s *Server) FlushDLRs(ctx context.Context) (posted int, err error) {
	return s.pending.Flush(func(d vendorDLR) error { return s.postVendorDLR(ctx, d) })
}

// PendingDLRs returns how many reports AutoDLR queued that FlushDLRs has
// not posted.
func (s *Server) PendingDLRs() int {
	return s.pending.Len()
}

// postVendorDLR posts d to DLRURL, counting the attempt in post_attempt.
func (s *Server) postVendorDLR(ctx context.Context, d vendorDLR) error {
	s.mu.Lock()
	key := d.RequestID + "/" + d.Mobile
	s.attempts[key]++
	d.PostAttempt = s.attempts[key]
	s.mu.Unlock()
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return vendorhttptest.Post(ctx, nil, "smsgatewaytest", vendorhttptest.Report{URL: s.dlrURL, ContentType: "application/json", Body: body})
}

// lastTen returns the last ten digits of a number (all of them when it
// has fewer).
func lastTen(n string) string {
	d := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, n)
	if len(d) > 10 {
		d = d[len(d)-10:]
	}
	return d
}
