package vendorhttptest

import "net/url"

// IsHTTPURL reports whether s is an absolute http or https URL with a
// host, as a fake's Config wants a receiver's callback URL to be.
func IsHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
