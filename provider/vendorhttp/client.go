package vendorhttp

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
)

// NewClient returns the HTTP client a provider uses when its Config gives
// none: whole calls bounded by timeout, connections kept alive per vendor
// host, and no redirects followed. A vendor's send API answers where it
// is asked; a redirect would carry the message somewhere else (or, for a
// 301 or 302, turn the POST into a GET without its body), so it is handed
// back to the provider as the answer, which is not the vendor's own.
func NewClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: 10 * time.Second,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
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

// RetryAfter reads a Retry-After header given in seconds, as vendors send
// it, up to a day; 0 when there is none or it is not such a number.
func RetryAfter(h http.Header) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && n > 0 && n <= 86400 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// Foreign classifies an answer of HTTP status that is not the vendor's
// own (a proxy's error page, an empty or cut body, JSON of another
// shape), for provider name: 429 is a rate limit (with Retry-After:
// vendors and their gateways alike answer 429 before taking anything); a
// 5xx says nothing of what the vendor did behind it and a 2xx that
// cannot be read may be a success, so both leave the outcome unknown;
// any other status is a refusal. what says what was wrong with the body.
func Foreign(name string, status int, h http.Header, what string) error {
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
