package vendorhttp

import (
	"errors"
	"net/http"
	"strings"
)

// MinTokenLen is the shortest path token CheckToken accepts: for a vendor
// that signs nothing, the token in the callback URL is the receiver's
// only authentication.
const MinTokenLen = 16

// CheckToken says what is wrong with a receiver's path token, for its
// constructor's error (prefixed with the package's name): shorter than
// MinTokenLen, or holding '/', spaces or control characters, which a
// path segment cannot carry as they are. The error never repeats the
// token.
func CheckToken(token string) error {
	switch {
	case len(token) < MinTokenLen:
		return errors.New("must be at least 16 bytes: it is the receiver's only authentication")
	case strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == '/' || r == 0x7f }):
		return errors.New("must not contain '/', spaces or control characters")
	}
	return nil
}

// PathToken is the token a request carries: the {token} wildcard of a
// ServeMux pattern, else the last segment of the path (a trailing slash
// aside). Compare it with SecretEqual.
func PathToken(r *http.Request) string {
	if t := r.PathValue("token"); t != "" {
		return t
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}
