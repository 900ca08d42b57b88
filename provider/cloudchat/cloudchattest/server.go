// Package cloudchattest is a fake of the cloud messaging API, on
// httptest, for tests of code that sends through provider/cloudchat and
// takes its status webhooks. It is as strict as the vendor where a
// mistake would pass unnoticed: it checks the bearer token, the path and
// every message body as the vendor does, answers the vendor's own success
// and error bodies, and, like the vendor, accepts free text to a
// recipient outside the 24-hour customer service window with 200 and
// reports the failure (131047) later, in a status webhook signed with the
// app secret.
//
// Status webhooks are posted only when a test asks (Flush, Post), so that
// a test decides when they arrive and needs no sleeps.
package cloudchattest

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// The defaults of Config.
const (
	DefaultPhoneNumberID = "106540352242922"
	DefaultVersion       = "v25.0"
	// DefaultWABAID is the business account ID in the webhooks' entry.
	DefaultWABAID = "102290129340398"
)

// Template is an approved template as the fake knows it: what the
// vendor checks a template message against.
type Template struct {
	// Category is AUTHENTICATION, UTILITY or MARKETING.
	Category string
	// Body is the number of positional body parameters; Named lists the
	// parameter names of a template approved with named parameters.
	Body  int
	Named []string
	// Header is the header's kind: "" (none or static), "text" (one
	// variable), "image", "document" or "video".
	Header string
	// Buttons are the template's buttons that take a value, by index:
	// "url" (a URL with a variable, and the OTP button of an
	// AUTHENTICATION template, which the vendor stores as a URL button),
	// "quick_reply" (its payload may be left out) or "copy_code".
	Buttons map[int]string
}

// DefaultTemplates are the approved templates, by "name/language", unless
// Config.Templates says otherwise.
var DefaultTemplates = map[string]Template{
	"order_confirmed/en_US": {Category: "UTILITY", Body: 2},
	"standard_otp/en_US":    {Category: "UTILITY", Body: 1, Header: "image"},
	"invoice_ready/en":      {Category: "UTILITY", Body: 1, Header: "document"},
	// An authentication template with a copy-code (or one-tap) button:
	// its body is the vendor's preset "{{1}} is your verification code."
	"otp_code/en_US": {Category: "AUTHENTICATION", Body: 1, Buttons: map[int]string{0: "url"}},
	"otp_code/hi":    {Category: "AUTHENTICATION", Body: 1, Buttons: map[int]string{0: "url"}},
	// A template approved with named parameters, a text header, a URL
	// button with a variable and a quick-reply button.
	"order_shipped/en_US": {Category: "UTILITY", Named: []string{"customer_name", "order_id"}, Header: "text",
		Buttons: map[int]string{0: "url", 1: "quick_reply"}},
	"summer_sale/en_US": {Category: "MARKETING", Body: 1, Buttons: map[int]string{0: "copy_code"}},
}

// DefaultWindow are the recipients who wrote in the last 24 hours, unless
// Config.Window says otherwise.
var DefaultWindow = []string{"919876543210", "919812345678"}

// Config configures a Server.
type Config struct {
	// Token is the bearer token requests must carry. Required.
	Token string
	// PhoneNumberID and Version make the endpoint's path
	// /{Version}/{PhoneNumberID}/messages. Defaults above.
	PhoneNumberID string
	Version       string
	// Templates are the approved templates; nil: DefaultTemplates.
	Templates map[string]Template
	// Window lists the recipients (country code and number) to whom free
	// text may go; nil: DefaultWindow.
	Window []string
	// AppSecret signs the status webhooks (X-Hub-Signature-256).
	AppSecret string
	// WebhookURL is where status webhooks are posted.
	WebhookURL string
}

// Error is one of the vendor's error answers.
type Error struct {
	Status  int // HTTP status
	Code    int
	Message string
	Details string
}

// The vendor's answers for common failures.
var (
	ServiceUnavailable = Error{503, 131016, "(#131016) Service unavailable", "A service is temporarily unavailable."}
	SomethingWentWrong = Error{500, 131000, "(#131000) Something went wrong", "Message failed to send because of an unknown error."}
	ThroughputHit      = Error{400, 130429, "(#130429) Rate limit hit", "Cloud API message throughput has been reached."}
	Undeliverable      = Error{400, 131026, "(#131026) Message Undeliverable", "Message failed to send because of an unknown error."}
	// ReEngagement is what a status webhook reports for free text sent
	// outside the customer service window.
	ReEngagement = Error{400, 131047, "Re-engagement message", "Message failed to send because more than 24 hours have passed since the customer last replied to this number."}
)

// Fault is how the Server fails the next valid message (FailNextWithFault).
type Fault struct {
	Graph  *Error // answer with this vendor error
	Proxy  int    // answer with this status and a proxy's HTML page
	Accept bool   // take (and count) the message before failing
	Lose   bool   // take the message, then drop the connection unanswered
}

// Message is a message the Server accepted.
type Message struct {
	// ID is the wamid the Server answered.
	ID string
	To string
	// Body is the request body, decoded.
	Body map[string]any
	// OutsideWindow reports free text to a recipient outside the window:
	// the vendor answered 200 and owes a failed status.
	OutsideWindow bool
}

// Server is the fake vendor. Its methods are safe for concurrent use.
//
// Its network faults are vendorhttptest.Faults': SetLatency delays every
// answer once the request's body is read; FailNextHTTP's proxy page, and
// FailNextHTTPAfterAccept's and BreakNext's faults after the vendor took
// the message, fire at the next valid message, as FailNextWithFault's do.
type Server struct {
	*httptest.Server
	vendorhttptest.Faults
	cfg Config

	mu         sync.Mutex
	webhookURL string
	posts      int // message requests that reached the fake
	accepted   []Message
	flushed    int    // accepted messages whose statuses Flush posted
	fault      *Fault // a vendor error for the next valid message
	window     map[string]bool
}

// NewServer starts a Server; Close stops it.
func NewServer(cfg Config) *Server {
	cfg.PhoneNumberID = cmp.Or(cfg.PhoneNumberID, DefaultPhoneNumberID)
	cfg.Version = cmp.Or(cfg.Version, DefaultVersion)
	if cfg.Templates == nil {
		cfg.Templates = DefaultTemplates
	}
	if cfg.Window == nil {
		cfg.Window = DefaultWindow
	}
	s := &Server{cfg: cfg, window: make(map[string]bool), webhookURL: cfg.WebhookURL}
	for _, to := range cfg.Window {
		s.window[to] = true
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// reply answers status with v as JSON, under the vendor's Content-Type.
func reply(w http.ResponseWriter, status int, v any) {
	vendorhttptest.ReplyJSONAs(w, "application/json; charset=UTF-8", status, v)
}

func replyErr(w http.ResponseWriter, e Error) {
	body := map[string]any{
		"message":    e.Message,
		"type":       "OAuthException",
		"code":       e.Code,
		"fbtrace_id": "AbCdEfGh123",
	}
	if e.Details != "" {
		body["error_data"] = map[string]any{"messaging_product": "whatsapp", "details": e.Details}
	}
	reply(w, e.Status, map[string]any{"error": body})
}

func invalidParam(details string) Error {
	return Error{400, 100, "(#100) Invalid parameter", details}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if !s.Wait(w, r) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
		replyErr(w, Error{401, 190, "Invalid OAuth access token - Cannot parse access token", ""})
		return
	}
	base := "/" + s.cfg.Version + "/" + s.cfg.PhoneNumberID
	if r.Method == http.MethodGet && r.URL.Path == base {
		reply(w, 200, map[string]any{"id": s.cfg.PhoneNumberID})
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != base+"/messages" {
		replyErr(w, Error{400, 100, "Unsupported post request. Object with ID does not exist", ""})
		return
	}
	s.mu.Lock()
	s.posts++
	s.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		replyErr(w, invalidParam("expected a JSON body"))
		return
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		replyErr(w, invalidParam("the body is not JSON"))
		return
	}
	if e, bad := s.validate(m); bad {
		replyErr(w, e)
		return
	}
	if s.Proxied(w) {
		return
	}
	s.mu.Lock()
	ft := s.fault
	s.fault = nil
	s.mu.Unlock()
	if ft != nil && !ft.Accept {
		fail(w, ft)
		return
	}
	to := m["to"].(string)
	s.mu.Lock()
	id := fmt.Sprintf("wamid.HBgMOTE5ODc2NTQzMjEwFQIAERgS%06d", len(s.accepted)+1)
	s.accepted = append(s.accepted, Message{ID: id, To: to, Body: m, OutsideWindow: m["type"] == "text" && !s.window[to]})
	s.mu.Unlock()
	if s.AfterAccept(w) {
		return
	}
	if ft != nil {
		fail(w, ft)
		return
	}
	reply(w, 200, map[string]any{
		"messaging_product": "whatsapp",
		"contacts":          []any{map[string]any{"input": to, "wa_id": to}},
		"messages":          []any{map[string]any{"id": id, "message_status": "accepted"}},
	})
}

// validate checks a message body as the vendor does.
func (s *Server) validate(m map[string]any) (Error, bool) {
	if m["messaging_product"] != "whatsapp" {
		return invalidParam("The parameter messaging_product is required."), true
	}
	if rt, ok := m["recipient_type"]; ok && rt != "individual" {
		return invalidParam("recipient_type must be individual"), true
	}
	to, _ := m["to"].(string)
	if len(to) != 12 || !strings.HasPrefix(to, "91") {
		return invalidParam("to must be a phone number with its country code"), true
	}
	typ, _ := m["type"].(string)
	obj, _ := m[typ].(map[string]any)
	if obj == nil {
		return invalidParam(fmt.Sprintf("Param %s is required for type %s", typ, typ)), true
	}
	for _, other := range []string{"text", "template", "document", "image", "video"} {
		if other != typ && m[other] != nil {
			return invalidParam("only one message object is allowed"), true
		}
	}
	switch typ {
	case "text":
		body, _ := obj["body"].(string)
		if body == "" || len([]rune(body)) > 4096 {
			return invalidParam("text.body is required and at most 4096 characters"), true
		}
	case "document", "image", "video":
		link, _ := obj["link"].(string)
		if !strings.HasPrefix(link, "https://") {
			return invalidParam(typ + ".link must be an https URL"), true
		}
		if typ != "document" && obj["filename"] != nil {
			return invalidParam("filename is only for documents"), true
		}
		if c, _ := obj["caption"].(string); len([]rune(c)) > 1024 {
			return invalidParam("caption is at most 1024 characters"), true
		}
	case "template":
		name, _ := obj["name"].(string)
		lang, _ := obj["language"].(map[string]any)
		code, _ := lang["code"].(string)
		tpl, ok := s.cfg.Templates[name+"/"+code]
		if !ok {
			return Error{404, 132001, "(#132001) Template name does not exist in the translation", fmt.Sprintf("template name (%s) does not exist in %s", name, code)}, true
		}
		comps, _ := obj["components"].([]any)
		return checkTemplate(tpl, comps)
	default:
		return invalidParam("unsupported message type " + typ), true
	}
	return Error{}, false
}

// fail answers for a vendor error the vendor gives (ft.Graph; none for a
// Fault that asks for nothing: an empty 200).
func fail(w http.ResponseWriter, ft *Fault) {
	if ft.Graph != nil {
		replyErr(w, *ft.Graph)
	}
}

// FailNextWith makes the vendor refuse the next valid message with e.
func (s *Server) FailNextWith(e Error) { s.FailNextWithFault(Fault{Graph: &e}) }

// FailNextWithFault makes the vendor fail the next valid message as ft
// says: ft.Lose is BreakNext, ft.Proxy FailNextHTTPAfterAccept with
// ft.Accept and FailNextHTTP without, and ft.Graph the vendor's error
// answer, after it took the message with ft.Accept. Lose comes before
// Proxy, and Proxy before Graph, when ft sets more than one.
func (s *Server) FailNextWithFault(ft Fault) {
	switch {
	case ft.Lose:
		s.BreakNext()
	case ft.Proxy != 0 && ft.Accept:
		s.FailNextHTTPAfterAccept(ft.Proxy)
	case ft.Proxy != 0:
		s.FailNextHTTP(ft.Proxy)
	default:
		s.mu.Lock()
		defer s.mu.Unlock()
		s.fault = &ft
	}
}

// Requests returns how many message requests reached the fake.
func (s *Server) Requests() int { return vendorhttptest.Locked(&s.mu, func() int { return s.posts }) }

// Count returns how many messages the fake accepted.
func (s *Server) Count() int {
	return vendorhttptest.Locked(&s.mu, func() int { return len(s.accepted) })
}

// Accepted returns the messages the fake accepted, oldest first.
func (s *Server) Accepted() []Message {
	return vendorhttptest.Locked(&s.mu, func() []Message { return append([]Message(nil), s.accepted...) })
}

// Last returns the body of the last accepted message, or nil.
func (s *Server) Last() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.accepted) == 0 {
		return nil
	}
	return s.accepted[len(s.accepted)-1].Body
}

// Status is one entry of a status webhook's statuses[].
type Status struct {
	// ID is the message's wamid.
	ID string
	// Status is sent, delivered, read or failed.
	Status      string
	Timestamp   time.Time
	RecipientID string
	// CallbackData is the message's biz_opaque_callback_data, echoed.
	CallbackData string
	Errors       []Error
}

// StatusOf returns the status an accepted message's webhook would carry:
// its ID, recipient and callback data, the status, now, and errs.
// ok is false when the fake accepted no message of that ID.
func (s *Server) StatusOf(id, status string, errs ...Error) (st Status, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.accepted {
		if m.ID == id {
			data, _ := m.Body["biz_opaque_callback_data"].(string)
			return Status{ID: id, Status: status, Timestamp: time.Now(), RecipientID: m.To, CallbackData: data, Errors: errs}, true
		}
	}
	return Status{}, false
}

// Flush posts, in one webhook, what the vendor reports for every message
// accepted since the last Flush: failed with ReEngagement for free text
// outside the window, sent and delivered for the others. It returns
// Post's error (a *vendorhttptest.CallbackError for an answer other than
// 2xx); the messages then stay owed.
func (s *Server) Flush(ctx context.Context) error {
	s.mu.Lock()
	owed := append([]Message(nil), s.accepted[s.flushed:]...)
	s.mu.Unlock()
	var sts []Status
	for _, m := range owed {
		if m.OutsideWindow {
			st, _ := s.StatusOf(m.ID, "failed", ReEngagement)
			sts = append(sts, st)
			continue
		}
		for _, name := range []string{"sent", "delivered"} {
			st, _ := s.StatusOf(m.ID, name)
			sts = append(sts, st)
		}
	}
	if len(sts) == 0 {
		return nil
	}
	if err := s.Post(ctx, sts...); err != nil {
		return err
	}
	s.mu.Lock()
	s.flushed += len(owed)
	s.mu.Unlock()
	return nil
}

// SetWebhookURL changes where status webhooks go (Config.WebhookURL),
// for a receiver started after the Server.
func (s *Server) SetWebhookURL(u string) { vendorhttptest.WithLock(&s.mu, func() { s.webhookURL = u }) }

// Post posts one status webhook carrying sts to the webhook URL,
// signed with Config.AppSecret, as vendorhttptest.Post does: a
// *vendorhttptest.CallbackError when the receiver answered other than
// 2xx, and an error that never names the URL when the post failed.
func (s *Server) Post(ctx context.Context, sts ...Status) error {
	body := Payload(s.cfg.PhoneNumberID, sts...)
	s.mu.Lock()
	target := s.webhookURL
	s.mu.Unlock()
	return vendorhttptest.Post(ctx, nil, "cloudchattest", vendorhttptest.Report{URL: target, ContentType: "application/json",
		Body: body, Header: http.Header{"X-Hub-Signature-256": {Sign(s.cfg.AppSecret, body)}}})
}

// Payload returns the body of a status webhook for the phone number ID
// carrying sts, as the vendor writes it.
func Payload(phoneNumberID string, sts ...Status) []byte {
	statuses := make([]any, len(sts))
	for i, st := range sts {
		entry := map[string]any{
			"id":           st.ID,
			"status":       st.Status,
			"timestamp":    strconv.FormatInt(st.Timestamp.Unix(), 10),
			"recipient_id": st.RecipientID,
		}
		if st.CallbackData != "" {
			entry["biz_opaque_callback_data"] = st.CallbackData
		}
		if st.Status != "failed" {
			entry["conversation"] = map[string]any{"id": "CONVERSATION_ID", "origin": map[string]any{"type": "utility"}}
			entry["pricing"] = map[string]any{"billable": true, "pricing_model": "CBP", "category": "utility"}
		}
		if len(st.Errors) > 0 {
			errs := make([]any, len(st.Errors))
			for j, e := range st.Errors {
				errs[j] = map[string]any{"code": e.Code, "title": e.Message, "message": e.Message,
					"error_data": map[string]any{"details": e.Details},
					"href":       "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"}
			}
			entry["errors"] = errs
		}
		statuses[i] = entry
	}
	body, _ := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry": []any{map[string]any{
			"id": DefaultWABAID,
			"changes": []any{map[string]any{
				"field": "messages",
				"value": map[string]any{
					"messaging_product": "whatsapp",
					"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": phoneNumberID},
					"statuses":          statuses,
				},
			}},
		}},
	})
	return body
}

// Sign returns the X-Hub-Signature-256 header the vendor sends with body:
// "sha256=" and the hex HMAC-SHA256 of the raw body under the app secret.
func Sign(appSecret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
