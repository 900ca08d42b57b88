package cloudchat_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testToken   = "EAAG-test-token-7f3e9a"
	testPhoneID = "106540352242922"
	testVersion = "v21.0"
)

// fakeGraph behaves like the cloud messaging API's messages endpoint: it
// checks the token, path and body as the vendor does and answers with the
// vendor's success and error bodies. A fault makes it fail the next valid
// message the way the vendor, or a proxy in front of it, does.
type fakeGraph struct {
	*httptest.Server
	t *testing.T

	mu        sync.Mutex
	posts     int // message requests that reached the fake
	accepted  int
	received  []map[string]any // accepted bodies
	fault     *fault           // for the next valid message
	latency   time.Duration
	templates map[string]int // "name/lang" -> parameter count
	window    map[string]bool
}

type graphErr struct {
	status  int
	code    int
	message string
	details string
}

// fault is how the fake fails the next valid message.
type fault struct {
	graph  *graphErr // answer with this vendor error
	proxy  int       // answer with this status and a proxy's HTML page
	accept bool      // take (and count) the message before failing
	lose   bool      // take the message, then drop the connection unanswered
}

func newFakeGraph(t *testing.T) *fakeGraph {
	f := &fakeGraph{
		t: t,
		templates: map[string]int{
			"order_confirmed/en_US": 2,
			"standard_otp/en_US":    1,
			"invoice_ready/en":      1,
		},
		// Recipients who wrote in the last 24 hours: free text is allowed.
		window: map[string]bool{"919876543210": true, "919812345678": true},
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGraph) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeGraph) replyErr(w http.ResponseWriter, e graphErr) {
	body := map[string]any{
		"message":    e.message,
		"type":       "OAuthException",
		"code":       e.code,
		"fbtrace_id": "AbCdEfGh123",
	}
	if e.details != "" {
		body["error_data"] = map[string]any{"messaging_product": "whatsapp", "details": e.details}
	}
	f.reply(w, e.status, map[string]any{"error": body})
}

func invalidParam(details string) graphErr {
	return graphErr{400, 100, "(#100) Invalid parameter", details}
}

func (f *fakeGraph) serve(w http.ResponseWriter, r *http.Request) {
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
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		f.replyErr(w, graphErr{401, 190, "Invalid OAuth access token - Cannot parse access token", ""})
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/"+testVersion+"/"+testPhoneID {
		f.reply(w, 200, map[string]any{"id": testPhoneID})
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/"+testVersion+"/"+testPhoneID+"/messages" {
		f.replyErr(w, graphErr{400, 100, "Unsupported post request. Object with ID does not exist", ""})
		return
	}
	f.mu.Lock()
	f.posts++
	f.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		f.replyErr(w, invalidParam("expected a JSON body"))
		return
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		f.replyErr(w, invalidParam("the body is not JSON"))
		return
	}
	if e, bad := f.validate(m); bad {
		f.replyErr(w, e)
		return
	}
	f.mu.Lock()
	ft := f.fault
	f.fault = nil
	f.mu.Unlock()
	if ft != nil && !ft.accept && !ft.lose {
		f.fail(w, ft)
		return
	}
	f.mu.Lock()
	f.accepted++
	n := f.accepted
	f.received = append(f.received, m)
	f.mu.Unlock()
	if ft != nil {
		f.fail(w, ft)
		return
	}
	to := m["to"].(string)
	f.reply(w, 200, map[string]any{
		"messaging_product": "whatsapp",
		"contacts":          []any{map[string]any{"input": to, "wa_id": to}},
		"messages":          []any{map[string]any{"id": fmt.Sprintf("wamid.HBgMOTE5ODc2NTQzMjEwFQIAERgS%06d", n), "message_status": "accepted"}},
	})
}

// validate checks a message body as the vendor does.
func (f *fakeGraph) validate(m map[string]any) (graphErr, bool) {
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
		if !f.inWindow(to) {
			return graphErr{400, 131047, "(#131047) Re-engagement message", "Message failed to send because more than 24 hours have passed since the customer last replied to this number."}, true
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
		want, ok := f.templates[name+"/"+code]
		if !ok {
			return graphErr{404, 132001, "(#132001) Template name does not exist in the translation", fmt.Sprintf("template name (%s) does not exist in %s", name, code)}, true
		}
		got := 0
		comps, _ := obj["components"].([]any)
		for _, c := range comps {
			cm, _ := c.(map[string]any)
			params, _ := cm["parameters"].([]any)
			switch cm["type"] {
			case "body":
				for _, p := range params {
					pm, _ := p.(map[string]any)
					if pm["type"] != "text" || pm["text"] == "" {
						return graphErr{400, 132012, "(#132012) Parameter format does not match format in the created template", "body parameters must be text"}, true
					}
					got++
				}
			case "header":
				if len(params) != 1 {
					return invalidParam("a header takes one parameter"), true
				}
				pm, _ := params[0].(map[string]any)
				kind, _ := pm["type"].(string)
				media, _ := pm[kind].(map[string]any)
				if link, _ := media["link"].(string); !strings.HasPrefix(link, "https://") {
					return invalidParam("header media needs an https link"), true
				}
			default:
				return invalidParam("unknown component type"), true
			}
		}
		if got != want {
			return graphErr{400, 132000, "(#132000) Number of parameters does not match the expected number of params", fmt.Sprintf("body: number of localizable_params (%d) does not match the expected number of params (%d)", got, want)}, true
		}
	default:
		return invalidParam("unsupported message type " + typ), true
	}
	return graphErr{}, false
}

func (f *fakeGraph) inWindow(to string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.window[to]
}

// fail answers for a fault.
func (f *fakeGraph) fail(w http.ResponseWriter, ft *fault) {
	switch {
	case ft.lose:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler) // net/http drops the connection
		}
		conn.Close()
	case ft.proxy != 0:
		title := fmt.Sprintf("%d %s", ft.proxy, http.StatusText(ft.proxy))
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(ft.proxy)
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><h1>%s</h1><hr>proxy</body></html>\n", title, title)
	case ft.graph != nil:
		f.replyErr(w, *ft.graph)
	}
}

// The vendor's answers for the suite's failures.
var (
	serviceUnavailable = graphErr{503, 131016, "(#131016) Service unavailable", "A service is temporarily unavailable."}
	somethingWentWrong = graphErr{500, 131000, "(#131000) Something went wrong", "Message failed to send because of an unknown error."}
	throughputHit      = graphErr{400, 130429, "(#130429) Rate limit hit", "Cloud API message throughput has been reached."}
	undeliverable      = graphErr{400, 131026, "(#131026) Message Undeliverable", "Message failed to send because of an unknown error."}
)

// failNextWith makes the vendor refuse the next valid message with e.
func (f *fakeGraph) failNextWith(e graphErr) { f.failNextWithFault(fault{graph: &e}) }

func (f *fakeGraph) failNextWithFault(ft fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = &ft
}

// requests returns how many message requests reached the fake.
func (f *fakeGraph) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts
}

func (f *fakeGraph) setLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

func (f *fakeGraph) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accepted
}

func (f *fakeGraph) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.received) == 0 {
		return nil
	}
	return f.received[len(f.received)-1]
}
