// Package twiliotest is a strict fake of Twilio Programmable Messaging,
// for tests of package twilio and of programs that use it, in the style
// of net/http/httptest: NewServer starts it on a loopback port and Close
// stops it.
//
// The fake takes POST /2010-04-01/Accounts/{AccountSid}/Messages.json as
// Twilio does and checks what Twilio checks: HTTP basic authentication
// with the account SID and auth token or one of Config.APIKeys (20003,
// HTTP 401, otherwise), the account SID in the path (20404), a form body
// (application/x-www-form-urlencoded: anything else has no parameters),
// To in E.164 (21604 missing, 21211 invalid), From or MessagingServiceSid
// (21603), From among Config.Senders (21606), MessagingServiceSid among
// Config.MessagingServices (20404), a non-empty Body (21602) of at most
// 1,600 characters (21617), and StatusCallback an absolute http(s) URL
// (21609). It answers 201 with the Message resource, its sid "SM" and 32
// hex digits and its status queued (accepted with a Messaging Service),
// and errors with Twilio's error object, {"code", "message", "more_info",
// "status"}, on the code's HTTP status. While the account is not active
// (SetAccountStatus), it refuses every message with 10001.
//
// It serves GET /2010-04-01/Accounts/{AccountSid}.json, the Account
// resource, as strictly: the same basic authentication, except that only
// the auth token and Config.MainKeys may read it (another API key is a
// Standard key, refused with 20003 as Twilio refuses it), the account SID
// in the path (20404), and GET only (20004, HTTP 405). It answers 200 with
// the resource ({"sid", "owner_account_sid", "friendly_name", "status",
// "type", "auth_token", "date_created", "date_updated", "uri",
// "subresource_uris"}), its status active until SetAccountStatus changes
// it. Any key reads a page of the account's incoming phone numbers, GET
// /2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json
// ({"incoming_phone_numbers": [...], "page", "page_size", ...}, the E.164
// numbers of Config.Senders).
//
// Failures can be injected into the next request, and the fake slowed
// (SetLatency):
//
//   - FailNext: Twilio refuses the message with one of its error codes,
//     on the code's HTTP status;
//   - FailNextWith: the same with any status, code and message, such as
//     an error object on a 503 with a code the client does not know;
//   - FailNextHTTP: a proxy in front of Twilio answers a bare HTTP error
//     page, and Twilio never sees the request;
//   - FailNextHTTPAfterAccept: Twilio creates the message, and the proxy
//     answers an error page instead of Twilio's answer;
//   - BreakNext: Twilio creates the message and the connection drops
//     before the answer.
//
// Status callbacks are posted only when a test asks, so that a test
// decides when they arrive and needs no sleeps: Report posts one now for
// a message the fake accepted, to its StatusCallback, signed with the
// auth token as Twilio signs them (X-Twilio-Signature); with
// Config.AutoStatus every accepted message with a StatusCallback queues
// callbacks that Flush posts. Post sends any callback with the signature
// of the test's choosing, and Sign computes one, for tests of forged
// callbacks.
//
// A Server is safe for concurrent use. It is for tests only.
package twiliotest

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// The defaults of Config.
const (
	DefaultAccountSID          = "AC0123456789abcdef0123456789abcdef"
	DefaultAuthToken           = "f0e1d2c3b4a5968778695a4b3c2d1e0f"
	DefaultFrom                = "+15005550006"
	DefaultMessagingServiceSID = "MG0123456789abcdef0123456789abcdef"
)

// APIVersion is the version segment of the fake's paths.
const APIVersion = "2010-04-01"

// The Twilio error codes the fake answers with.
const (
	AccountNotActive    = 10001
	Authenticate        = 20003
	NotFound            = 20404
	TooManyRequests     = 20429
	InternalServerError = 20500
	ServiceUnavailable  = 20503
	InvalidTo           = 21211
	RegionNotEnabled    = 21408
	BodyRequired        = 21602
	FromRequired        = 21603
	ToRequired          = 21604
	InvalidFrom         = 21606
	InvalidCallback     = 21609
	Unsubscribed        = 21610
	QueueFull           = 21611
	NotReachable        = 21612
	NotMobile           = 21614
	BodyTooLong         = 21617
)

// MaxBodyLen is the longest Body the fake (and Twilio) takes, in
// characters.
const MaxBodyLen = 1600

// ErrorStatus returns the HTTP status Twilio answers an error code with: 401
// for 20003, 404 for 20404, 429 for 20429, 500 for 20500, 503 for 20503,
// and 400 for the others.
func ErrorStatus(code int) int {
	switch code {
	case Authenticate:
		return http.StatusUnauthorized
	case NotFound:
		return http.StatusNotFound
	case TooManyRequests:
		return http.StatusTooManyRequests
	case InternalServerError:
		return http.StatusInternalServerError
	case ServiceUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// ErrorMessage returns the message Twilio gives an error code, or "" for a
// code the fake does not know.
func ErrorMessage(code int) string {
	switch code {
	case AccountNotActive:
		return "Account is not active"
	case Authenticate:
		return "Authenticate"
	case NotFound:
		return "The requested resource was not found"
	case TooManyRequests:
		return "Too Many Requests"
	case InternalServerError:
		return "Internal Server Error"
	case ServiceUnavailable:
		return "Service Unavailable"
	case InvalidTo:
		return "Invalid 'To' Phone Number"
	case RegionNotEnabled:
		return "Permission to send an SMS has not been enabled for the region indicated by the 'To' number"
	case BodyRequired:
		return "Message body is required."
	case FromRequired:
		return "A 'From' or 'MessagingServiceSid' parameter is required to send a message"
	case ToRequired:
		return "A 'To' phone number is required."
	case InvalidFrom:
		return "The 'From' phone number provided is not a valid message-capable Twilio phone number for this destination/account"
	case InvalidCallback:
		return "The StatusCallback URL is not a valid URL."
	case Unsubscribed:
		return "Attempt to send to unsubscribed recipient"
	case QueueFull:
		return "This 'From' number has exceeded the maximum number of queued messages"
	case NotReachable:
		return "The 'To' phone number is not currently reachable via SMS"
	case NotMobile:
		return "'To' number is not a valid mobile number"
	case BodyTooLong:
		return "The concatenated message body exceeds the 1600 character limit."
	}
	return ""
}

// Config configures a Server.
type Config struct {
	// AccountSID is the fake's account. Default DefaultAccountSID.
	AccountSID string
	// AuthToken is the account's auth token: the password of basic
	// authentication with AccountSID, and the key that signs callbacks.
	// Default DefaultAuthToken.
	AuthToken string
	// APIKeys are the account's API keys, SID ("SK...") to secret, which
	// authenticate too. Default none.
	APIKeys map[string]string
	// MainKeys are the SIDs of those of APIKeys that are Main keys, which
	// read the Account resource as the auth token does; the others are
	// Standard keys, which Twilio refuses there. Default none.
	MainKeys []string
	// Senders are the From values the account may send from (numbers,
	// short codes, alphanumeric IDs). Default {DefaultFrom}.
	Senders []string
	// MessagingServices are the account's Messaging Service SIDs. Default
	// {DefaultMessagingServiceSID}.
	MessagingServices []string
	// AutoStatus, when set, lists the statuses (such as "sent",
	// "delivered") of the callbacks the fake queues, in order, for each
	// message it accepts with a StatusCallback, including one whose
	// answer is then lost (FailNextHTTPAfterAccept, BreakNext). Flush
	// posts them. "undelivered" and "failed" carry ErrorCode 30003.
	// Default none.
	AutoStatus []string
	// Now is the fake's clock, for the dates of its answers and
	// callbacks. Default time.Now.
	Now func() time.Time
}

// Message is a message the fake accepted.
type Message struct {
	SID                 string
	To                  string
	From                string
	MessagingServiceSID string
	Body                string
	StatusCallback      string
	// Status is the status the fake answered: queued, or accepted with a
	// Messaging Service.
	Status string
	// Segments is how many segments the body takes (sms.Segments).
	Segments int
	// User is the basic-authentication user the request came with: the
	// account SID or an API key SID.
	User string
	// Params are every form parameter as received.
	Params url.Values
}

// Request is a request the fake received on its Messages endpoint,
// accepted or not.
type Request struct {
	Method      string
	Path        string
	ContentType string
	Accept      string
	// User is the basic-authentication user; Password is whether a
	// password came with it (the password itself is not kept).
	User     string
	Password bool
	// Body is the raw body.
	Body []byte
}

// Server is the fake Twilio.
type Server struct {
	// URL is the base URL of the fake, for twilio.Config.BaseURL.
	URL string
	// Faults are the network's faults of the next request, and latency:
	// FailNextHTTP (Twilio does not see the request, though Requests
	// records it), FailNextHTTPAfterAccept and BreakNext (Twilio creates
	// the next valid message and its answer is lost), and SetLatency (the
	// fake waits, after reading a request, before answering it).
	vendorhttptest.Faults
	// Loopback is the fake's server: Client returns an HTTP client for
	// it.
	vendorhttptest.Loopback

	client   *http.Client // posts callbacks
	account  string
	token    string
	keys     map[string]string
	main     map[string]bool // the Main keys among keys
	senders  map[string]bool
	services map[string]bool
	auto     []string
	now      func() time.Time

	messages vendorhttptest.Log[Message]
	requests vendorhttptest.Log[Request]
	fail     atomic.Pointer[apiError]       // FailNext's
	pending  vendorhttptest.Queue[callback] // AutoStatus's
	ids      vendorhttptest.IDs
	status   atomic.Pointer[string] // the account's status

	mu sync.Mutex // a request is recorded and takes FailNextHTTP's fault at once
}

// apiError is Twilio's error object.
type apiError struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info"`
	Status   int    `json:"status"`
}

// callback is a queued status callback.
type callback struct {
	url    string
	params url.Values
}

// NewServer starts a fake Twilio on a loopback port.
func NewServer(cfg Config) *Server {
	if cfg.AccountSID == "" {
		cfg.AccountSID = DefaultAccountSID
	}
	if cfg.AuthToken == "" {
		cfg.AuthToken = DefaultAuthToken
	}
	if cfg.Senders == nil {
		cfg.Senders = []string{DefaultFrom}
	}
	if cfg.MessagingServices == nil {
		cfg.MessagingServices = []string{DefaultMessagingServiceSID}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{
		account:  cfg.AccountSID,
		token:    cfg.AuthToken,
		keys:     make(map[string]string, len(cfg.APIKeys)),
		main:     make(map[string]bool, len(cfg.MainKeys)),
		senders:  make(map[string]bool, len(cfg.Senders)),
		services: make(map[string]bool, len(cfg.MessagingServices)),
		auto:     append([]string(nil), cfg.AutoStatus...),
		now:      cfg.Now,
		client:   &http.Client{Timeout: 30 * time.Second},
	}
	for k, v := range cfg.APIKeys {
		s.keys[k] = v
	}
	for _, k := range cfg.MainKeys {
		s.main[k] = true
	}
	s.SetAccountStatus("active")
	for _, f := range cfg.Senders {
		s.senders[f] = true
	}
	for _, m := range cfg.MessagingServices {
		s.services[m] = true
	}
	s.URL = s.Serve(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server, as httptest.Server.Close does, and releases the
// connections of its callbacks.
func (s *Server) Close() {
	s.Loopback.Close()
	s.client.CloseIdleConnections()
}

// AccountSID returns the fake's account SID.
func (s *Server) AccountSID() string { return s.account }

// AuthToken returns the fake's auth token.
func (s *Server) AuthToken() string { return s.token }

// MessagesPath returns the path of the Messages endpoint,
// /2010-04-01/Accounts/{AccountSid}/Messages.json.
func (s *Server) MessagesPath() string {
	return "/" + APIVersion + "/Accounts/" + s.account + "/Messages.json"
}

// AccountPath returns the path of the Account resource,
// /2010-04-01/Accounts/{AccountSid}.json.
func (s *Server) AccountPath() string { return "/" + APIVersion + "/Accounts/" + s.account + ".json" }

// NumbersPath returns the path of the account's incoming phone numbers,
// /2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json.
func (s *Server) NumbersPath() string {
	return "/" + APIVersion + "/Accounts/" + s.account + "/IncomingPhoneNumbers.json"
}

// SetAccountStatus sets the status the Account resource answers: active
// (the default), suspended or closed, or any other text. While it is not
// active, every message is refused with 10001.
func (s *Server) SetAccountStatus(status string) { s.status.Store(&status) }

// AccountStatus returns the account's status.
func (s *Server) AccountStatus() string { return *s.status.Load() }

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message { return s.messages.All() }

// Accepted returns how many messages the fake has accepted.
func (s *Server) Accepted() int { return s.messages.Len() }

// Requests returns the requests received so far, accepted or not,
// oldest first.
func (s *Server) Requests() []Request { return s.requests.All() }

// FailNext makes Twilio refuse the next authenticated request with code,
// on the code's HTTP status (ErrorStatus) and with its message (ErrorMessage).
func (s *Server) FailNext(code int) {
	msg := ErrorMessage(code)
	if msg == "" {
		msg = "Error " + strconv.Itoa(code)
	}
	s.FailNextWith(ErrorStatus(code), code, msg)
}

// FailNextWith makes Twilio refuse the next authenticated request with
// its error object {"code": code, "message": message, "more_info",
// "status": status} on HTTP status. Nothing is accepted.
func (s *Server) FailNextWith(status, code int, message string) {
	s.fail.Store(&apiError{Code: code, Message: message, MoreInfo: moreInfo(code), Status: status})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	user, pass, _ := r.BasicAuth()
	s.mu.Lock()
	s.requests.Add(Request{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"),
		Accept: r.Header.Get("Accept"), User: user, Password: pass != "", Body: body})
	proxy := s.TakeProxyError() // the fault falls on the request recorded
	s.mu.Unlock()
	if !s.Wait(w, r) {
		return
	}
	if proxy != 0 {
		vendorhttptest.ProxyError(w, proxy)
		return
	}
	if !s.authenticated(user, pass) {
		fail(w, Authenticate, ErrorMessage(Authenticate))
		return
	}
	var allow string
	switch r.URL.Path {
	case s.MessagesPath():
		allow = http.MethodPost
	case s.AccountPath(), s.NumbersPath():
		allow = http.MethodGet
	default:
		fail(w, NotFound, fmt.Sprintf("The requested resource %s was not found", r.URL.Path))
		return
	}
	if r.Method != allow {
		w.Header().Set("Allow", "GET, POST")
		reply(w, &apiError{Code: 20004, Message: "Method not allowed", MoreInfo: moreInfo(20004), Status: http.StatusMethodNotAllowed})
		return
	}
	if r.URL.Path == s.AccountPath() && user != s.account && !s.main[user] {
		// A Standard API key may not read the Account resource.
		fail(w, Authenticate, "Authentication Error - invalid username")
		return
	}
	if injected := s.fail.Swap(nil); injected != nil {
		reply(w, injected)
		return
	}
	switch r.URL.Path {
	case s.AccountPath():
		s.accountResource(w)
		return
	case s.NumbersPath():
		s.numbersPage(w, r)
		return
	}
	if s.AccountStatus() != "active" {
		fail(w, AccountNotActive, ErrorMessage(AccountNotActive))
		return
	}
	var form url.Values
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		form, _ = url.ParseQuery(string(body))
	}
	msg, code, text := s.check(form)
	if code != 0 {
		fail(w, code, text)
		return
	}
	msg.User = user
	msg.SID = s.ids.New("SM", 16) // "SM" and 32 hex digits
	s.messages.Add(msg)
	if msg.StatusCallback != "" {
		for _, st := range s.auto {
			code := 0
			if st == "undelivered" || st == "failed" {
				code = 30003
			}
			s.pending.Add(callback{url: msg.StatusCallback, params: s.callbackParams(msg, st, code)})
		}
	}
	if !s.AfterAccept(w) {
		s.created(w, msg)
	}
}

// authenticated reports whether user and pass are the account's
// credentials or one of its API keys.
func (s *Server) authenticated(user, pass string) bool {
	if pass == "" {
		return false
	}
	if user == s.account {
		return hmac.Equal([]byte(pass), []byte(s.token))
	}
	secret, ok := s.keys[user]
	return ok && hmac.Equal([]byte(pass), []byte(secret))
}

// check validates a form as Twilio does, in that order, and returns the
// message it would create, or an error code and message.
func (s *Server) check(form url.Values) (Message, int, string) {
	m := Message{To: form.Get("To"), From: form.Get("From"), MessagingServiceSID: form.Get("MessagingServiceSid"),
		Body: form.Get("Body"), StatusCallback: form.Get("StatusCallback"), Params: form}
	switch {
	case m.To == "":
		return m, ToRequired, ErrorMessage(ToRequired)
	case !E164(m.To):
		return m, InvalidTo, fmt.Sprintf("The 'To' number %s is not a valid phone number.", m.To)
	case m.From == "" && m.MessagingServiceSID == "":
		return m, FromRequired, ErrorMessage(FromRequired)
	case m.From != "" && !s.senders[m.From]:
		return m, InvalidFrom, ErrorMessage(InvalidFrom)
	case m.MessagingServiceSID != "" && !s.services[m.MessagingServiceSID]:
		return m, NotFound, fmt.Sprintf("The requested resource /Services/%s was not found", m.MessagingServiceSID)
	case strings.TrimSpace(m.Body) == "":
		return m, BodyRequired, ErrorMessage(BodyRequired)
	case utf8.RuneCountInString(m.Body) > MaxBodyLen:
		return m, BodyTooLong, ErrorMessage(BodyTooLong)
	}
	if m.StatusCallback != "" {
		u, err := url.Parse(m.StatusCallback)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || strings.Contains(u.Hostname(), "_") {
			return m, InvalidCallback, ErrorMessage(InvalidCallback)
		}
	}
	m.Status = "queued"
	if m.MessagingServiceSID != "" {
		m.Status = "accepted"
	}
	_, m.Segments, _ = sms.Segments(m.Body)
	return m, 0, ""
}

// created answers 201 with the Message resource of m.
func (s *Server) created(w http.ResponseWriter, m Message) {
	date := s.now().UTC().Format(time.RFC1123Z)
	uri := s.MessagesPath()
	uri = strings.TrimSuffix(uri, ".json") + "/" + m.SID
	var from, service any
	if m.From != "" {
		from = m.From
	}
	if m.MessagingServiceSID != "" {
		service = m.MessagingServiceSID
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"account_sid":           s.account,
		"api_version":           APIVersion,
		"body":                  m.Body,
		"date_created":          date,
		"date_sent":             nil,
		"date_updated":          date,
		"direction":             "outbound-api",
		"error_code":            nil,
		"error_message":         nil,
		"from":                  from,
		"messaging_service_sid": service,
		"num_media":             "0",
		"num_segments":          strconv.Itoa(m.Segments),
		"price":                 nil,
		"price_unit":            "USD",
		"sid":                   m.SID,
		"status":                m.Status,
		"subresource_uris":      map[string]string{"media": uri + "/Media.json"},
		"to":                    m.To,
		"uri":                   uri + ".json",
	})
}

// accountResource answers 200 with the Account resource.
func (s *Server) accountResource(w http.ResponseWriter) {
	date := s.now().UTC().Format(time.RFC1123Z)
	root := strings.TrimSuffix(s.AccountPath(), ".json")
	vendorhttptest.ReplyJSONAs(w, "application/json; charset=utf-8", http.StatusOK, map[string]any{
		"auth_token":        s.token,
		"date_created":      date,
		"date_updated":      date,
		"friendly_name":     "notify test account",
		"owner_account_sid": s.account,
		"sid":               s.account,
		"status":            s.AccountStatus(),
		"subresource_uris": map[string]string{
			"messages":               root + "/Messages.json",
			"incoming_phone_numbers": root + "/IncomingPhoneNumbers.json",
			"balance":                root + "/Balance.json",
		},
		"type": "Full",
		"uri":  s.AccountPath(),
	})
}

// numbersPage answers 200 with the first page of the account's incoming
// phone numbers, the E.164 numbers among its senders, of the request's
// PageSize (1 to 1000; default 50).
func (s *Server) numbersPage(w http.ResponseWriter, r *http.Request) {
	size := 50
	if n, err := strconv.Atoi(r.URL.Query().Get("PageSize")); err == nil && n >= 1 && n <= 1000 {
		size = n
	}
	numbers := []map[string]any{}
	for f := range s.senders {
		if E164(f) {
			numbers = append(numbers, map[string]any{"account_sid": s.account, "phone_number": f,
				"capabilities": map[string]bool{"sms": true, "mms": false, "voice": true}})
		}
	}
	sort.Slice(numbers, func(i, j int) bool { return numbers[i]["phone_number"].(string) < numbers[j]["phone_number"].(string) })
	numbers = numbers[:min(len(numbers), size)]
	uri := s.NumbersPath() + "?PageSize=" + strconv.Itoa(size) + "&Page=0"
	vendorhttptest.ReplyJSONAs(w, "application/json; charset=utf-8", http.StatusOK, map[string]any{
		"incoming_phone_numbers": numbers, "page": 0, "page_size": size, "start": 0, "end": max(len(numbers)-1, 0),
		"first_page_uri": uri, "next_page_uri": nil, "previous_page_uri": nil, "uri": uri,
	})
}

// E164 reports whether s is '+', a digit 1-9 and 6 to 14 more digits.
func E164(s string) bool { return e164.MatchString(s) }

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

func moreInfo(code int) string { return "https://www.twilio.com/docs/errors/" + strconv.Itoa(code) }

func fail(w http.ResponseWriter, code int, message string) {
	reply(w, &apiError{Code: code, Message: message, MoreInfo: moreInfo(code), Status: ErrorStatus(code)})
}

func reply(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e)
}

// callbackParams are the form parameters of a status callback of m with
// status: those Twilio posts for an outbound SMS.
func (s *Server) callbackParams(m Message, status string, errorCode int) url.Values {
	v := url.Values{
		"AccountSid":    {s.account},
		"ApiVersion":    {APIVersion},
		"MessageSid":    {m.SID},
		"SmsSid":        {m.SID},
		"MessageStatus": {status},
		"SmsStatus":     {status},
		"To":            {m.To},
	}
	if m.From != "" {
		v.Set("From", m.From)
	}
	if m.MessagingServiceSID != "" {
		v.Set("MessagingServiceSid", m.MessagingServiceSID)
	}
	if errorCode != 0 {
		v.Set("ErrorCode", strconv.Itoa(errorCode))
	}
	if status == "delivered" || status == "undelivered" {
		// The carrier's done date, YYMMDDhhmm without a zone.
		v.Set("RawDlrDoneDate", s.now().UTC().Format("0601021504"))
	}
	return v
}

// CallbackError is the error of a callback the receiver answered with a
// status other than 2xx: its Name is "twiliotest", StatusCode such as 401
// and Status such as "401 Unauthorized".
type CallbackError = vendorhttptest.CallbackError

// Report posts, now, the status callback of the message the fake
// accepted as sid, with status (sent, delivered, undelivered, failed,
// read, queued, ...) and, when errorCode is not 0, ErrorCode, to the
// message's StatusCallback, signed with the auth token. The form
// parameters are AccountSid, ApiVersion, MessageSid, SmsSid,
// MessageStatus, SmsStatus, To, From (or MessagingServiceSid), ErrorCode
// and, for delivered and undelivered, RawDlrDoneDate. It returns a
// *CallbackError when the receiver answered other than 2xx, and an error
// when the fake accepted no such message or it has no StatusCallback.
func (s *Server) Report(ctx context.Context, sid, status string, errorCode int) error {
	m, ok := s.messages.Find(func(m Message) bool { return m.SID == sid })
	if !ok {
		return fmt.Errorf("twiliotest: no message %q was accepted", sid)
	}
	if m.StatusCallback == "" {
		return fmt.Errorf("twiliotest: message %s has no StatusCallback", sid)
	}
	return s.PostCallback(ctx, m.StatusCallback, s.callbackParams(m, status, errorCode))
}

// Flush posts the callbacks Config.AutoStatus queued, oldest first, each
// as its own request, as Report does. It stops at the first that fails (a
// *CallbackError for an answer other than 2xx), which stays queued with
// those after it; posted counts the callbacks taken. Calls of Flush run
// one at a time.
func (s *Server) Flush(ctx context.Context) (posted int, err error) {
	return s.pending.Flush(func(cb callback) error { return s.PostCallback(ctx, cb.url, cb.params) })
}

// Pending returns how many callbacks AutoStatus queued that Flush has not
// posted.
func (s *Server) Pending() int { return s.pending.Len() }

// PostCallback posts params to callbackURL as Twilio posts a callback:
// without the URL's fragment (Twilio reads its connection overrides from
// it), signed with the fake's auth token over the URL as requested.
func (s *Server) PostCallback(ctx context.Context, callbackURL string, params url.Values) error {
	target, _, _ := strings.Cut(callbackURL, "#")
	return s.post(ctx, target, Sign(s.token, target, params), params)
}

// Post posts params to callbackURL as a status callback with signature
// in X-Twilio-Signature (none when it is empty), for tests of forged,
// tampered or unsigned callbacks. Errors are PostCallback's.
func (s *Server) Post(ctx context.Context, callbackURL, signature string, params url.Values) error {
	return s.post(ctx, callbackURL, signature, params)
}

// post posts params to target as Twilio posts a status callback, with
// signature in X-Twilio-Signature unless it is empty.
func (s *Server) post(ctx context.Context, target, signature string, params url.Values) error {
	h := http.Header{}
	h.Set("User-Agent", "TwilioProxy/1.1")
	if signature != "" {
		h.Set("X-Twilio-Signature", signature)
	}
	return vendorhttptest.Post(ctx, s.client, "twiliotest", vendorhttptest.Report{URL: target,
		ContentType: "application/x-www-form-urlencoded; charset=utf-8", Body: []byte(params.Encode()), Header: h})
}

// Sign returns the X-Twilio-Signature Twilio sends with a callback to
// rawURL (as requested, query included) with the form parameters params,
// under authToken: base64 of the HMAC-SHA1 of rawURL followed by each
// parameter's name and value, names sorted (a name's values sorted, each
// once).
func Sign(authToken, rawURL string, params url.Values) string {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	m := hmac.New(sha1.New, []byte(authToken))
	m.Write([]byte(rawURL))
	for _, k := range names {
		vals := append([]string(nil), params[k]...)
		sort.Strings(vals)
		for i, v := range vals {
			if i > 0 && v == vals[i-1] {
				continue
			}
			m.Write([]byte(k + v))
		}
	}
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
