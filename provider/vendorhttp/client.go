package vendorhttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/notifykit/notify"
)

// NewClient returns the HTTP client a provider uses when its Config gives
// none: whole calls bounded by timeout and by nothing shorter (a vendor
// slow to answer a send it took is waited for up to timeout, not turned
// into an unknown outcome sooner), connections kept alive per vendor
// host, and no redirects followed. A vendor's send API answers where it
// is asked; a redirect would carry the message somewhere else (or, for a
// 301 or 302, turn the POST into a GET without its body), so it is handed
// back to the provider as the answer, which is not the vendor's own.
func NewClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         dialer.DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: 5 * time.Second,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// ValidBaseURL reports whether raw can be a vendor API's base URL: http
// or https with a host, and no user info, query or fragment, which
// appending the API's paths would mangle or which would carry
// credentials into logs.
func ValidBaseURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" &&
		u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == ""
}

// RetryAfter reads a Retry-After header, in seconds as vendors mostly
// send it or as an HTTP date, up to a day ahead; 0 when there is none,
// it is neither, or it is not ahead.
func RetryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if n, err := strconv.Atoi(v); err == nil {
		if n > 0 && n <= 86400 {
			return time.Duration(n) * time.Second
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 && d <= 24*time.Hour {
			return d
		}
	}
	return 0
}

// RefusalCode is the code of a refusal in the vendor's own error format
// whose error code the provider does not know, by the answer's HTTP
// status: 429 a rate limit, a 5xx a temporary refusal (the vendor formed
// the answer and took nothing), any other a refusal for good.
func RefusalCode(status int) notify.Code {
	switch {
	case status == http.StatusTooManyRequests:
		return notify.CodeRateLimited
	case status >= 500:
		return notify.CodeUnavailable
	}
	return notify.CodeRejected
}

// Foreign classifies an answer of HTTP status that is not the vendor's
// own (a proxy's error page, an empty or cut body, JSON of another
// shape), for provider name: 429 is a rate limit (with Retry-After:
// vendors and their gateways alike answer 429 before taking anything); a
// 5xx says nothing of what the vendor did behind it and a 2xx that
// cannot be read may be a success, so both leave the outcome unknown;
// any other status is a refusal. what says what was wrong with the body.
func Foreign(name string, status int, h http.Header, what string) *notify.Error {
	switch {
	case status == http.StatusTooManyRequests:
		e := notify.Errorf(notify.CodeRateLimited, "%s: HTTP 429 too many requests", name)
		e.RetryAfter = RetryAfter(h)
		return e
	case status >= 500, status >= 200 && status < 300:
		return Unknownf(name, "HTTP %d, and the answer %s", status, what)
	}
	return notify.Errorf(notify.CodeRejected, "%s: HTTP %d, and the answer %s", name, status, what)
}

// Conn is the HTTP client a provider holds: the one its Config gave, or,
// when that is nil, one of NewClient's, whose idle connections Close
// releases. It is safe for concurrent use.
type Conn struct {
	client *http.Client
	owned  bool // made here, so Close may release it
}

// NewConn returns a Conn of given, or of NewClient(timeout) when given is
// nil.
func NewConn(given *http.Client, timeout time.Duration) *Conn {
	if given != nil {
		return &Conn{client: given}
	}
	return &Conn{client: NewClient(timeout), owned: true}
}

// Client returns the HTTP client.
func (c *Conn) Client() *http.Client { return c.client }

// Do sends r once with the client, as the function Do does.
func (c *Conn) Do(ctx context.Context, r Request) (*Answer, error) { return Do(ctx, c.client, r) }

// Close releases the idle connections of a client NewConn made; a
// client given to NewConn is left alone. Requests keep working after
// Close, opening new connections, which a later Close releases. It never
// fails.
func (c *Conn) Close() error {
	if c.owned {
		c.client.CloseIdleConnections()
	}
	return nil
}

// CheckSecret says what is wrong with a required credential of provider
// name's Config: missing, or holding control characters (a pasted line
// break), which an HTTP header cannot carry. The error names field, never
// the value; nil when it is fine.
func CheckSecret(name, field, value string) error {
	if value == "" {
		return fmt.Errorf("%s: Config.%s is required", name, field)
	}
	if strings.IndexFunc(value, unicode.IsControl) >= 0 {
		return fmt.Errorf("%s: Config.%s must not contain control characters such as line breaks", name, field)
	}
	return nil
}

// CheckBaseURL returns raw, or def when raw is empty, when it can be a
// vendor API's base URL (ValidBaseURL); else an error naming Config.BaseURL
// of provider name.
func CheckBaseURL(name, raw, def string) (string, error) {
	if raw == "" {
		raw = def
	}
	if !ValidBaseURL(raw) {
		return "", fmt.Errorf("%s: Config.BaseURL must be an http(s) URL without credentials, query or fragment", name)
	}
	return raw, nil
}

// TrimEndpoint returns a configured base URL without its trailing slashes
// and, when it ends in one of paths (compared without regard to case),
// without that path and the slashes before it: the form a vendor's
// documentation gives is often the endpoint itself, and a provider that
// appends its paths must not send to https://api.example.com/send/send.
// The first of paths that matches is the one trimmed, so a longer path
// goes before a shorter one it ends with.
func TrimEndpoint(raw string, paths ...string) string {
	base := strings.TrimRight(raw, "/")
	for _, p := range paths {
		if n := len(base) - len(p); n >= 0 && strings.EqualFold(base[n:], p) {
			return strings.TrimRight(base[:n], "/")
		}
	}
	return base
}

// CleanText makes vendor text fit for an error message: invalid UTF-8 and
// control characters become spaces, runs of white space one space, and
// text over limit bytes (300 when limit is 0 or less) is clipped without
// splitting a UTF-8 sequence, "..." marking the cut.
func CleanText(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, " "))
	s = strings.Join(strings.Fields(s), " ")
	if limit <= 0 {
		limit = clipLimit
	}
	return clip(s, limit)
}
