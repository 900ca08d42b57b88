package vendorhttp

import (
	"net"
	"net/http"
	"net/url"
	"time"
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
