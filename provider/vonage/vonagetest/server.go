// Package vonagetest is a strict fake of Vonage's SMS API and of the
// Account API's balance query, for tests of package vonage and of
// programs that use it, in the style of net/http/httptest: NewServer
// starts it on a loopback port and Close stops it.
//
// The fake takes POST /sms/json as Vonage does, a form (or a JSON
// object), and checks, in this order: api_key and api_secret (or HTTP
// basic authentication) present (status 2) and the account's (status 4,
// "Bad Credentials"); from, to and text present (status 2); type text or
// unicode (3); to in E.164 without the + (7 to 15 digits, the first not
// 0: status 3, so a + is refused); from among Config.Senders (status 15);
// text at most Config.MaxTextLen characters (status 12) and, for type
// text, within GSM 03.38 (status 3: Vonage would send other characters
// garbled, the fake refuses them); client-ref at most 100 characters
// (3); callback an absolute http(s) URL of at most 100 characters (23);
// entity-id and content-id both or neither, digits (3); and the balance
// enough for every part (status 9). It answers 200 with Vonage's answer,
// {"message-count": "2", "messages": [{"to", "message-id", "status":
// "0", "remaining-balance", "message-price", "network", "client-ref"},
// ...]}, one entry a part of the text (sms.Segments counts them), and
// its refusals the same way, {"message-count": "1", "messages":
// [{"status": "4", "error-text": "Bad Credentials"}]}, as Vonage does.
// GET /account/get-balance answers {"value": 10.28, "autoReload": false}
// to the account's credentials (basic authentication, or api_key and
// api_secret in the query), and 401 otherwise.
//
// Failures can be injected into the next request, and the fake slowed
// (SetLatency):
//
//   - FailNext: Vonage refuses the next send with one of its statuses;
//   - FailNextWith: any status and text, on any HTTP status;
//   - FailNextHTTP: a proxy in front of Vonage answers an error page,
//     and Vonage never sees the request;
//   - FailNextHTTPAfterAccept: Vonage takes the message, and the proxy
//     answers an error page instead of Vonage's answer;
//   - BreakNext: Vonage takes the message and the connection drops
//     before the answer.
//
// Delivery receipts are sent only when a test asks, so that it decides
// when they arrive and needs no sleeps: Report sends one now for a part
// the fake took, to the message's callback (or Config.DefaultCallback),
// in Config.ReceiptMethod, signed as Vonage signs them when
// Config.SignatureSecret is set; with Config.AutoReceipts every part
// taken queues receipts that Flush sends. Send sends any receipt as it
// is, for tests of forged, tampered or stale ones.
//
// A Server is safe for concurrent use. It is for tests only.
package vonagetest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/provider/vonage"
)

// The defaults of Config.
const (
	DefaultAPIKey          = "a1b2c3d4"
	DefaultAPISecret       = "Vg5ecret0123ABCD"
	DefaultSignatureSecret = "sig-secret-71efab63122f1d179f51"
	// DefaultFrom is an alphanumeric sender, and DefaultNumber a virtual
	// number, of the account (as sent: E.164 without the +).
	DefaultFrom   = "AcmeInc"
	DefaultNumber = "447700900001"
	// DefaultBalance is the account's opening balance, 10.28 EUR, in
	// ten-thousandths of a euro; DefaultPrice the price of a part,
	// 0.0333 EUR.
	DefaultBalance = 102800
	DefaultPrice   = 333
	// DefaultMaxTextLen is the longest text the fake takes, in
	// characters. Vonage's reference gives no maximum; 3,600 is the cap a
	// third-party integration guide reports.
	DefaultMaxTextLen = 3600
)

// The receipt methods of the dashboard's delivery receipt webhook.
const (
	MethodGET      = "GET"       // the fields in the query
	MethodPOST     = "POST"      // a form
	MethodPOSTJSON = "POST-JSON" // a JSON object
)

// ErrorText returns the error-text the fake gives a status, or "" for
// one it does not know.
func ErrorText(status int) string { return errorTexts[status] }

// errorTexts are the fake's error-texts, in the words Vonage uses.
var errorTexts = map[int]string{
	vonage.StatusThrottled:                "Throttled",
	vonage.StatusMissingParams:            "Missing params",
	vonage.StatusInvalidParams:            "Invalid params",
	vonage.StatusInvalidCredentials:       "Bad Credentials",
	vonage.StatusInternalError:            "Internal Error",
	vonage.StatusInvalidMessage:           "Invalid Message",
	vonage.StatusNumberBarred:             "Number barred.",
	vonage.StatusPartnerAccountBarred:     "Partner account barred",
	vonage.StatusPartnerQuotaViolation:    "Quota Exceeded - rejected",
	vonage.StatusTooManyExistingBinds:     "Too many existing binds",
	vonage.StatusAccountNotEnabledForHTTP: "Account not enabled for HTTP",
	vonage.StatusMessageTooLong:           "Message too long",
	vonage.StatusInvalidSignature:         "Invalid Signature",
	vonage.StatusInvalidSenderAddress:     "Illegal Sender Address - rejected",
	vonage.StatusInvalidNetworkCode:       "Invalid network code",
	vonage.StatusInvalidCallbackURL:       "Invalid callback url",
	vonage.StatusNonWhitelistedDest:       "Non White-listed Destination - rejected",
	vonage.StatusSignatureAndSecret:       "Signature and API secret disallowed",
	vonage.StatusNumberDeactivated:        "Number de-activated",
}

// Config configures a Server.
type Config struct {
	// APIKey and APISecret are the account's credentials. Default
	// DefaultAPIKey and DefaultAPISecret.
	APIKey, APISecret string
	// SignatureSecret, when set, signs the receipts the fake sends, by
	// SignatureMethod (default vonage.MD5Hash), with timestamp and nonce:
	// the account's signed webhooks. Default none: unsigned receipts.
	SignatureSecret string
	SignatureMethod vonage.SignatureMethod
	// Senders are the from values the account may send from, as sent.
	// Default {DefaultFrom, DefaultNumber}.
	Senders []string
	// Balance is the opening balance and Price the price of a part, in
	// ten-thousandths of a euro. Default DefaultBalance and DefaultPrice.
	Balance, Price int64
	// MaxTextLen is the longest text taken, in characters. Default
	// DefaultMaxTextLen.
	MaxTextLen int
	// DefaultCallback is the account's delivery receipt webhook, for
	// messages sent without a callback. Default none.
	DefaultCallback string
	// ReceiptMethod is how receipts are sent: MethodGET (the default),
	// MethodPOST or MethodPOSTJSON.
	ReceiptMethod string
	// AutoReceipts, when set, lists the statuses ("accepted",
	// "delivered", ...) of the receipts the fake queues, in order, for
	// each part it takes of a message with a callback, including one
	// whose answer is then lost. Flush sends them. Default none.
	AutoReceipts []string
	// Now is the fake's clock, for the times of its receipts. Default
	// time.Now.
	Now func() time.Time
}

// Message is a message the fake took.
type Message struct {
	// Params are the request's parameters, without api_secret.
	Params url.Values
	// To, From, Text, Type, ClientRef, Callback, EntityID and ContentID
	// are its parameters of those names.
	To, From, Text, Type, ClientRef, Callback, EntityID, ContentID string
	// IDs are the message-ids of its parts, in order.
	IDs []string
}

// Request is a request the fake received, taken or not.
type Request struct {
	// Method, Path, Query (as sent), ContentType and Accept are the
	// request's.
	Method, Path, Query, ContentType, Accept string
	// Body is the raw body, api_secret included.
	Body []byte
}

// Server is the fake Vonage.
type Server struct {
	// URL is the base URL of the fake, for vonage.Config.BaseURL.
	URL string
	// Faults are the network's faults of the next request, and latency.
	vendorhttptest.Faults
	// Loopback is the fake's server: Client returns an HTTP client for
	// it.
	vendorhttptest.Loopback

	cfg      Config
	senders  map[string]bool
	client   *http.Client // sends receipts
	messages vendorhttptest.Log[Message]
	requests vendorhttptest.Log[Request]
	fail     atomic.Pointer[refusal]        // FailNext's
	pending  vendorhttptest.Queue[*receipt] // AutoReceipts'
	ids      vendorhttptest.IDs

	mu      sync.Mutex // the balance; a request is recorded and takes FailNextHTTP's fault at once
	balance int64
}

// refusal is Vonage's refusal of a send, on an HTTP status.
type refusal struct {
	http, status int
	text         string
}

// receipt is a delivery receipt owed to a callback.
type receipt struct {
	url    string
	params url.Values
}

// NewServer starts a fake Vonage on a loopback port.
func NewServer(cfg Config) *Server {
	cfg.APIKey = or(cfg.APIKey, DefaultAPIKey)
	cfg.APISecret = or(cfg.APISecret, DefaultAPISecret)
	cfg.SignatureMethod = or(cfg.SignatureMethod, vonage.MD5Hash)
	cfg.ReceiptMethod = or(cfg.ReceiptMethod, MethodGET)
	if cfg.Senders == nil {
		cfg.Senders = []string{DefaultFrom, DefaultNumber}
	}
	cfg.Balance, cfg.Price = or(cfg.Balance, DefaultBalance), or(cfg.Price, DefaultPrice)
	cfg.MaxTextLen = or(cfg.MaxTextLen, DefaultMaxTextLen)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, senders: make(map[string]bool), balance: cfg.Balance,
		client: &http.Client{Timeout: 30 * time.Second}}
	for _, f := range cfg.Senders {
		s.senders[f] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc(vonage.SendPath, s.serveSend)
	mux.HandleFunc(vonage.BalancePath, s.serveBalance)
	s.URL = s.Serve(mux)
	return s
}

// or returns v, or def when v is the zero value.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Close stops the server, as httptest.Server.Close does, and releases the
// connections of its receipts.
func (s *Server) Close() {
	s.Loopback.Close()
	s.client.CloseIdleConnections()
}

// Messages returns the messages taken so far, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// Accepted returns how many messages the fake has taken.
func (s *Server) Accepted() int { return s.messages.Len() }

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request { return s.requests.All() }

// Balance returns the account's balance, in ten-thousandths of a euro.
func (s *Server) Balance() int64 {
	return vendorhttptest.Locked(&s.mu, func() int64 { return s.balance })
}

// SetBalance sets the account's balance, in ten-thousandths of a euro.
func (s *Server) SetBalance(v int64) { vendorhttptest.WithLock(&s.mu, func() { s.balance = v }) }

// FailNext makes Vonage refuse the next authenticated send with status
// and ErrorText(status), as it does, on HTTP 200.
func (s *Server) FailNext(status int) {
	s.FailNextWith(http.StatusOK, status, or(ErrorText(status), "Error "+strconv.Itoa(status)))
}

// FailNextWith makes Vonage refuse the next authenticated send with its
// answer {"message-count": "1", "messages": [{"status": status,
// "error-text": text}]} on HTTP httpStatus. Nothing is taken.
func (s *Server) FailNextWith(httpStatus, status int, text string) {
	s.fail.Store(&refusal{http: httpStatus, status: status, text: text})
}

// record reads and logs a request, and takes FailNextHTTP's fault for
// it; it reports false, having answered, when the fake must not go on.
func (s *Server) record(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	s.mu.Lock()
	s.requests.Add(Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, ContentType: r.Header.Get("Content-Type"),
		Accept: r.Header.Get("Accept"), Body: body})
	proxy := s.TakeProxyError() // the fault falls on the request recorded
	s.mu.Unlock()
	if !s.Wait(w, r) {
		return nil, false
	}
	if proxy != 0 {
		vendorhttptest.ProxyError(w, proxy)
		return nil, false
	}
	return body, true
}

// authenticated reports whether key and secret are the account's, in
// constant time.
func (s *Server) authenticated(key, secret string) bool {
	return hmac.Equal([]byte(key), []byte(s.cfg.APIKey)) && hmac.Equal([]byte(secret), []byte(s.cfg.APISecret))
}

func (s *Server) serveSend(w http.ResponseWriter, r *http.Request) {
	body, ok := s.record(w, r)
	if !ok {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	params := readParams(r.Header.Get("Content-Type"), body)
	key, secret := params.Get("api_key"), params.Get("api_secret")
	if user, pass, basic := r.BasicAuth(); basic && key == "" {
		key, secret = user, pass
	}
	switch {
	case key == "":
		refuse(w, &refusal{status: vonage.StatusMissingParams, text: "Missing api_key"})
		return
	case secret == "":
		refuse(w, &refusal{status: vonage.StatusMissingParams, text: "Missing api_secret"})
		return
	case !s.authenticated(key, secret):
		refuse(w, &refusal{status: vonage.StatusInvalidCredentials, text: ErrorText(vonage.StatusInvalidCredentials)})
		return
	}
	if injected := s.fail.Swap(nil); injected != nil {
		refuse(w, injected)
		return
	}
	m, no := s.check(params)
	if no != nil {
		refuse(w, no)
		return
	}
	_, parts, _ := sms.Segments(m.Text)
	s.mu.Lock()
	cost := int64(parts) * s.cfg.Price
	if s.balance < cost {
		s.mu.Unlock()
		refuse(w, &refusal{status: vonage.StatusPartnerQuotaViolation, text: ErrorText(vonage.StatusPartnerQuotaViolation)})
		return
	}
	s.balance -= cost
	left := s.balance
	s.mu.Unlock()
	for range parts {
		m.IDs = append(m.IDs, strings.ToUpper(s.ids.New("0A", 7)))
	}
	s.messages.Add(m)
	if target := or(m.Callback, s.cfg.DefaultCallback); target != "" {
		for _, id := range m.IDs {
			for _, st := range s.cfg.AutoReceipts {
				s.pending.Add(s.receipt(m, id, target, st, autoErrCode(st)))
			}
		}
	}
	if !s.AfterAccept(w) {
		s.taken(w, m, left)
	}
}

// readParams reads a send's parameters from a form or a JSON object;
// none from anything else.
func readParams(contentType string, body []byte) url.Values {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/x-www-form-urlencoded":
		v, _ := url.ParseQuery(string(body))
		return v
	case "application/json":
		var obj map[string]any
		v := url.Values{}
		if json.Unmarshal(body, &obj) == nil {
			for k, x := range obj {
				v.Set(k, fmt.Sprint(x))
			}
		}
		return v
	}
	return url.Values{}
}

// check validates a send's parameters as Vonage does, in that order, and
// returns the message it would take, or its refusal.
func (s *Server) check(p url.Values) (Message, *refusal) {
	m := Message{Params: url.Values{}, To: p.Get("to"), From: p.Get("from"), Text: p.Get("text"), Type: or(p.Get("type"), "text"),
		ClientRef: p.Get("client-ref"), Callback: p.Get("callback"), EntityID: p.Get("entity-id"), ContentID: p.Get("content-id")}
	for k, v := range p {
		if k != "api_secret" {
			m.Params[k] = v
		}
	}
	invalid := func(text string) *refusal { return &refusal{status: vonage.StatusInvalidParams, text: text} }
	missing := func(param string) *refusal {
		return &refusal{status: vonage.StatusMissingParams, text: "Missing " + param + " param"}
	}
	switch {
	case m.From == "":
		return m, missing("from")
	case m.To == "":
		return m, missing("to")
	case m.Text == "":
		return m, missing("text")
	case m.Type != "text" && m.Type != "unicode":
		return m, invalid("Invalid type param: text or unicode")
	case !ValidTo(m.To):
		return m, invalid("Invalid to param: a number in E.164 without the +")
	case !s.senders[m.From]:
		return m, &refusal{status: vonage.StatusInvalidSenderAddress, text: ErrorText(vonage.StatusInvalidSenderAddress)}
	case utf8.RuneCountInString(m.Text) > s.cfg.MaxTextLen:
		return m, &refusal{status: vonage.StatusMessageTooLong, text: ErrorText(vonage.StatusMessageTooLong)}
	case m.Type == "text" && gsmless(m.Text):
		return m, invalid("Invalid text param: characters outside GSM 03.38 need type unicode")
	case utf8.RuneCountInString(m.ClientRef) > vonage.MaxClientRef:
		return m, invalid("Invalid client-ref param: over 100 characters")
	case m.Callback != "" && !vendorhttptest.IsHTTPURL(m.Callback) || utf8.RuneCountInString(m.Callback) > vonage.MaxCallbackLen:
		return m, &refusal{status: vonage.StatusInvalidCallbackURL, text: ErrorText(vonage.StatusInvalidCallbackURL)}
	case (m.EntityID == "") != (m.ContentID == ""):
		return m, invalid("Invalid params: entity-id and content-id go together")
	case m.EntityID != "" && (!digits(m.EntityID) || !digits(m.ContentID)):
		return m, invalid("Invalid entity-id or content-id param: the digits of the DLT registration")
	}
	return m, nil
}

// gsmless reports whether text has characters outside GSM 03.38.
func gsmless(text string) bool {
	enc, _, _ := sms.Segments(text)
	return enc == sms.UCS2
}

// ValidTo reports whether s is a number as Vonage's to takes it: E.164
// without the +, 7 to 15 digits, the first not 0.
func ValidTo(s string) bool { return len(s) >= 7 && len(s) <= 15 && s[0] != '0' && digits(s) }

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// refuse answers Vonage's refusal.
func refuse(w http.ResponseWriter, f *refusal) {
	vendorhttptest.ReplyJSON(w, or(f.http, http.StatusOK), map[string]any{"message-count": "1",
		"messages": []map[string]string{{"status": strconv.Itoa(f.status), "error-text": f.text}}})
}

// taken answers 200 with Vonage's answer to m, left being the balance
// after it.
func (s *Server) taken(w http.ResponseWriter, m Message, left int64) {
	parts := make([]map[string]string, len(m.IDs))
	for i, id := range m.IDs {
		// The balance after each part, as Vonage counts it.
		after := left + int64(len(m.IDs)-1-i)*s.cfg.Price
		parts[i] = map[string]string{"to": m.To, "message-id": id, "status": "0", "remaining-balance": decimal(after, 8),
			"message-price": decimal(s.cfg.Price, 8), "network": network(m.To)}
		if m.ClientRef != "" {
			parts[i]["client-ref"] = m.ClientRef
		}
	}
	vendorhttptest.ReplyJSON(w, http.StatusOK, map[string]any{"message-count": strconv.Itoa(len(parts)), "messages": parts})
}

// decimal formats v ten-thousandths of a euro with places decimals.
func decimal(v int64, places int) string {
	s := fmt.Sprintf("%d.%04d", v/10000, v%10000)
	return s + strings.Repeat("0", max(places-4, 0))
}

// network is a network code (MCCMNC) for the number's country.
func network(to string) string {
	for prefix, code := range map[string]string{"44": "23410", "91": "40410", "1": "310260"} {
		if strings.HasPrefix(to, prefix) {
			return code
		}
	}
	return "20801"
}

func (s *Server) serveBalance(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.record(w, r); !ok {
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	key, secret, ok := r.BasicAuth()
	if !ok {
		key, secret = r.URL.Query().Get("api_key"), r.URL.Query().Get("api_secret")
	}
	if !s.authenticated(key, secret) {
		vendorhttptest.ReplyJSON(w, http.StatusUnauthorized, map[string]string{"error-code": "401", "error-code-label": "authentication failed"})
		return
	}
	vendorhttptest.ReplyJSON(w, http.StatusOK, map[string]any{"value": json.Number(decimal(s.Balance(), 4)), "autoReload": false})
}

// autoErrCode is the err-code of an AutoReceipts receipt of status.
func autoErrCode(status string) string {
	switch status {
	case "expired":
		return "2"
	case "failed":
		return "8"
	case "rejected":
		return "6"
	case "unknown":
		return "1"
	}
	return "0"
}

// receipt builds the receipt of part id of m, with status and errCode,
// for target: the fields Vonage sends, signed when the account signs.
func (s *Server) receipt(m Message, id, target, status, errCode string) *receipt {
	now := s.cfg.Now().UTC()
	v := url.Values{"msisdn": {m.To}, "to": {m.From}, "network-code": {network(m.To)}, "messageId": {id},
		"price": {decimal(s.cfg.Price, 8)}, "status": {status}, "scts": {now.Format("0601021504")}, "err-code": {errCode},
		"api-key": {s.cfg.APIKey}, "message-timestamp": {now.Format(time.DateTime)}}
	if m.ClientRef != "" {
		v.Set("client-ref", m.ClientRef)
	}
	if s.cfg.SignatureSecret != "" {
		nonce := make([]byte, 16)
		_, _ = rand.Read(nonce)
		v.Set("timestamp", strconv.FormatInt(now.Unix(), 10))
		v.Set("nonce", hex.EncodeToString(nonce))
		v.Set("sig", vonage.Sign(s.cfg.SignatureMethod, s.cfg.SignatureSecret, v))
	}
	return &receipt{url: target, params: v}
}

// CallbackError is the error of a receipt the receiver answered with a
// status other than 2xx: its Name is "vonagetest", StatusCode such as
// 401 and Status such as "401 Unauthorized".
type CallbackError = vendorhttptest.CallbackError

// Report sends, now, a delivery receipt of part messageID of a message
// the fake took, with status (delivered, accepted, buffered, expired,
// failed, rejected, unknown) and errCode ("0", or Vonage's err-code of a
// failure), to the message's callback or Config.DefaultCallback, in
// Config.ReceiptMethod, signed when Config.SignatureSecret is set. Its
// fields are msisdn, to, network-code, messageId, price, status, scts,
// err-code, api-key, message-timestamp, client-ref (when the message had
// one), and, signed, timestamp, nonce and sig. It returns a
// *CallbackError when the receiver answered other than 2xx, and an error
// when the fake took no such part or it has no callback.
func (s *Server) Report(ctx context.Context, messageID, status, errCode string) error {
	m, ok := s.messages.Find(func(m Message) bool {
		for _, id := range m.IDs {
			if id == messageID {
				return true
			}
		}
		return false
	})
	if !ok {
		return fmt.Errorf("vonagetest: no part %q was taken", messageID)
	}
	target := or(m.Callback, s.cfg.DefaultCallback)
	if target == "" {
		return fmt.Errorf("vonagetest: message %s has no callback and the account no default", messageID)
	}
	rc := s.receipt(m, messageID, target, status, errCode)
	return s.Send(ctx, rc.url, rc.params)
}

// Flush sends the receipts Config.AutoReceipts queued, oldest first, each
// as its own request, as Report does. It stops at the first that fails
// (a *CallbackError for an answer other than 2xx), which stays queued
// with those after it; posted counts the receipts taken. Calls of Flush
// run one at a time.
func (s *Server) Flush(ctx context.Context) (posted int, err error) {
	return s.pending.Flush(func(rc *receipt) error { return s.Send(ctx, rc.url, rc.params) })
}

// Pending returns how many receipts AutoReceipts queued that Flush has
// not sent.
func (s *Server) Pending() int { return s.pending.Len() }

// Send sends params to target as a delivery receipt, in
// Config.ReceiptMethod, as they are (nothing is added or signed): for
// tests of forged, tampered, unsigned or stale receipts. Its errors are
// Report's, and never name target.
func (s *Server) Send(ctx context.Context, target string, params url.Values) error {
	h := http.Header{"User-Agent": {"Nexmo/MessagingHUB/v1.0"}}
	switch s.cfg.ReceiptMethod {
	case MethodPOST:
		return vendorhttptest.Post(ctx, s.client, "vonagetest", vendorhttptest.Report{URL: target,
			ContentType: "application/x-www-form-urlencoded", Body: []byte(params.Encode()), Header: h})
	case MethodPOSTJSON:
		obj := make(map[string]string, len(params))
		for k := range params {
			obj[k] = params.Get(k)
		}
		body, _ := json.Marshal(obj)
		return vendorhttptest.Post(ctx, s.client, "vonagetest", vendorhttptest.Report{URL: target,
			ContentType: "application/json", Body: body, Header: h})
	}
	return s.get(ctx, target, params, h)
}

// get sends a receipt as a GET of target with params in its query.
func (s *Server) get(ctx context.Context, target string, params url.Values, h http.Header) error {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target+sep+params.Encode(), nil)
	if err != nil {
		return errors.New("vonagetest: the callback URL cannot be requested")
	}
	req.Header = h
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it names the URL
		}
		return fmt.Errorf("vonagetest: sending the delivery receipt: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &CallbackError{Name: "vonagetest", StatusCode: resp.StatusCode, Status: resp.Status}
	}
	return nil
}
