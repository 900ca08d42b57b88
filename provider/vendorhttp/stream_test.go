package vendorhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/notifykit/notify"
)

// streamOf writes n bytes of 'x' inside a JSON string, then fails with
// fail when it is set.
func streamOf(n int, fail error) func(io.Writer) error {
	return func(w io.Writer) error {
		if _, err := io.WriteString(w, `{"data":"`); err != nil {
			return err
		}
		chunk := []byte(strings.Repeat("x", 4096))
		for written := 0; written < n; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		if fail != nil {
			return fail
		}
		_, err := io.WriteString(w, `"}`)
		return err
	}
}

func TestStream(t *testing.T) {
	// got tells what the server read of each body: "whole" or the error.
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse-early" {
			buf := make([]byte, 1024)
			_, _ = io.ReadFull(r.Body, buf)
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			got <- "refused"
			return
		}
		if r.ContentLength != -1 || len(r.TransferEncoding) == 0 || r.TransferEncoding[0] != "chunked" {
			t.Errorf("the streamed body is not chunked: length %d, %v", r.ContentLength, r.TransferEncoding)
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			got <- err.Error()
			return
		}
		got <- "whole"
		w.Write([]byte(`{"id":"m1"}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	req := func(path string, stream func(io.Writer) error) Request {
		return Request{Name: "vendor", Method: http.MethodPost, URL: srv.URL + path, Stream: stream}
	}

	ans, err := Do(ctx, srv.Client(), req("/ok", streamOf(1<<20, nil)))
	if err != nil || ans.Status != 200 || <-got != "whole" {
		t.Fatalf("a whole stream: %+v, %v", ans, err)
	}

	// The source fails mid-body: the vendor never had a whole request, and
	// the source's own error is the answer.
	errSource := notify.Errorf(notify.CodeRejected, "the file is too large")
	_, err = Do(ctx, srv.Client(), req("/ok", streamOf(1<<20, errSource)))
	if !errors.Is(err, errSource) {
		t.Fatalf("a source failing mid-body: %v, want the source's error", err)
	}
	if read := <-got; read == "whole" {
		t.Fatal("the server read a whole body from a stream cut short")
	}

	// The vendor (a proxy's body limit) refuses before reading it all: a
	// certain refusal with its status, not a retry that sends it all again.
	_, err = Do(ctx, srv.Client(), req("/refuse-early", streamOf(8<<20, nil)))
	if notify.CodeOf(err) != notify.CodeRejected || !strings.Contains(err.Error(), "413") {
		t.Fatalf("an early 413: %v (%s), want rejected naming 413", err, notify.CodeOf(err))
	}
	<-got
}
