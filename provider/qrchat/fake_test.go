package qrchat_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/provider/providertest"
)

const (
	testKey     = "waha-key-3c9d1e"
	testSession = "default"
)

// sent is a message the fake gateway accepted.
type sent struct {
	Path    string
	ChatID  string
	Text    string
	Caption string
	MIME    string
	Name    string
	Data    []byte
}

// fakeWAHA behaves like a WAHA-style gateway: key, session state, request
// validation and the engines' answer shapes, errors included. Failures
// apply to the next valid message: the suite's (failNext), a raw answer of
// the gateway's or a proxy's, given before or after the engine took the
// message (failNextRaw, failNextRawAfterAccept, failNextProxy).
type fakeWAHA struct {
	*httptest.Server

	mu          sync.Mutex
	status      string // session status
	engine      string // WEBJS, NOWEB or GOWS: the shape of send answers
	posts       int    // send requests that reached the fake
	accepted    []sent
	sessionGets int
	fail        providertest.Failure
	failRaw     *rawReply
	latency     time.Duration
}

type rawReply struct {
	status      int
	contentType string
	body        string
	accept      bool // the engine took the message before this answer
}

var chatIDRE = regexp.MustCompile(`^[0-9]{8,15}@c\.us$`)

func newFakeWAHA(t *testing.T) *fakeWAHA {
	f := &fakeWAHA{status: "WORKING", engine: "WEBJS"}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, msgs ...string) {
	reply(w, 400, map[string]any{"statusCode": 400, "message": msgs, "error": "Bad Request"})
}

func (f *fakeWAHA) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	latency := f.latency
	f.mu.Unlock()
	if latency > 0 {
		tm := time.NewTimer(latency)
		select {
		case <-r.Context().Done():
			tm.Stop()
			return
		case <-tm.C:
		}
	}
	if r.Header.Get("X-Api-Key") != testKey {
		reply(w, 401, map[string]any{"message": "Unauthorized", "statusCode": 401})
		return
	}
	f.mu.Lock()
	status := f.status
	f.mu.Unlock()
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
		Session string `json:"session"`
		ChatID  string `json:"chatId"`
		Text    string `json:"text"`
		Caption string `json:"caption"`
		File    *struct {
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
	s := sent{Path: r.URL.Path, ChatID: in.ChatID, Text: in.Text, Caption: in.Caption}
	switch r.URL.Path {
	case "/api/sendText":
		if in.Text == "" {
			badRequest(w, "text should not be empty")
			return
		}
	case "/api/sendFile", "/api/sendImage":
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
		s.MIME, s.Name, s.Data = in.File.MIMEType, in.File.Filename, data
	default:
		reply(w, 404, map[string]any{"statusCode": 404, "message": "Cannot POST " + r.URL.Path, "error": "Not Found"})
		return
	}
	f.mu.Lock()
	fail, failRaw := f.fail, f.failRaw
	f.fail, f.failRaw = 0, nil
	f.mu.Unlock()
	switch {
	case failRaw != nil && !failRaw.accept:
		failRaw.write(w)
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
	}
	f.mu.Lock()
	f.accepted = append(f.accepted, s)
	n := len(f.accepted)
	engine := f.engine
	f.mu.Unlock()
	switch {
	case failRaw != nil:
		failRaw.write(w)
		return
	case fail == providertest.AnswerLost:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler) // net/http drops the connection
		}
		conn.Close()
		return
	}
	id := fmt.Sprintf("3EB0%016X", n)
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

func (r *rawReply) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", r.contentType)
	w.WriteHeader(r.status)
	io.WriteString(w, r.body)
}

// failNext makes the gateway fail the next valid message as the suite
// asks: Temporary, the session dropped out (422); RateLimited, 429;
// Permanent, a validation error (400); AnswerLost, the engine takes the
// message and the connection drops. It reports false for other kinds.
func (f *fakeWAHA) failNext(kind providertest.Failure) bool {
	switch kind {
	case providertest.Temporary, providertest.RateLimited, providertest.Permanent, providertest.AnswerLost:
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

// failNextProxy makes a proxy in front of the gateway answer the next valid
// message with status and its HTML page; with accept, the gateway took the
// message behind it.
func (f *fakeWAHA) failNextProxy(status int, accept bool) {
	title := fmt.Sprintf("%d %s", status, http.StatusText(status))
	f.setRaw(rawReply{status: status, contentType: "text/html", accept: accept,
		body: "<html><head><title>" + title + "</title></head><body><h1>" + title + "</h1><hr>proxy</body></html>\n"})
}

func (f *fakeWAHA) setRaw(r rawReply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failRaw = &r
}

// requests returns how many send requests reached the fake.
func (f *fakeWAHA) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts
}

func (f *fakeWAHA) setLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

func (f *fakeWAHA) setStatus(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = s
}

func (f *fakeWAHA) setEngine(e string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.engine = e
}

func (f *fakeWAHA) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.accepted)
}

func (f *fakeWAHA) gets() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessionGets
}

func (f *fakeWAHA) last() sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.accepted) == 0 {
		return sent{}
	}
	return f.accepted[len(f.accepted)-1]
}
