package vendorhttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
)

func TestDo(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Key") != "k" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"id":"m1"}`))
		case "/hang":
			select { // hold the answer until the client gives up
			case <-r.Context().Done():
			case <-release:
			}
		case "/hangup": // read the request, then drop the connection
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "/big":
			w.Write([]byte(strings.Repeat("x", 2048)))
		}
	}))
	defer srv.Close()
	defer close(release)

	// A port nothing listens on: taken, then freed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	short, stop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stop()

	cases := []struct {
		name      string
		ctx       context.Context
		url       string
		code      notify.Code // "" : success
		retryable bool
		is        error
	}{
		{"answer", context.Background(), srv.URL + "/ok", "", false, nil},
		{"connection refused", context.Background(), closed + "/x?token=SECRET", notify.CodeUnavailable, true, nil},
		{"context ended before", canceled, srv.URL + "/ok", notify.CodeUnavailable, true, context.Canceled},
		{"no answer in time", short, srv.URL + "/hang?token=SECRET", notify.CodeDeadlineExceeded, false, context.DeadlineExceeded},
		{"connection dropped after the request", context.Background(), srv.URL + "/hangup", notify.CodeInternal, false, nil},
		{"answer too long", context.Background(), srv.URL + "/big", notify.CodeInternal, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ans, err := Do(c.ctx, srv.Client(), Request{Name: "acme", Method: http.MethodPost, URL: c.url,
				Body: []byte(`{}`), Header: http.Header{"X-Key": {"k"}}, Limit: 1024})
			if c.code == "" {
				if err != nil || ans.Status != 200 || string(ans.Body) != `{"id":"m1"}` {
					t.Fatalf("Do = %+v, %v", ans, err)
				}
				return
			}
			if got := notify.CodeOf(err); got != c.code {
				t.Fatalf("code = %q (%v), want %q", got, err, c.code)
			}
			var e *notify.Error
			retryable := errors.As(err, &e) && e.Code.Temporary()
			if retryable != c.retryable {
				t.Errorf("retryable = %v for %v", retryable, err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, c.is)
			}
			if strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "acme: ") {
				t.Errorf("message %q leaks the URL or lacks the name", err)
			}
		})
	}
}
