package vendorhttp

import (
	"context"
	"crypto/hmac"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifykit/notify"
)

// MaxWebhookBody is the default bound of a webhook body for a vendor that
// documents none: vendors batch reports, but a megabyte is far more than
// any batch they send.
const MaxWebhookBody = 1 << 20

// SecretEqual reports whether the secret a request carries is want, in time
// that depends only on their lengths. An empty want matches nothing.
func SecretEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// AllowMethods answers 405, with an Allow header listing methods, and reports
// false when r's method is not one of them.
func AllowMethods(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	closeUnread(w, r)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// Signature is how a vendor signs a request: the hex HMAC of its raw
// body under a shared secret, in a header, after a fixed prefix.
type Signature struct {
	// Header carries the MAC ("X-Hub-Signature-256").
	Header string
	// Prefix comes before the hex ("sha256="); empty for none.
	Prefix string
	// Hash is the HMAC's hash (sha256.New).
	Hash func() hash.Hash
	// Size is the MAC's size in bytes (sha256.Size): the header holds
	// twice as many hex digits, no more, no fewer.
	Size int
	// AlgorithmHeader, when set, is a header naming the hash, which must
	// then be Algorithm (in any case) when the request has it: a MAC of
	// another hash cannot be checked.
	AlgorithmHeader, Algorithm string
}

// mac returns the MAC the request's headers carry, or false when there is
// none or it is not of the signature's shape.
func (s *Signature) mac(h http.Header) ([]byte, bool) {
	if s.AlgorithmHeader != "" {
		if alg := strings.TrimSpace(h.Get(s.AlgorithmHeader)); alg != "" && !strings.EqualFold(alg, s.Algorithm) {
			return nil, false
		}
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(h.Get(s.Header)), s.Prefix)
	if !ok || len(v) != 2*s.Size {
		return nil, false
	}
	mac, err := hex.DecodeString(v)
	return mac, err == nil
}

// WebhookBody is what a receiver requires of a request's body. Receiver.Read
// checks it from the cheapest test to the dearest.
type WebhookBody struct {
	// Signature, when set, is how the vendor signs the body, under
	// Secret; nil for a receiver that authenticated the request before
	// (a secret in its URL).
	Signature *Signature
	Secret    string
	// JSON admits only a Content-Type of JSON (application/json or
	// application/*+json), or none.
	JSON bool
	// Max bounds the body: the vendor's documented maximum, or MaxWebhookBody.
	Max int64
	// Budget, for a signed body, is what reading bodies not yet
	// authenticated may cost (NewUnverifiedBudget: each receiver its own); nil
	// for no bound.
	Budget *Budget
}

// errNotJSON is a body whose Content-Type is not JSON.
var errNotJSON = errors.New("the body is not JSON")

// Read returns r's body once it passed b's checks, which it makes from
// the cheapest to the dearest and answers otherwise:
//
//  1. a signature header that is missing or not of the signature's shape
//     (prefix, length, hex): 401, counted refused;
//  2. a Content-Type other than JSON, when b.JSON: 415, counted malformed;
//  3. a Content-Length over b.Max: 413, counted malformed;
//  4. for a signed body, its length (b.Max when it is not declared) taken
//     from the budget of bodies not yet authenticated: 503 with
//     Retry-After when too little is left, counted failed, so that the
//     vendor sends it again;
//  5. the body read, through http.MaxBytesReader: 413 once it passes
//     b.Max, 400 when it cannot be read;
//  6. the MAC of the body checked in constant time: 401, counted refused;
//     a body that proves genuine gives its length back to the budget.
//
// The first four answer before a byte of the body is read, and close
// the connection rather than drain it. Every refusal is answered late
// when its source has had more than its share of them this second (see
// Receiver). The read buffer is sized from Content-Length, within b.Max.
func (c *Receiver) Read(w http.ResponseWriter, r *http.Request, b *WebhookBody) ([]byte, bool) {
	var want []byte
	if b.Signature != nil {
		mac, ok := b.Signature.mac(r.Header)
		if !ok || b.Secret == "" {
			c.Refuse(w, r)
			return nil, false
		}
		want = mac
	}
	if b.JSON && !isJSON(r.Header.Get("Content-Type")) {
		c.wait(r)
		closeUnread(w, r)
		c.Malformed(w, errNotJSON)
		return nil, false
	}
	limit := b.Max
	if limit <= 0 {
		limit = MaxWebhookBody
	}
	if r.ContentLength > limit {
		c.wait(r)
		closeUnread(w, r)
		c.Malformed(w, &http.MaxBytesError{Limit: limit})
		return nil, false
	}
	var (
		budget *Budget
		taken  int64
	)
	if b.Signature != nil && b.Budget != nil {
		budget, taken = b.Budget, r.ContentLength
		if taken < 0 {
			taken = limit
		}
		if taken = budget.take(taken); taken < 0 {
			c.wait(r)
			closeUnread(w, r)
			c.Busy(w)
			return nil, false
		}
	}
	body, err := readAll(make([]byte, 0, max(r.ContentLength, 511)+1), http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		budget.give(taken - int64(len(body))) // what was not read
		c.wait(r)
		c.Malformed(w, err)
		return nil, false
	}
	if b.Signature != nil {
		mac := hmac.New(b.Signature.Hash, []byte(b.Secret))
		mac.Write(body)
		if !hmac.Equal(want, mac.Sum(nil)) {
			budget.give(taken - int64(len(body)))
			c.Refuse(w, r)
			return nil, false
		}
	}
	budget.give(taken)
	return body, true
}

// NewUnverifiedBudget returns the budget a receiver of signed reports keeps
// for the bytes of bodies it may read before the signature says whether
// the vendor sent them: UnverifiedRate a second, in bursts of up to
// UnverifiedBurst. A genuine body gives its bytes back, so the budget
// bounds only what forgeries whose signature header has the right shape
// can make the process read and hash; beyond it they, and any vendor
// request that comes meanwhile, are answered 503 unread, and the vendor
// sends again later (the cloud API for days, WAHA 15 times 2 s apart by
// default). Each receiver has its own, so a flood of one vendor's
// forgeries never holds back another's reports. Measured with
// BenchmarkWebhookFlood (bench/), 130 forged bodies of 900 KiB a second,
// all read and hashed, multiplied the p95 of concurrent sends by about 4;
// with a budget of 8 MiB a second by about 1.2, of 1 MiB a second by
// about 1.1.
func NewUnverifiedBudget() *Budget { return NewBudget(UnverifiedRate, UnverifiedBurst) }

// The rate and burst of NewUnverifiedBudget. The burst holds two of the largest
// bodies a vendor documents (the cloud API's 3 MB) with room to spare,
// so that a genuine one always passes when no flood is on.
const (
	UnverifiedRate  = 1 << 20
	UnverifiedBurst = 8 << 20
)

// A Budget is a token bucket of bytes. It is safe for concurrent use.
type Budget struct {
	rate, burst float64 // bytes a second, most held
	mu          sync.Mutex
	tokens      float64
	last        time.Time
}

// NewBudget returns a full Budget that refills rate bytes a second, up to
// burst.
func NewBudget(rate, burst int64) *Budget {
	return &Budget{rate: float64(rate), burst: float64(burst), tokens: float64(burst)}
}

// take takes n bytes, or the whole burst for more, and returns how many;
// -1, taking nothing, when fewer are left.
func (b *Budget) take(n int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	n = min(n, int64(b.burst))
	if float64(n) > b.tokens {
		return -1
	}
	b.tokens -= float64(n)
	return n
}

// give returns n bytes taken; nothing for a nil Budget or n <= 0.
func (b *Budget) give(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.tokens = min(b.burst, b.tokens+float64(n))
	b.mu.Unlock()
}

// isJSON reports whether a Content-Type is JSON's, or absent.
func isJSON(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// readAll reads r whole into b, growing it only when it is full (a body
// without a Content-Length). On an error it returns what it read too.
func readAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// closeUnread makes the answer close the connection when r may have a
// body no one read. After the handler returns, net/http reads up to 256
// KiB of a body left unread to keep the connection for another request,
// the very read a refusal is there to spare: a read deadline already
// past makes that read fail at once, and the connection is closed.
func closeUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	// Not every ResponseWriter has deadlines (a test's recorder has none).
	_ = http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
}

// Receiver keeps a webhook receiver's counts (notify.WebhookStats) and
// answers the vendor: it reads bodies (Read), refuses (Refuse, Busy,
// Malformed) and hands reports over (Deliver). The zero value is ready;
// it is safe for concurrent use.
//
// A refusal is cheap, but a flood of them is not: connections posting
// forgeries as fast as they are answered keep the process's cores busy
// and slow every send. So each source (the connection's IP address, the
// proxy's behind one) gets HoldAfter refusals a second answered at once;
// its further refusals that second are answered after HoldFor (Held in
// Stats), which bounds what a client that waits for its answers can make
// the receiver refuse to a handful a second per connection. A genuine
// report is never held: only refusals count and wait.
type Receiver struct {
	reports, unmatched, ignored, refused, malformed, failed, held atomic.Uint64
	// HoldFor, when set, is the wait of a held refusal; default
	// DefaultHoldFor.
	HoldFor time.Duration
	hold    holds
	now     func() time.Time // the clock of the holds' seconds; nil: time.Now
}

// HoldAfter is how many refusals a second one source gets answered at
// once; DefaultHoldFor the wait of each further one that second.
const (
	HoldAfter      = 20
	DefaultHoldFor = time.Second
)

// holds counts each source's refusals in the current second.
type holds struct {
	mu     sync.Mutex
	second int64
	counts map[string]int
}

// maxHoldSources bounds the sources counted in one second; beyond it,
// refusals of sources not counted yet are answered at once.
const maxHoldSources = 1 << 16

// wait counts a refusal of r's source and, beyond HoldAfter this second,
// waits HoldFor (or until r's client leaves) before the refusal is
// answered.
func (c *Receiver) wait(r *http.Request) {
	src := r.RemoteAddr
	if host, _, err := net.SplitHostPort(src); err == nil {
		src = host
	}
	clock := c.now
	if clock == nil {
		clock = time.Now
	}
	now := clock().Unix()
	h := &c.hold
	h.mu.Lock()
	if h.second != now || h.counts == nil {
		h.second, h.counts = now, make(map[string]int)
	}
	n, known := h.counts[src]
	if known || len(h.counts) < maxHoldSources {
		n++
		h.counts[src] = n
	}
	h.mu.Unlock()
	if n <= HoldAfter {
		return
	}
	c.held.Add(1)
	d := c.HoldFor
	if d <= 0 {
		d = DefaultHoldFor
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// Stats returns the counts so far.
func (c *Receiver) Stats() notify.WebhookStats {
	return notify.WebhookStats{Reports: c.reports.Load(), Unmatched: c.unmatched.Load(), Ignored: c.ignored.Load(),
		Refused: c.refused.Load(), Malformed: c.malformed.Load(), Failed: c.failed.Load(), Held: c.held.Load()}
}

// Refuse answers 401 and counts it, late when r's source has had more
// than its share of refusals this second (Receiver). When r's body may be
// unread, the answer closes the connection (see Receiver.Read).
func (c *Receiver) Refuse(w http.ResponseWriter, r *http.Request) {
	c.refused.Add(1)
	c.wait(r)
	closeUnread(w, r)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
}

// Busy answers 503, asking the vendor to send the request again a
// second later, and counts it failed.
func (c *Receiver) Busy(w http.ResponseWriter) {
	c.failed.Add(1)
	w.Header().Set("Retry-After", "1")
	http.Error(w, "try again later", http.StatusServiceUnavailable)
}

// Malformed answers 400 (413 for a body over its bound, 415 for one that
// is not JSON) and counts it.
func (c *Receiver) Malformed(w http.ResponseWriter, err error) {
	c.malformed.Add(1)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
	case errors.Is(err, errNotJSON):
		http.Error(w, "the body must be JSON", http.StatusUnsupportedMediaType)
	default:
		http.Error(w, "malformed body", http.StatusBadRequest)
	}
}

// Ignore counts n entries the receiver skipped.
func (c *Receiver) Ignore(n int) { c.ignored.Add(uint64(n)) }

// ReportTimeout bounds the work of one webhook request's reports (a
// failover send included).
const ReportTimeout = 30 * time.Second

// Deliver hands reports to rep in order and answers the vendor: 200 when
// every report was taken, named no message (NotFound, counted unmatched)
// or was itself wrong, InvalidArgument (counted ignored: sending it again
// cannot help), 503 when one could not be applied now (Unavailable or any
// other code: a store failure, a message still being sent, a vendor ID not
// recorded yet while its provider has a send in flight,
// notify.ErrNotRecordedYet), so that the vendor sends the request again;
// the reports already taken are repeats then, which change nothing.
//
// The reports run detached from the vendor's connection, within
// ReportTimeout: a vendor that hangs up (its webhook timeout) must not
// cut a refund or a failover send short halfway; it sends the request
// again, and the repeat finds the work done.
func (c *Receiver) Deliver(ctx context.Context, w http.ResponseWriter, rep notify.Reporter, reports []*notify.DeliveryReport) {
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

// DeliverEntries turns entries into reports with report, which returns
// nil for an entry that says nothing final (counted ignored), and hands
// them to rep as Deliver does.
func (c *Receiver) DeliverEntries(ctx context.Context, w http.ResponseWriter, rep notify.Reporter, entries []Entry, report func(Entry) *notify.DeliveryReport) {
	reports := make([]*notify.DeliveryReport, 0, len(entries))
	for _, e := range entries {
		if r := report(e); r != nil {
			reports = append(reports, r)
		}
	}
	c.Ignore(len(entries) - len(reports))
	c.Deliver(ctx, w, rep, reports)
}
