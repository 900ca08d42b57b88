package fcm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
)

// A fetcher gets a new access token, within ctx. Its errors are
// classified: a token request certainly sends no message, so none is of
// unknown outcome.
type fetcher func(ctx context.Context) (*oauth2.Token, error)

// tokenCache holds the access token the sends share, with
// oauth2.ReuseTokenSource's rule (a token is reused until it is within
// oauth2's expiry margin, 10 seconds, of its expiry), and fetches a new
// one when it must: one fetch at a time, which the sends that need it
// meanwhile wait for. It is not ReuseTokenSource itself because that
// fetches with the context it was made with, not the send's, and cannot
// drop a token FCM refused.
type tokenCache struct {
	fetch fetcher

	mu     sync.Mutex
	tok    *oauth2.Token
	flight *flight // the fetch under way, nil when none
}

// flight is one fetch, which other sends wait for.
type flight struct {
	done chan struct{}
	tok  *oauth2.Token
	err  error
	// ended: the fetch failed because the context of the send that made
	// it ended; that says nothing of the others', which fetch again.
	ended bool
}

// token returns a usable access token: the cached one, the one a fetch
// under way brings, or one this call fetches with ctx. A send whose ctx
// ends while it waits returns CodeUnavailable wrapping ctx.Err(): nothing
// was sent.
func (c *tokenCache) token(ctx context.Context) (*oauth2.Token, error) {
	for {
		c.mu.Lock()
		if c.tok.Valid() {
			tok := c.tok
			c.mu.Unlock()
			return tok, nil
		}
		f, lead := c.flight, c.flight == nil
		if lead {
			f = &flight{done: make(chan struct{})}
			c.flight = f
		}
		c.mu.Unlock()
		if lead {
			return c.run(ctx, f)
		}
		select {
		case <-ctx.Done():
			return nil, notSent(ctx, "waiting for an access token")
		case <-f.done:
		}
		if f.ended {
			continue
		}
		// A token just issued is used even when it is already within
		// the expiry margin (a short-lived one): the next send fetches.
		return f.tok, f.err
	}
}

// run fetches a token for f with ctx and hands it to the cache and to
// those waiting.
func (c *tokenCache) run(ctx context.Context, f *flight) (*oauth2.Token, error) {
	var tok *oauth2.Token
	var err error
	if ctx.Err() != nil {
		err = notSent(ctx, "no access token yet")
	} else {
		tok, err = c.fetch(ctx)
	}
	if err == nil && (tok == nil || tok.AccessToken == "") {
		tok, err = nil, notify.Errorf(notify.CodeUnavailable, "fcm: request not sent: the token endpoint answered without an access token")
	}
	c.mu.Lock()
	c.flight = nil
	if err == nil {
		c.tok = tok
	}
	f.tok, f.err, f.ended = tok, err, err != nil && ctx.Err() != nil
	c.mu.Unlock()
	close(f.done)
	return tok, err
}

// drop forgets tok, when it is still the cached token (a fetch may have
// replaced it meanwhile), so that the next send fetches a new one.
func (c *tokenCache) drop(tok *oauth2.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok != nil && c.tok.AccessToken == tok.AccessToken {
		c.tok = nil
	}
}

// notSent is the error of a send whose ctx ended before its request was
// made: CodeUnavailable, errors.Is seeing ctx's error.
func notSent(ctx context.Context, what string) *notify.Error {
	return &notify.Error{Code: notify.CodeUnavailable, Err: fmt.Errorf("fcm: request not sent: %s: %w", what, ctx.Err())}
}

// jwtConfig is a service account's JWT-bearer configuration (RFC 7523):
// oauth2's, kept behind a type of this package so that nothing prints it.
type jwtConfig struct{ conf *jwt.Config }

// jwtFetcher fetches tokens with the service account's signed JWT, with
// client's transport (its redirect rule and jar too), within the send's
// ctx and client's Timeout.
func jwtFetcher(jc *jwtConfig, client *http.Client) fetcher {
	return func(ctx context.Context) (*oauth2.Token, error) {
		bound := ctx
		if client.Timeout > 0 {
			var cancel context.CancelFunc
			bound, cancel = context.WithTimeout(ctx, client.Timeout)
			defer cancel()
		}
		rt := &boundTransport{ctx: bound, base: client.Transport}
		if rt.base == nil {
			rt.base = http.DefaultTransport
		}
		hc := &http.Client{Transport: rt, CheckRedirect: client.CheckRedirect, Jar: client.Jar}
		// oauth2 posts with the client it finds in the context
		// (oauth2.HTTPClient), but with a request of its own, without a
		// context: rt puts bound on it, so the send's end stops the fetch.
		tok, err := jc.conf.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, hc)).Token()
		if err != nil {
			return nil, tokenError(ctx, err, rt.failure())
		}
		return tok, nil
	}
}

// boundTransport sends each request within ctx, and keeps the last
// transport error, which oauth2 flattens to text.
type boundTransport struct {
	ctx  context.Context
	base http.RoundTripper

	mu  sync.Mutex
	err error
}

func (t *boundTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r.WithContext(t.ctx))
	if err != nil {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
	}
	return resp, err
}

func (t *boundTransport) failure() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// sourceFetcher fetches tokens from a caller's TokenSource, which cannot
// see ctx: when ctx ends first, the send stops waiting, and the call's
// result, when it comes, is dropped.
func sourceFetcher(ts oauth2.TokenSource) fetcher {
	type result struct {
		tok *oauth2.Token
		err error
	}
	return func(ctx context.Context) (*oauth2.Token, error) {
		ch := make(chan result, 1)
		go func() {
			tok, err := ts.Token()
			ch <- result{tok, err}
		}()
		select {
		case <-ctx.Done():
			return nil, notSent(ctx, "waiting for Config.TokenSource")
		case r := <-ch:
			if r.err != nil {
				return nil, tokenError(ctx, r.err, nil)
			}
			return r.tok, nil
		}
	}
}

// tokenError classifies a failed token fetch. Nothing was sent to FCM, so
// it is never of unknown outcome: the token endpoint's refusal of the
// credentials is CodeRejected, its 429 CodeRateLimited, anything else
// (the network, a 5xx, an answer that cannot be read) CodeUnavailable.
// transport is the transport's own error, when there was one. The text
// names the credentials, never the key, the assertion or a token.
func tokenError(ctx context.Context, err, transport error) error {
	if ctx.Err() != nil {
		return notSent(ctx, "no access token yet")
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return retrieveError(re)
	}
	what := "the access token could not be fetched"
	if transport != nil {
		var ne net.Error
		if errors.As(transport, &ne) && ne.Timeout() || errors.Is(transport, context.DeadlineExceeded) {
			what += ": timed out"
		}
		return notify.Errorf(notify.CodeUnavailable, "fcm: request not sent: %s: %s", what, scrub(vendorhttp.Cause(transport)))
	}
	return notify.Errorf(notify.CodeUnavailable, "fcm: request not sent: %s: %s", what, scrub(err.Error()))
}

// refusedCredentials are the OAuth2 errors (RFC 6749 section 5.2) that say
// the credentials themselves are refused: a key deleted or wrong, an
// account disabled.
var refusedCredentials = map[string]bool{"invalid_grant": true, "invalid_client": true, "unauthorized_client": true}

// retrieveError classifies the token endpoint's answer other than 2xx.
func retrieveError(re *oauth2.RetrieveError) error {
	status := re.Response.StatusCode
	var body struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	code, desc := re.ErrorCode, re.ErrorDescription
	if code == "" && json.Unmarshal(re.Body, &body) == nil {
		code, desc = body.Error, body.Description
	}
	said := ""
	if code != "" {
		said = " (" + scrub(vendorhttp.CleanText(code, 64))
		if desc != "" {
			said += ": " + scrub(vendorhttp.CleanText(desc, 200))
		}
		said += ")"
	}
	switch {
	case status == http.StatusTooManyRequests:
		e := notify.Errorf(notify.CodeRateLimited, "fcm: request not sent: the token endpoint answered HTTP 429%s", said)
		e.RetryAfter = vendorhttp.RetryAfter(re.Response.Header)
		return e
	case status >= 500:
		return notify.Errorf(notify.CodeUnavailable, "fcm: request not sent: the token endpoint answered HTTP %d%s", status, said)
	case refusedCredentials[code]:
		return notify.Errorf(notify.CodeRejected,
			"fcm: the token endpoint refused the service account's credentials%s: check fcm Config.CredentialsJSON (the key may have been deleted, or the account disabled)", said)
	case code != "":
		return notify.Errorf(notify.CodeRejected, "fcm: the token endpoint refused the token request, HTTP %d%s", status, said)
	}
	// Not an OAuth2 error: a proxy's page, a redirect.
	return notify.Errorf(vendorhttp.RefusalCode(status), "fcm: request not sent: the token endpoint answered HTTP %d without an OAuth2 error (check the token_uri of fcm Config.CredentialsJSON)", status)
}

// jwsLike matches a JWS in compact form, such as a signed assertion that a
// token endpoint's error text might echo.
var jwsLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*`)

// scrub keeps an assertion out of vendor text bound for an error.
func scrub(s string) string { return jwsLike.ReplaceAllString(s, "[assertion]") }
