// Package webhook holds what every provider's delivery-report receiver
// shares: a bounded body read, constant-time checks of the vendor's
// secret or signature, and the hand-over of reports to a notify.Reporter
// with the HTTP answer that tells the vendor whether to send again.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify"
)

// MaxBody is the default bound of a webhook body: vendors batch reports,
// but a megabyte is far more than any batch they send.
const MaxBody = 1 << 20

// ErrTooLarge is returned by ReadBody for a body over its bound.
var ErrTooLarge = errors.New("webhook: body too large")

// ReadBody reads r's body whole, up to limit bytes (limit <= 0: MaxBody).
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxBody
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, ErrTooLarge
	}
	return body, nil
}

// Equal reports whether the secret a request carries is want, in time
// that depends only on their lengths. An empty want matches nothing.
func Equal(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// SignedSHA256 reports whether hexMAC is the hex HMAC-SHA256 of body
// under secret, compared in constant time.
func SignedSHA256(body []byte, secret, hexMAC string) bool {
	return signed(sha256.New, body, secret, hexMAC)
}

// SignedSHA512 reports whether hexMAC is the hex HMAC-SHA512 of body
// under secret, compared in constant time.
func SignedSHA512(body []byte, secret, hexMAC string) bool {
	return signed(sha512.New, body, secret, hexMAC)
}

func signed(h func() hash.Hash, body []byte, secret, hexMAC string) bool {
	if secret == "" {
		return false
	}
	got, err := hex.DecodeString(hexMAC)
	if err != nil {
		return false
	}
	mac := hmac.New(h, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// Stats is notify.WebhookStats, which receivers return.
type Stats = notify.WebhookStats

// Counter keeps a receiver's Stats; the zero value is ready.
type Counter struct {
	reports, unmatched, ignored, refused, malformed, failed atomic.Uint64
}

// Stats returns the counts so far.
func (c *Counter) Stats() Stats {
	return Stats{Reports: c.reports.Load(), Unmatched: c.unmatched.Load(), Ignored: c.ignored.Load(),
		Refused: c.refused.Load(), Malformed: c.malformed.Load(), Failed: c.failed.Load()}
}

// Refuse answers 401 and counts it.
func (c *Counter) Refuse(w http.ResponseWriter) {
	c.refused.Add(1)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
}

// Malformed answers 400 (413 for a body over its bound) and counts it.
func (c *Counter) Malformed(w http.ResponseWriter, err error) {
	c.malformed.Add(1)
	if errors.Is(err, ErrTooLarge) {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "malformed body", http.StatusBadRequest)
}

// Ignore counts n entries the receiver skipped.
func (c *Counter) Ignore(n int) { c.ignored.Add(uint64(n)) }

// ReportTimeout bounds the work of one webhook request's reports (a
// failover send included).
const ReportTimeout = 30 * time.Second

// Deliver hands reports to rep in order and answers the vendor: 200 when
// every report was taken, named no message (counted unmatched) or was
// itself wrong, InvalidArgument (counted ignored: sending it again cannot
// help), 503 when one could not be applied now (a store failure, a message still being sent), so that
// the vendor sends the request again; the reports already taken are
// repeats then, which change nothing.
//
// The reports run detached from the vendor's connection, within
// ReportTimeout: a vendor that hangs up (its webhook timeout) must not
// cut a refund or a failover send short halfway; it sends the request
// again, and the repeat finds the work done.
func (c *Counter) Deliver(ctx context.Context, w http.ResponseWriter, rep notify.Reporter, reports []*notify.DeliveryReport) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReportTimeout)
	defer cancel()
	for _, r := range reports {
		_, err := rep.Report(ctx, r)
		switch notify.CodeOf(err) {
		case "":
			c.reports.Add(1)
		case notify.CodeNotFound:
			c.unmatched.Add(1)
		case notify.CodeInvalidArgument:
			c.ignored.Add(1) // the report itself is wrong: sending it again cannot help
		default:
			c.failed.Add(1)
			http.Error(w, "try again later", http.StatusServiceUnavailable)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}
