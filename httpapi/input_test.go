package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
)

// wantNothingMoved checks that no message was sent and no wallet moved
// since sent and bal were taken.
func wantNothingMoved(t *testing.T, e *httpapienv.Env, sent int, bal int64) {
	t.Helper()
	if now := e.Sent(); now != sent {
		t.Errorf("%d messages sent", now-sent)
	}
	if now := e.Minor(t, httpapienv.TestAccount); now != bal {
		t.Errorf("wallet moved by %d", bal-now)
	}
}

// TestStrictJSONOverHTTP: a duplicate key, a key in the wrong case and
// invalid UTF-8 are 400s whose message and fields name the key.
func TestStrictJSONOverHTTP(t *testing.T) {
	e := httpapienv.New(t)
	cases := []struct {
		path, body  string
		field, part string
	}{
		{"/api/v1/sms", `{"to":"9876543210","to":"9123456789","message":"x"}`, "to", "to is a duplicate key"},
		{"/api/v1/sms", `{"TO":"9876543210","message":"x"}`, "TO", `TO is an unknown key; keys are case-sensitive: did you mean "to"?`},
		{"/api/v1/send-otp", "{\"to\":\"9876543210\",\"otp\":\"1234\",\"brand_name\":\"Ac\xffme\"}", "brand_name", "brand_name is not valid UTF-8"},
		{"/api/v1/messenger/send", `{"to":"9876543210","template_slug":"order-confirmed","variables":{"NAME":"A","NAME":"B","ORDER_ID":"1","AMOUNT":"1","DELIVERY_DATE":"x","LINK":"https://a.example"}}`,
			"variables.NAME", "variables.NAME is a duplicate key"},
		{"/api/v1/email/send", `{"to":"a@example.com","subject":"s","message":"\ud800"}`, "message", "lone UTF-16 surrogate"},
	}
	for _, c := range cases {
		sent, bal := e.Sent(), e.Minor(t, httpapienv.TestAccount)
		r := e.Post(t, c.path, c.body, nil)
		httpapienv.WantError(t, r, 400, "invalid_argument")
		msg, _ := r.Body["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, c.part) {
			t.Errorf("%s: message %q does not say %q", c.body, msg, c.part)
		}
		if _, ok := r.ErrFields()[c.field]; !ok {
			t.Errorf("%s: field %q not named: %s", c.body, c.field, r.Raw)
		}
		wantNothingMoved(t, e, sent, bal)
	}
}

// TestDuplicateHeaders: two Authorization (or Content-Type, ...) headers
// are a 400 before the key is checked, whichever of them is valid.
func TestDuplicateHeaders(t *testing.T) {
	e := httpapienv.New(t)
	const body = `{"to":"9876543210","message":"x"}`
	cases := []struct {
		method, path string
		hdr          http.Header
	}{
		{"POST", "/api/v1/sms", http.Header{"Authorization": {httpapienv.TestKey, "nk_test_wrong"}, "Content-Type": {"application/json"}}},
		{"POST", "/api/v1/sms", http.Header{"Authorization": {"nk_test_wrong", httpapienv.TestKey}, "Content-Type": {"application/json"}}},
		{"POST", "/api/v1/sms", http.Header{"Authorization": {httpapienv.TestKey, httpapienv.TestKey}, "Content-Type": {"application/json"}}},
		{"POST", "/api/v1/sms", http.Header{"Authorization": {"nk_test_wrong", "nk_test_wrong"}, "Content-Type": {"application/json"}}},
		{"GET", "/api/v1/balance", http.Header{"Authorization": {"Bearer nk_test_wrong", "Bearer " + httpapienv.TestKey}}},
		{"POST", "/api/v1/send-otp", http.Header{"Authorization": {httpapienv.TestKey}, "Content-Type": {"application/json", "application/json"}}},
		{"POST", "/api/v1/email/send", http.Header{"Authorization": {"nk_test_wrong"}, "Content-Type": {"text/plain", "application/json"}}},
		{"POST", "/api/v1/sms", http.Header{"Authorization": {httpapienv.TestKey}, "Content-Type": {"application/json"}, "Idempotency-Key": {"a", "b"}}},
	}
	for _, c := range cases {
		sent, bal := e.Sent(), e.Minor(t, httpapienv.TestAccount)
		var rd io.Reader
		if c.method == "POST" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(c.method, e.URL+c.path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = c.hdr
		r := e.RoundTrip(t, e.Client, req)
		httpapienv.WantError(t, r, 400, "invalid_argument")
		name := ""
		for k, v := range c.hdr {
			if len(v) > 1 {
				name = k
			}
		}
		if msg := r.Body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "the "+name+" header is sent 2 times") {
			t.Errorf("%s %v: message %q", c.path, c.hdr, msg)
		}
		if strings.Contains(r.Raw, httpapienv.TestKey) || strings.Contains(r.Raw, "nk_test_wrong") {
			t.Errorf("reply echoes a key: %s", r.Raw)
		}
		wantNothingMoved(t, e, sent, bal)
	}
}

// TestPathsAreExact: a path that is not clean is a JSON 404, never a
// redirect that a client would follow with its POST.
func TestPathsAreExact(t *testing.T) {
	e := httpapienv.New(t)
	noRedirect := &http.Client{
		Transport:     e.Client.Transport,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	const body = `{"to":"9876543210","message":"x"}`
	for _, p := range []string{
		"//sms", "/api/v1//sms", "//api/v1/sms", "/api/v1/sms/", "/api/v1/./sms", "/api/v1/sms/.",
		"/api/v1/x/../sms", "/api/v1/%2e/sms", "/api/v1/sms%2F", "/api//v1/balance",
	} {
		sent, bal := e.Sent(), e.Minor(t, httpapienv.TestAccount)
		req, err := http.NewRequest("POST", e.URL+p, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", httpapienv.TestKey)
		req.Header.Set("Content-Type", "application/json")
		r := e.RoundTrip(t, noRedirect, req)
		httpapienv.WantError(t, r, 404, "not_found")
		if loc := r.Header.Get("Location"); loc != "" {
			t.Errorf("%s: Location %q", p, loc)
		}
		wantNothingMoved(t, e, sent, bal)
	}
	// "OPTIONS *", when the server lets it through
	// (DisableGeneralOptionsHandler), is a JSON 404 too.
	req := httptest.NewRequest("OPTIONS", "*", nil)
	w := httptest.NewRecorder()
	e.Handler.ServeHTTP(w, req)
	if w.Code != 404 || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Location") != "" {
		t.Errorf("OPTIONS *: %d %v %s", w.Code, w.Header(), w.Body)
	}
	// The clean paths still work.
	req, _ = http.NewRequest("POST", e.URL+"/api/v1/sms", strings.NewReader(body))
	req.Header.Set("Authorization", httpapienv.TestKey)
	req.Header.Set("Content-Type", "application/json")
	if r := e.RoundTrip(t, noRedirect, req); r.Status != 200 {
		t.Fatalf("clean path: %d %s", r.Status, r.Raw)
	}
}

// TestHeadersTooLarge: a head over WithMaxHeaderBytes is a JSON 431 (the
// test server's own MaxHeaderBytes is net/http's default 1 MiB).
func TestHeadersTooLarge(t *testing.T) {
	const body = `{"to":"9876543210","message":"x"}`
	for _, c := range []struct {
		opts   []httpapi.Option
		pad    int
		status int
	}{
		{nil, 70 << 10, 431},
		{nil, 60 << 10, 200},
		{[]httpapi.Option{httpapi.WithMaxHeaderBytes(4 << 10)}, 5 << 10, 431},
		{[]httpapi.Option{httpapi.WithMaxHeaderBytes(4 << 10)}, 3 << 10, 200},
	} {
		e := httpapienv.New(t, c.opts...)
		// In two headers: the whole head counts, not each field.
		half := strings.Repeat("a", c.pad/2)
		r := e.Post(t, "/api/v1/sms", body, map[string]string{"X-Pad-1": half, "X-Pad-2": half})
		if c.status == 200 {
			if r.Status != 200 {
				t.Errorf("pad %d: %d %s", c.pad, r.Status, r.Raw)
			}
			continue
		}
		httpapienv.WantError(t, r, 431, "request_headers_too_large")
		if e.Sent() != 0 {
			t.Errorf("pad %d: sent", c.pad)
		}
	}
}

// smallBuffers shrinks the socket buffers of the connections it accepts,
// as a real network's limited bytes in flight would: a client cannot park
// a large body in loopback's big kernel buffers, and so must wait for the
// server to read it.
type smallBuffers struct{ net.Listener }

const smallBuffer = 32 << 10

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(smallBuffer)
		_ = tc.SetWriteBuffer(smallBuffer)
	}
	return c, err
}

// serveSmall runs h on a real http.Server on 127.0.0.1 with small socket
// buffers, stopped by t.Cleanup, and returns its address.
// dialSmall connects to addr with a small send buffer and a deadline that
// bounds the whole exchange; the connection is closed when t ends.
func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetWriteBuffer(smallBuffer)
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return conn
}

func serveSmall(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(smallBuffers{ln})
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return ln.Addr().String()
}

// TestTooLargeBodyPlainClient: a client that writes its whole request
// before reading (Python's urllib, curl without Expect) reads the JSON
// 413, not a connection reset, and then a clean end of the connection.
func TestTooLargeBodyPlainClient(t *testing.T) {
	e := httpapienv.New(t) // the default limit: 1 MiB
	addr := serveSmall(t, e.Handler)
	body := `{"to":"9876543210","message":"` + strings.Repeat("a", 2<<20) + `"}`
	head := "POST /api/v1/sms HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: " + httpapienv.TestKey + "\r\nContent-Type: application/json\r\n"
	// A limit of 1 KiB: a body over 4 KiB is answered at once, unread.
	small := httpapienv.New(t, httpapi.WithMaxBodyBytes(1<<10))
	smallAddr := serveSmall(t, small.Handler)
	for _, c := range []struct {
		name string
		addr string
		req  string
	}{
		{"content-length", addr, head + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body},
		{"chunked", addr, head + "Transfer-Encoding: chunked\r\n\r\n" +
			fmt.Sprintf("%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", len(body)/2, body[:len(body)/2], len(body)-len(body)/2, body[len(body)/2:])},
		// Waiting for 100 Continue, the client has sent no body: the
		// handler must not ask for it, only answer.
		{"expect 100-continue", addr, head + fmt.Sprintf("Expect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body))},
		// Over DrainFactor times the limit, the body is not waited for:
		// this client has sent none, and the answer comes anyway.
		{"beyond the drain bound", smallAddr, head + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := dialSmall(t, c.addr)
			if _, err := io.WriteString(conn, c.req); err != nil {
				t.Fatalf("writing the request: %v", err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("reading the response: %v", err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("reading the response body: %v", err)
			}
			var out struct {
				Success *bool
				Error   struct{ Code string }
			}
			if resp.StatusCode != 413 || resp.Header.Get("Content-Type") != "application/json" ||
				json.Unmarshal(raw, &out) != nil || out.Success == nil || *out.Success || out.Error.Code != "request_too_large" {
				t.Fatalf("got %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			if !resp.Close {
				t.Errorf("no Connection: close")
			}
			// The server ends the connection in order: EOF, not a reset.
			if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
				t.Errorf("after the answer: %q, %v", rest, err)
			}
		})
	}
	if n := e.Sent() + small.Sent(); n != 0 {
		t.Errorf("%d sent", n)
	}
}

// A refusal that comes before the body is read (a bad key, an unknown
// path, a wrong method or media type) reaches a client that writes its
// whole 2 MiB body before reading, instead of a connection reset.
func TestEarlyRefusalPlainClient(t *testing.T) {
	e := httpapienv.New(t)
	addr := serveSmall(t, e.Handler)
	body := `{"to":"9876543210","message":"` + strings.Repeat("a", 2<<20) + `"}`
	for _, c := range []struct {
		name, method, path, auth, ctype string
		status                          int
		code                            string
	}{
		{"bad key", "POST", "/api/v1/sms", "not-a-key-0123456789", "application/json", 401, "unauthenticated"},
		{"unknown path", "POST", "/api/v1/fax", httpapienv.TestKey, "application/json", 404, "not_found"},
		{"wrong method", "PUT", "/api/v1/sms", httpapienv.TestKey, "application/json", 405, "method_not_allowed"},
		{"wrong media type", "POST", "/api/v1/sms", httpapienv.TestKey, "text/plain", 415, "unsupported_media_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := dialSmall(t, addr)
			req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s",
				c.method, c.path, addr, c.auth, c.ctype, len(body), body)
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatalf("writing the request: %v", err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("reading the response: %v", err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			var out struct{ Error struct{ Code string } }
			if err != nil || resp.StatusCode != c.status || json.Unmarshal(raw, &out) != nil || out.Error.Code != c.code {
				t.Fatalf("got %d %s (%v), want %d %s", resp.StatusCode, raw, err, c.status, c.code)
			}
		})
	}
	if n := e.Sent(); n != 0 {
		t.Errorf("%d sent", n)
	}
}
