package vendorhttp

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/notifykit/notify"
)

// MinTokenLen is the shortest path token CheckTokenReceiver accepts: for a vendor
// that signs nothing, the token in the callback URL is the receiver's
// only authentication.
const MinTokenLen = 16

// CheckTokenReceiver says what is wrong with the WebhookConfig of a
// receiver of provider name that a token in its path authenticates (a
// vendor that signs nothing): no Reporter, or a Token shorter than
// MinTokenLen or holding '/', spaces or control characters, which a path
// segment cannot carry as they are. The error names the field and never
// repeats the token; nil when all is well.
func CheckTokenReceiver(name string, rep notify.Reporter, token string) error {
	switch {
	case rep == nil:
		return fmt.Errorf("%s: WebhookConfig.Reporter is required", name)
	case len(token) < MinTokenLen:
		return fmt.Errorf("%s: WebhookConfig.Token must be at least %d bytes: it is the receiver's only authentication", name, MinTokenLen)
	case !ValidToken(token):
		return fmt.Errorf("%s: WebhookConfig.Token must not contain '/', spaces or control characters", name)
	}
	return nil
}

// ValidToken reports whether token can be a receiver's path token: at
// least MinTokenLen bytes, without '/', spaces or control characters, so
// that it is one segment of a URL's path.
func ValidToken(token string) bool {
	return len(token) >= MinTokenLen && !strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == '/' || r == 0x7f })
}

// Redact replaces each of secrets (an API secret, a one-time code) that
// s holds with "[redacted]": for a vendor's error text, which may echo a
// request's values, before it reaches an error or a log.
func Redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// CheckSignedReceiver says what is wrong with the WebhookConfig of a
// receiver of provider name whose vendor signs its reports with a secret
// (its WebhookConfig.<field>): no Reporter, no secret (why says what the
// vendor signs with it), or a secret with control characters (a pasted
// line break, which no signature would ever match). The error names the
// field and never repeats the secret; nil when all is well.
func CheckSignedReceiver(name string, rep notify.Reporter, field, secret, why string) error {
	switch {
	case rep == nil:
		return fmt.Errorf("%s: WebhookConfig.Reporter is required", name)
	case secret == "":
		return fmt.Errorf("%s: WebhookConfig.%s is required: %s", name, field, why)
	case strings.IndexFunc(secret, unicode.IsControl) >= 0:
		return fmt.Errorf("%s: WebhookConfig.%s must not contain control characters such as line breaks", name, field)
	}
	return nil
}

// AdmitToken answers a request whose method is not one of methods (405,
// with Allow) or whose path token (PathToken) is not token (401, compared
// in constant time before a byte of the body is read, counted refused),
// and reports whether the receiver may go on with it.
func (c *Receiver) AdmitToken(w http.ResponseWriter, r *http.Request, token string, methods ...string) bool {
	if !AllowMethods(w, r, methods...) {
		return false
	}
	if !SecretEqual(PathToken(r), token) {
		c.Refuse(w, r)
		return false
	}
	return true
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
