package qrchat_test

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

const (
	testKey     = "waha-key-3c9d1e"
	testSession = "default"
)

// sent is a message the fake gateway accepted.
type sent struct {
	// ID is the engine's bare message ID; WAHA serializes it as
	// true_<ChatID>_<ID>.
	ID      string
	Path    string
	ChatID  string
	Text    string
	Caption string
	// LinkPreview is the text's linkPreview; nil when the body had none.
	LinkPreview *bool
	MIME        string
	Name        string
	Data        []byte
}

// fakeWAHA behaves like a WAHA-style gateway: key, session state, request
// validation and the engines' answer shapes, errors included. Failures
// apply to the next valid message: the suite's (failNext), a raw answer of
// the gateway's, given before or after the engine took the message
// (failNextRaw, failNextRawAfterAccept), or a proxy's (failNextProxy, the
// Faults' FailNextHTTP and FailNextHTTPAfterAccept); BreakNext drops the
// connection after the engine took it. SetLatency delays every answer
// once the request's body is read.
type fakeWAHA struct {
	*httptest.Server
	vendorhttptest.Faults

	mu          sync.Mutex
	status      string // session status
	engine      string // WEBJS, NOWEB or GOWS: the shape of send answers
	posts       int    // send requests that reached the fake
	accepted    []sent
	sessionGets int
	fail        providertest.Failure
	failRaw     *rawReply
	core        bool              // WAHA Core: media are "available only in Plus version"
	missing     map[string]bool   // numbers check-exists says are not on the network
	remap       map[string]string // numbers check-exists names another chat ID for
	checks      int               // check-exists questions
	captured    []capturedRequest // every request, for golden files
	aborted     chan string       // paths of requests whose body was cut short

	hookURL string    // where events are posted (setWebhook)
	hookKey string    // the webhook's hmac.key; empty signs nothing
	events  int       // events built, for their IDs
	clock   time.Time // the last event's time, so that each is later
}

type rawReply struct {
	status      int
	contentType string
	body        string
	accept      bool // the engine took the message before this answer
	// check makes it the answer to the next check-exists question
	// instead of the next message.
	check bool
	// engine, when set, is an engine error's message: the answer is
	// WAHA's HTTP 500 for it, built from the request (status and body
	// are not used).
	engine string
}

var chatIDRE = regexp.MustCompile(`^([0-9]{8,15}@c\.us|[0-9]{8,20}@lid)$`)

func newFakeWAHA(t *testing.T) *fakeWAHA {
	f := &fakeWAHA{status: "WORKING", engine: "WEBJS", aborted: make(chan string, 16)}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// reply answers status with v as JSON, under the vendor's Content-Type.
func reply(w http.ResponseWriter, status int, v any) {
	vendorhttptest.ReplyJSONAs(w, "application/json; charset=utf-8", status, v)
}

func badRequest(w http.ResponseWriter, msgs ...string) {
	reply(w, 400, map[string]any{"statusCode": 400, "message": msgs, "error": "Bad Request"})
}

func (f *fakeWAHA) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		// The body never came whole (the client cut it short): WAHA's
		// body parser fails the request, and nothing is sent.
		select {
		case f.aborted <- r.URL.Path:
		default:
		}
		return
	}
	if !f.Wait(w, r) {
		return
	}
	if r.Header.Get("X-Api-Key") != testKey {
		reply(w, 401, map[string]any{"message": "Unauthorized", "statusCode": 401})
		return
	}
	f.mu.Lock()
	status := f.status
	f.mu.Unlock()
	f.mu.Lock()
	f.captured = append(f.captured, capturedRequest{Method: r.Method, Target: r.URL.RequestURI(), Body: raw})
	f.mu.Unlock()
	if r.Method == http.MethodGet && r.URL.Path == "/api/contacts/check-exists" {
		f.checkExists(w, r, status)
		return
	}
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/sessions/") {
		f.mu.Lock()
		f.sessionGets++
		f.mu.Unlock()
		name := strings.TrimPrefix(r.URL.Path, "/api/sessions/")
		if name != testSession {
			reply(w, 404, map[string]any{"statusCode": 404, "message": fmt.Sprintf("Session %q not found", name), "error": "Not Found"})
			return
		}
		reply(w, 200, map[string]any{"name": name, "status": status, "config": map[string]any{},
			"me": map[string]any{"id": "919000000000@c.us", "pushName": "Acme"}, "engine": map[string]any{"engine": f.engine}})
		return
	}
	if r.Method != http.MethodPost {
		reply(w, 404, map[string]any{"statusCode": 404, "message": "Cannot " + r.Method + " " + r.URL.Path, "error": "Not Found"})
		return
	}
	f.mu.Lock()
	f.posts++
	f.mu.Unlock()
	var in struct {
		Session     string `json:"session"`
		ChatID      string `json:"chatId"`
		Text        string `json:"text"`
		Caption     string `json:"caption"`
		LinkPreview *bool  `json:"linkPreview"`
		AsNote      *bool  `json:"asNote"`
		Convert     *bool  `json:"convert"`
		File        *struct {
			MIMEType string `json:"mimetype"`
			Filename string `json:"filename"`
			Data     string `json:"data"`
			URL      string `json:"url"`
		} `json:"file"`
	}
	if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &in) != nil {
		badRequest(w, "body must be JSON")
		return
	}
	if in.Session != testSession {
		reply(w, 404, map[string]any{"statusCode": 404, "message": "Session not found", "error": "Not Found"})
		return
	}
	if status != "WORKING" {
		reply(w, 422, map[string]any{"error": "Session status is not as expected. Try again later or restart the session",
			"session": in.Session, "status": status, "expected": []string{"WORKING"}})
		return
	}
	if !chatIDRE.MatchString(in.ChatID) {
		badRequest(w, "chatId must be a phone number followed by @c.us")
		return
	}
	s := sent{Path: r.URL.Path, ChatID: in.ChatID, Text: in.Text, Caption: in.Caption, LinkPreview: in.LinkPreview}
	switch r.URL.Path {
	case "/api/sendText":
		if in.Text == "" {
			badRequest(w, "text should not be empty")
			return
		}
	case "/api/sendFile", "/api/sendImage", "/api/sendVideo":
		f.mu.Lock()
		core := f.core
		f.mu.Unlock()
		if core {
			// WAHA Core's engines throw AvailableInPlusVersion from
			// sendImage, sendFile and sendVideo, after the session
			// check; Nest answers it as an UnprocessableEntityException.
			reply(w, 422, map[string]any{"statusCode": 422, "error": "Unprocessable Entity",
				"message": "The feature is available only in Plus version for 'WEBJS' engine. Check this out: https://waha.devlike.pro/"})
			return
		}
		if in.File == nil || in.File.MIMEType == "" || (in.File.Data == "") == (in.File.URL == "") {
			badRequest(w, "file must have a mimetype and either data or url")
			return
		}
		if in.File.URL != "" {
			badRequest(w, "this test gateway must never be given a URL")
			return
		}
		data, err := base64.StdEncoding.DecodeString(in.File.Data)
		if err != nil {
			badRequest(w, "file.data must be base64")
			return
		}
		if r.URL.Path == "/api/sendImage" && !strings.HasPrefix(in.File.MIMEType, "image/") {
			badRequest(w, "sendImage needs an image mimetype")
			return
		}
		if r.URL.Path == "/api/sendVideo" {
			// MessageVideoRequest: convert is required; asNote sends a
			// round video note, which the provider never wants.
			if in.Convert == nil || in.AsNote == nil || *in.AsNote {
				badRequest(w, "convert must be a boolean value", "asNote must be false for a plain video")
				return
			}
			if !strings.HasPrefix(in.File.MIMEType, "video/") {
				badRequest(w, "sendVideo needs a video mimetype")
				return
			}
		}
		s.MIME, s.Name, s.Data = in.File.MIMEType, in.File.Filename, data
	default:
		reply(w, 404, map[string]any{"statusCode": 404, "message": "Cannot POST " + r.URL.Path, "error": "Not Found"})
		return
	}
	f.mu.Lock()
	fail, failRaw := f.fail, f.failRaw
	f.fail = 0
	if failRaw != nil && failRaw.check {
		failRaw = nil // for the next check-exists question
	} else {
		f.failRaw = nil
	}
	f.mu.Unlock()
	if failRaw != nil && failRaw.engine != "" {
		failRaw = engineError(r, raw, failRaw)
	}
	switch {
	case failRaw != nil && !failRaw.accept:
		failRaw.write(w)
		return
	case f.Proxied(w):
		return
	case fail == providertest.Temporary:
		// The session dropped out between the status check and the send.
		reply(w, 422, map[string]any{"error": "Session status is not as expected. Try again later or restart the session",
			"session": in.Session, "status": "STARTING", "expected": []string{"WORKING"}})
		return
	case fail == providertest.RateLimited:
		w.Header().Set("Retry-After", "1")
		reply(w, 429, map[string]any{"statusCode": 429, "message": "ThrottlerException: Too Many Requests"})
		return
	case fail == providertest.Permanent:
		badRequest(w, "chatId: the number is not registered on the chat network")
		return
	case fail == providertest.VendorErrorOn5xx:
		// An HTTP error the gateway raises itself, in its own body.
		reply(w, http.StatusServiceUnavailable, map[string]any{"statusCode": 503, "message": "Service Unavailable", "error": "Service Unavailable"})
		return
	}
	f.mu.Lock()
	n := len(f.accepted) + 1
	s.ID = fmt.Sprintf("3EB0%016X", n)
	f.accepted = append(f.accepted, s)
	engine := f.engine
	f.mu.Unlock()
	switch {
	case failRaw != nil:
		failRaw.write(w)
		return
	case f.AfterAccept(w):
		return
	}
	id := s.ID
	switch engine {
	case "NOWEB":
		reply(w, 201, map[string]any{"key": map[string]any{"remoteJid": strings.Replace(in.ChatID, "c.us", "s.whatsapp.net", 1), "fromMe": true, "id": id},
			"message": map[string]any{"extendedTextMessage": map[string]any{"text": in.Text}}, "messageTimestamp": "1760022498", "status": "PENDING"})
	case "GOWS":
		reply(w, 201, map[string]any{"id": id, "timestamp": 1760022498})
	default:
		ser := "true_" + in.ChatID + "_" + id
		reply(w, 201, map[string]any{
			"_data": map[string]any{"id": map[string]any{"fromMe": true, "remote": in.ChatID, "id": id, "_serialized": ser},
				"body": in.Text, "type": "chat", "ack": 0},
			"id":        map[string]any{"fromMe": true, "remote": in.ChatID, "id": id, "_serialized": ser},
			"timestamp": 1760022498, "from": "919000000000@c.us", "to": in.ChatID, "fromMe": true, "body": in.Text,
		})
	}
}

// capturedRequest is a request as the fake received it.
type capturedRequest struct {
	Method string
	Target string // path and query
	Body   []byte
}

// checkExists answers GET /api/contacts/check-exists?phone=...&session=...
// as WAHA's ContactsController does: CheckNumberStatusQuery in, and
// WANumberExistResult out, {"numberExists": bool, "chatId": "..."} with
// chatId only for a number that exists; the session must be WORKING.
func (f *fakeWAHA) checkExists(w http.ResponseWriter, r *http.Request, status string) {
	q := r.URL.Query()
	phone, session := q.Get("phone"), q.Get("session")
	if session != testSession {
		reply(w, 404, map[string]any{"statusCode": 404, "message": "Session not found", "error": "Not Found"})
		return
	}
	if status != "WORKING" {
		reply(w, 422, map[string]any{"error": "Session status is not as expected. Try again later or restart the session",
			"session": session, "status": status, "expected": []string{"WORKING"}})
		return
	}
	if !regexp.MustCompile(`^[0-9]{8,15}$`).MatchString(phone) {
		badRequest(w, "phone must be the number's digits, with its country code")
		return
	}
	f.mu.Lock()
	f.checks++
	missing, other := f.missing[phone], f.remap[phone]
	failRaw := f.failRaw
	if failRaw != nil && failRaw.check {
		f.failRaw = nil
	}
	f.mu.Unlock()
	switch {
	case failRaw != nil && failRaw.check:
		failRaw.write(w)
	case missing:
		reply(w, 200, map[string]any{"numberExists": false})
	case other != "":
		reply(w, 200, map[string]any{"numberExists": true, "chatId": other})
	default:
		reply(w, 200, map[string]any{"numberExists": true, "chatId": phone + "@c.us"})
	}
}

// setMissing makes check-exists say that phone is not on the network.
func (f *fakeWAHA) setMissing(phone string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.missing == nil {
		f.missing = map[string]bool{}
	}
	f.missing[phone] = true
}

// setRemap makes check-exists name chatID for phone.
func (f *fakeWAHA) setRemap(phone, chatID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.remap == nil {
		f.remap = map[string]string{}
	}
	f.remap[phone] = chatID
}

// failNextCheck makes the next check-exists question fail with status and
// a JSON body.
func (f *fakeWAHA) failNextCheck(status int, body string) {
	f.setRaw(rawReply{status: status, contentType: "application/json", body: body, check: true})
}

// checkCount returns how many check-exists questions the fake answered.
func (f *fakeWAHA) checkCount() int {
	return vendorhttptest.Locked(&f.mu, func() int { return f.checks })
}

// requestsSeen returns the requests the fake received, in order.
func (f *fakeWAHA) requestsSeen() []capturedRequest {
	return vendorhttptest.Locked(&f.mu, func() []capturedRequest { return append([]capturedRequest(nil), f.captured...) })
}

func (r *rawReply) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", r.contentType)
	w.WriteHeader(r.status)
	io.WriteString(w, r.body)
}

// failNext makes the gateway fail the next valid message as the suite
// asks: Temporary, the session dropped out (422); RateLimited, 429;
// Permanent, a validation error (400); AnswerLost, the engine takes the
// message and the connection drops (BreakNext); VendorErrorOn5xx, an HTTP
// 503 the gateway raises itself. It reports false for other kinds.
func (f *fakeWAHA) failNext(kind providertest.Failure) bool {
	switch kind {
	case providertest.Temporary, providertest.RateLimited, providertest.Permanent, providertest.VendorErrorOn5xx:
	case providertest.AnswerLost:
		f.BreakNext()
		return true
	default:
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = kind
	return true
}

// failNextRaw makes the gateway refuse the next valid message with status
// and a JSON body.
func (f *fakeWAHA) failNextRaw(status int, body string) {
	f.setRaw(rawReply{status: status, contentType: "application/json", body: body})
}

// failNextRawAfterAccept makes the engine take the next valid message and
// the gateway then answer status and a JSON body, as WAHA does when its
// engine fails after sending.
func (f *fakeWAHA) failNextRawAfterAccept(status int, body string) {
	f.setRaw(rawReply{status: status, contentType: "application/json", body: body, accept: true})
}

// failNextEngine makes the gateway's engine fail the next valid message
// with msg, after it sent the message when accept is set, and the gateway
// answer as WAHA does (engineError).
func (f *fakeWAHA) failNextEngine(msg string, accept bool) {
	f.setRaw(rawReply{engine: msg, accept: accept})
}

// engineError is WAHA's answer to an engine error (an exception that is
// not an HTTP one): HTTP 500 with the exception, an echo of the request
// and the version, as its exception filter writes it (the shape seen in
// devlikeapro/waha#1349, #1449, #1714, #1905).
func engineError(r *http.Request, raw []byte, rr *rawReply) *rawReply {
	var echo any
	if json.Unmarshal(raw, &echo) != nil {
		echo = string(raw)
	}
	body, err := json.Marshal(map[string]any{
		"statusCode": 500,
		"timestamp":  "2025-09-03T10:00:45.551Z",
		"exception": map[string]any{
			"message": rr.engine,
			"name":    "Error",
			"stack":   "Error: " + rr.engine + "\n    at WhatsappSessionWebJSCore.sendText (/app/dist/core/engines/webjs/session.webjs.core.js:612:29)",
		},
		"request": map[string]any{"path": r.URL.Path, "method": r.Method, "body": echo, "query": map[string]any{}},
		"version": map[string]any{"version": "2025.9.1", "engine": "WEBJS", "tier": "PLUS", "browser": "/usr/bin/chromium"},
	})
	if err != nil {
		panic(err)
	}
	return &rawReply{status: 500, contentType: "application/json; charset=utf-8", body: string(body), accept: rr.accept}
}

// failNextProxy makes a proxy in front of the gateway answer the next valid
// message with status and its HTML page; with accept, the gateway took the
// message behind it.
func (f *fakeWAHA) failNextProxy(status int, accept bool) {
	if accept {
		f.FailNextHTTPAfterAccept(status)
	} else {
		f.FailNextHTTP(status)
	}
}

func (f *fakeWAHA) setRaw(r rawReply) { vendorhttptest.WithLock(&f.mu, func() { f.failRaw = &r }) }

// requests returns how many send requests reached the fake.
func (f *fakeWAHA) requests() int { return vendorhttptest.Locked(&f.mu, func() int { return f.posts }) }

// setCore makes the fake WAHA Core (true) or WAHA Plus (false).
func (f *fakeWAHA) setCore(core bool) { vendorhttptest.WithLock(&f.mu, func() { f.core = core }) }

func (f *fakeWAHA) setStatus(s string) { vendorhttptest.WithLock(&f.mu, func() { f.status = s }) }

func (f *fakeWAHA) setEngine(e string) { vendorhttptest.WithLock(&f.mu, func() { f.engine = e }) }

func (f *fakeWAHA) count() int {
	return vendorhttptest.Locked(&f.mu, func() int { return len(f.accepted) })
}

func (f *fakeWAHA) gets() int {
	return vendorhttptest.Locked(&f.mu, func() int { return f.sessionGets })
}

func (f *fakeWAHA) last() sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.accepted) == 0 {
		return sent{}
	}
	return f.accepted[len(f.accepted)-1]
}

// The fake's webhooks: WAHA posts one event per request to each URL of
// the session's config.webhooks, as JSON, and, when the webhook has an
// hmac.key, signs the body: X-Webhook-Hmac is the hex HMAC-SHA512 of the
// raw body under the key, X-Webhook-Hmac-Algorithm is sha512. The fake
// posts only when a test asks (ack, deliver, post), synchronously, so
// that a test knows the receiver's answer before it looks at a record.

// fakeMe is the session's own account, as WAHA's "me" shows it.
var fakeMe = map[string]any{"id": "919000000000@c.us", "pushName": "Acme"}

// fakeAckNames are WAHA's names of the ack levels.
var fakeAckNames = map[int]string{-1: "ERROR", 0: "PENDING", 1: "SERVER", 2: "DEVICE", 3: "READ", 4: "PLAYED"}

// setWebhook configures the session's webhook: events go to url, signed
// with key (the webhook's hmac.key) when it is not empty.
func (f *fakeWAHA) setWebhook(url, key string) {
	vendorhttptest.WithLock(&f.mu, func() { f.hookURL, f.hookKey = url, key })
}

// message returns the accepted message that id names: its serialized
// (true_<chat>_<id>) or bare ID.
func (f *fakeWAHA) message(t *testing.T, id string) sent {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.accepted {
		if id == s.ID || id == "true_"+s.ChatID+"_"+s.ID {
			return s
		}
	}
	t.Fatalf("the fake gateway accepted no message %q", id)
	return sent{}
}

// ackEvent returns the message.ack event at level for the accepted
// message id names, as the current engine writes it; edit, when given,
// changes the payload before it is encoded.
func (f *fakeWAHA) ackEvent(t *testing.T, id string, level int, edit ...func(payload map[string]any)) []byte {
	t.Helper()
	s := f.message(t, id)
	return f.ackEventFor(s.ChatID, s.ID, level, edit...)
}

// ackEventFor is ackEvent for any message the session sent to chatID
// under the bare ID id, accepted through the fake or not.
func (f *fakeWAHA) ackEventFor(chatID, id string, level int, edit ...func(payload map[string]any)) []byte {
	f.mu.Lock()
	engine := f.engine
	f.mu.Unlock()
	ser := "true_" + chatID + "_" + id
	name, ok := fakeAckNames[level]
	if !ok {
		name = "UNKNOWN"
	}
	var p map[string]any
	switch engine {
	case "NOWEB", "GOWS":
		// The engine's update names the chat as "from"; "to" is set only
		// for group messages.
		p = map[string]any{"id": ser, "from": chatID, "to": nil, "participant": nil,
			"fromMe": true, "ack": level, "ackName": name}
	default:
		// WEBJS sends the whole message, with the time it was sent (not
		// the time of the ack) as its timestamp.
		p = map[string]any{"id": ser, "timestamp": 1760022498, "from": fakeMe["id"], "fromMe": true,
			"source": "api", "to": chatID, "participant": nil, "body": "", "hasMedia": false,
			"ack": level, "ackName": name,
			"_data": map[string]any{"id": map[string]any{"fromMe": true, "remote": chatID, "id": id, "_serialized": ser},
				"ack": level, "type": "chat"}}
	}
	for _, e := range edit {
		e(p)
	}
	return f.envelope("message.ack", p)
}

// envelope wraps payload as WAHA wraps every event: a lower-case ULID
// event ID, the event's time in Unix milliseconds, the session, its
// account and the engine.
func (f *fakeWAHA) envelope(event string, payload any) []byte {
	f.mu.Lock()
	f.events++
	n := f.events
	now := time.Now().Truncate(time.Millisecond)
	if !now.After(f.clock) {
		now = f.clock.Add(time.Millisecond)
	}
	f.clock = now
	engine := f.engine
	f.mu.Unlock()
	body, err := json.Marshal(map[string]any{
		"id":          fmt.Sprintf("evt_01k%023d", n),
		"timestamp":   now.UnixMilli(),
		"event":       event,
		"session":     testSession,
		"metadata":    map[string]string{},
		"me":          fakeMe,
		"payload":     payload,
		"engine":      engine,
		"environment": map[string]any{"version": "2025.9.1", "engine": engine, "tier": "CORE", "browser": nil},
	})
	if err != nil {
		panic(err)
	}
	return body
}

// headers returns the headers WAHA sends with body: the HMAC pair when
// the webhook has a key.
func (f *fakeWAHA) headers(body []byte) http.Header {
	f.mu.Lock()
	key, n := f.hookKey, f.events
	f.mu.Unlock()
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "WAHA/2025.9.1")
	h.Set("X-Webhook-Request-Id", fmt.Sprintf("req_01k%023d", n))
	h.Set("X-Webhook-Timestamp", strconv.FormatInt(time.Now().UnixMilli(), 10))
	if key != "" {
		h.Set("X-Webhook-Hmac", wahaHMAC(key, body))
		h.Set("X-Webhook-Hmac-Algorithm", "sha512")
	}
	return h
}

// wahaHMAC is WAHA's signature of body under key: the hex HMAC-SHA512.
func wahaHMAC(key string, body []byte) string {
	m := hmac.New(sha512.New, []byte(key))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// post sends body to the webhook URL with hdr, over HTTP, and returns
// the receiver's status.
func (f *fakeWAHA) post(t *testing.T, body []byte, hdr http.Header) int {
	t.Helper()
	target := vendorhttptest.Locked(&f.mu, func() string { return f.hookURL })
	if target == "" {
		t.Fatal("the fake gateway has no webhook: call setWebhook")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	return vendorhttptest.Do(t, client, http.MethodPost, target, body, hdr).StatusCode
}

// deliver posts body as WAHA does, signed when the webhook has a key.
func (f *fakeWAHA) deliver(t *testing.T, body []byte) int {
	t.Helper()
	return f.post(t, body, f.headers(body))
}

// ack posts the message.ack event at level for the accepted message id
// names and returns the receiver's status.
func (f *fakeWAHA) ack(t *testing.T, id string, level int) int {
	t.Helper()
	return f.deliver(t, f.ackEvent(t, id, level))
}
