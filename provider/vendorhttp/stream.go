package vendorhttp

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/notifykit/notify"
)

// errAbandoned ends a body the transport stopped reading.
var errAbandoned = errors.New("vendorhttp: the request ended before its body was sent")

// stream feeds a request's body from Request.Stream through a pipe, and
// tells afterwards whether the transport read all of it.
type stream struct {
	pr     *io.PipeReader
	done   chan struct{}
	whole  bool  // every byte was read by the transport, and the end
	srcErr error // Stream failed other than by writing (its source)
}

// pipeWriter remembers the first error of writing to the pipe, which
// tells a transport that stopped reading from a source that failed.
type pipeWriter struct {
	pw  *io.PipeWriter
	err error
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	n, err := w.pw.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

func startStream(write func(io.Writer) error) *stream {
	pr, pw := io.Pipe()
	s := &stream{pr: pr, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		w := &pipeWriter{pw: pw}
		err := write(w)
		switch {
		case err == nil:
			// A pipe's Write returns once the reader has taken the bytes:
			// all of them were read.
			s.whole = pw.Close() == nil
		case w.err == nil:
			s.srcErr = err
			pw.CloseWithError(err)
		default:
			pw.CloseWithError(err)
		}
	}()
	return s
}

// end stops the stream if it still runs (the transport gave up on the
// body) and reports what it did.
func (s *stream) end() (whole bool, srcErr error) {
	s.pr.CloseWithError(errAbandoned)
	<-s.done
	return s.whole, s.srcErr
}

// cut classifies a request whose body did not go out whole: the vendor
// never had a complete request, so nothing was accepted. The source's
// own error when it failed; a refusal the vendor answered before reading
// the rest (a proxy's 413 or 401) as CodeRejected; else CodeUnavailable.
func cut(ctx context.Context, name string, resp *http.Response, err, srcErr error) error {
	if resp != nil {
		resp.Body.Close()
	}
	switch {
	case ctx.Err() != nil:
		return notSent(ctx, name, ctx.Err())
	case srcErr != nil:
		return srcErr
	case resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500 &&
		resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests:
		return notify.Errorf(notify.CodeRejected, "%s: the vendor refused the request before reading it whole: HTTP %d", name, resp.StatusCode)
	}
	cause := "the vendor stopped reading the request"
	if err != nil {
		cause = Cause(err)
	}
	return notify.Errorf(notify.CodeUnavailable, "%s: request not sent whole: %s", name, cause)
}
