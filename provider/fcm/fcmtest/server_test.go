package fcmtest_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/notifykit/notify/provider/fcm/fcmtest"
)

func newServer(t *testing.T) *fcmtest.Server {
	t.Helper()
	s := fcmtest.NewServer(fcmtest.Config{})
	t.Cleanup(s.Close)
	return s
}

// post sends a raw request to s and returns the answer's status, headers
// and body.
func post(t *testing.T, s *fcmtest.Server, path, contentType, bearer, body string) (int, http.Header, string) {
	t.Helper()
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if bearer != "" {
		h.Set("Authorization", "Bearer "+bearer)
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, resp.Header, b.String()
}

func key(t *testing.T, s *fcmtest.Server) *rsa.PrivateKey {
	t.Helper()
	block, _ := pem.Decode([]byte(s.PrivateKeyPEM()))
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}

// claimSet is an assertion's claims.
type claimSet struct {
	Iss   string `json:"iss"`
	Aud   string `json:"aud"`
	Scope string `json:"scope,omitempty"`
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
}

// assertion signs claims with the account's key (RS256), under kid.
func assertion(t *testing.T, s *fcmtest.Server, kid string, claims claimSet) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := enc(map[string]string{"alg": "RS256", "typ": "JWT", "kid": kid}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key(t, s), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func claims(s *fcmtest.Server) claimSet {
	now := time.Now()
	return claimSet{Iss: s.ClientEmail(), Aud: s.TokenURL(), Scope: fcmtest.Scope, Iat: now.Unix(), Exp: now.Add(time.Hour).Unix()}
}

// grant asks the token endpoint for a token with a and returns the
// answer.
func grant(t *testing.T, s *fcmtest.Server, grantType, a string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {grantType}, "assertion": {a}}
	status, _, body := post(t, s, fcmtest.TokenPath, "application/x-www-form-urlencoded", "", form.Encode())
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	return status, m
}

// accessToken returns a token of scope.
func accessToken(t *testing.T, s *fcmtest.Server, scope string) string {
	t.Helper()
	c := claims(s)
	c.Scope = scope
	status, m := grant(t, s, fcmtest.GrantType, assertion(t, s, s.KeyID(), c))
	if status != 200 {
		t.Fatalf("grant: %d %v", status, m)
	}
	return m["access_token"].(string)
}

// TestCredentialsJSON: the key is one oauth2 takes, pointing at the fake.
func TestCredentialsJSON(t *testing.T) {
	s := newServer(t)
	conf, err := google.JWTConfigFromJSON(s.CredentialsJSON(), fcmtest.Scope)
	if err != nil {
		t.Fatal(err)
	}
	if conf.TokenURL != s.TokenURL() || conf.Email != s.ClientEmail() || conf.PrivateKeyID != s.KeyID() {
		t.Fatalf("config %+v", conf)
	}
	tok, err := conf.TokenSource(context.WithValue(t.Context(), oauth2.HTTPClient, s.Client())).Token()
	if err != nil || tok.AccessToken == "" || time.Until(tok.Expiry) < 59*time.Minute {
		t.Fatalf("token %+v, %v", tok, err)
	}
}

// TestTokenEndpoint: the grant's checks.
func TestTokenEndpoint(t *testing.T) {
	s := newServer(t)
	ok := claims(s)
	mutate := func(f func(*claimSet)) claimSet {
		c := ok
		f(&c)
		return c
	}
	good := assertion(t, s, s.KeyID(), ok)
	tampered := good[:len(good)-4] + "AAAA"
	for _, c := range []struct {
		name, grantType, assertion string
		status                     int
		err, says                  string
	}{
		{"ok", fcmtest.GrantType, good, 200, "", ""},
		{"grant type", "client_credentials", good, 400, "unsupported_grant_type", "Invalid grant_type"},
		{"not a JWS", fcmtest.GrantType, "abc", 400, "invalid_request", "not a signed JWT"},
		{"signature", fcmtest.GrantType, tampered, 400, "invalid_grant", "Invalid JWT Signature."},
		{"kid", fcmtest.GrantType, assertion(t, s, "another-key", ok), 400, "invalid_grant", "Invalid JWT Signature."},
		{"iss", fcmtest.GrantType, assertion(t, s, s.KeyID(), mutate(func(c *claimSet) { c.Iss = "x@y.iam.gserviceaccount.com" })), 400, "invalid_grant", "account not found"},
		{"aud", fcmtest.GrantType, assertion(t, s, s.KeyID(), mutate(func(c *claimSet) { c.Aud = "https://oauth2.googleapis.com/token" })), 400, "invalid_grant", "audience"},
		{"too long", fcmtest.GrantType, assertion(t, s, s.KeyID(), mutate(func(c *claimSet) { c.Exp = c.Iat + 7200 })), 400, "invalid_grant", "short-lived"},
		{"expired", fcmtest.GrantType, assertion(t, s, s.KeyID(), mutate(func(c *claimSet) { c.Iat, c.Exp = c.Iat-7200, c.Exp-7200 })), 400, "invalid_grant", "iat and exp"},
		{"scope", fcmtest.GrantType, assertion(t, s, s.KeyID(), mutate(func(c *claimSet) { c.Scope = "" })), 400, "invalid_scope", "missing scope"},
	} {
		status, m := grant(t, s, c.grantType, c.assertion)
		if status != c.status || c.err != "" && (m["error"] != c.err || !strings.Contains(m["error_description"].(string), c.says)) {
			t.Errorf("%s: %d %v", c.name, status, m)
		}
		if c.err == "" && (m["token_type"] != "Bearer" || m["expires_in"] != float64(3599)) {
			t.Errorf("%s: %v", c.name, m)
		}
	}
	if n := s.TokenRequests(); n != 10 {
		t.Fatalf("TokenRequests = %d, want 10", n)
	}
	if g := s.Grants(); !g[0].Issued || g[1].Issued || g[0].Claims["iss"] != s.ClientEmail() {
		t.Fatalf("grants %+v", g[:2])
	}
	if status, _, _ := post(t, s, fcmtest.TokenPath, "application/json", "", `{"grant_type": "`+fcmtest.GrantType+`"}`); status != 400 {
		t.Fatalf("a JSON grant: %d", status)
	}
	s.DeleteKey()
	if status, m := grant(t, s, fcmtest.GrantType, assertion(t, s, s.KeyID(), claims(s))); status != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("deleted key: %d %v", status, m)
	}
}

const valid = `{"message": {"token": "dXNlci0wMDAx:APA91bH-a-registration-token-of-the-test", "notification": {"body": "Hi"}}}`

// TestSendStrict: the body's checks, with Google's texts.
func TestSendStrict(t *testing.T) {
	s := newServer(t)
	tok := accessToken(t, s, fcmtest.Scope)
	const target = `"token": "dXNlci0wMDAx:APA91bH-a-registration-token-of-the-test"`
	for _, c := range []struct {
		name, body  string
		status      int
		says, field string
		errorCode   string
	}{
		{"valid", valid, 200, "", "", ""},
		{"unknown top-level", `{"message": {` + target + `}, "dry_run": true}`, 400, `Unknown name "dry_run": Cannot find field.`, "", ""},
		{"unknown nested", `{"message": {` + target + `, "android": {"urgency": "high"}}}`, 400, `Unknown name "urgency" at 'message.android': Cannot find field.`, "message.android", ""},
		{"data value", `{"message": {` + target + `, "data": {"a": "x", "b": 12}}}`, 400, `Invalid value at 'message.data[1].value' (TYPE_STRING), 12`, "message.data[1].value", ""},
		{"ttl format", `{"message": {` + target + `, "android": {"ttl": "3600"}}}`, 400, `Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), "3600"`, "message.android.ttl", ""},
		{"ttl range", `{"message": {` + target + `, "android": {"ttl": "3000000s"}}}`, 400, "Request contains an invalid argument.", "message.android.ttl", "INVALID_ARGUMENT"},
		{"priority", `{"message": {` + target + `, "android": {"priority": "URGENT"}}}`, 400, "Invalid value at 'message.android.priority'", "message.android.priority", ""},
		{"no target", `{"message": {"notification": {"body": "Hi"}}}`, 400, "Recipient of the message is not set.", "message", ""},
		{"two targets", `{"message": {` + target + `, "topic": "news"}}`, 400, "oneof field 'target' is already set", "message", ""},
		{"bad token", `{"message": {"token": "short"}}`, 400, "Request contains an invalid argument.", "message.token", "INVALID_ARGUMENT"},
		{"reserved key", `{"message": {` + target + `, "data": {"from": "x"}}}`, 400, "Request contains an invalid argument.", "message.data", "INVALID_ARGUMENT"},
		{"http link", `{"message": {` + target + `, "webpush": {"fcm_options": {"link": "http://x.example/"}}}}`, 400, "invalid argument", "message.webpush.fcm_options.link", "INVALID_ARGUMENT"},
		{"urgency header", `{"message": {` + target + `, "webpush": {"headers": {"Urgency": "now"}}}}`, 400, "invalid argument", "message.webpush.headers", "INVALID_ARGUMENT"},
		{"apns priority", `{"message": {` + target + `, "apns": {"headers": {"apns-priority": "7"}}}}`, 400, "invalid argument", "message.apns.headers", "INVALID_ARGUMENT"},
		{"too big", `{"message": {` + target + `, "data": {"a": "` + strings.Repeat("x", 4100) + `"}}}`, 400, "invalid argument", "message", "INVALID_ARGUMENT"},
		{"camelCase", `{"message": {` + target + `, "android": {"collapseKey": "c", "directBootOk": true}, "webpush": {"fcmOptions": {"link": "https://x.example/"}}}}`, 200, "", "", ""},
		{"not JSON", `{"message":`, 400, "Invalid JSON payload received.", "", ""},
	} {
		status, _, body := post(t, s, s.SendPath(), "application/json; charset=utf-8", tok, c.body)
		var text struct {
			Error struct{ Message string }
		}
		_ = json.Unmarshal([]byte(body), &text)
		if status != c.status || !strings.Contains(text.Error.Message, c.says) {
			t.Errorf("%s: %d %s", c.name, status, body)
			continue
		}
		if status == 200 {
			if !strings.Contains(body, `"name":"projects/`+s.ProjectID()+`/messages/0:`) {
				t.Errorf("%s: %s", c.name, body)
			}
			continue
		}
		var e struct {
			Error struct {
				Code    int
				Status  string
				Details []struct {
					Type            string `json:"@type"`
					ErrorCode       string
					FieldViolations []struct{ Field string }
				}
			}
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != 400 || e.Error.Status != "INVALID_ARGUMENT" {
			t.Errorf("%s: %s", c.name, body)
		}
		var field, code string
		for _, d := range e.Error.Details {
			if len(d.FieldViolations) > 0 {
				field = d.FieldViolations[0].Field
			}
			if d.ErrorCode != "" {
				code = d.ErrorCode
			}
		}
		if field != c.field || code != c.errorCode {
			t.Errorf("%s: field %q, errorCode %q; want %q, %q", c.name, field, code, c.field, c.errorCode)
		}
	}
	if m := s.Messages(); len(m) != 2 || m[1].Link != "https://x.example/" {
		t.Fatalf("messages %+v", m)
	}
	status, _, body := post(t, s, s.SendPath(), "text/plain", tok, valid)
	if status != 400 || !strings.Contains(body, "Invalid JSON payload") {
		t.Fatalf("text/plain: %d %s", status, body)
	}
	status, _, body = post(t, s, s.SendPath(), "application/json", tok, `{"validate_only": true, "message": {"token": "dXNlci0wMDAx:APA91bH-a-registration-token-of-the-test"}}`)
	if status != 200 || !strings.Contains(body, "fake_message_id") || s.Accepted() != 2 {
		t.Fatalf("validate_only: %d %s, %d accepted", status, body, s.Accepted())
	}
}

// TestSendAuth: the bearer token, its scope, and the project.
func TestSendAuth(t *testing.T) {
	s := newServer(t)
	tok := accessToken(t, s, fcmtest.Scope)
	narrow := accessToken(t, s, "https://www.googleapis.com/auth/userinfo.email")
	for _, c := range []struct {
		name, path, bearer string
		status             int
		says               string
	}{
		{"no token", s.SendPath(), "", 401, "missing required authentication credential"},
		{"unknown token", s.SendPath(), "ya29.made-up", 401, "invalid authentication credentials"},
		{"scope", s.SendPath(), narrow, 403, "insufficient authentication scopes"},
		{"project", "/v1/projects/other-project/messages:send", tok, 403, "cloudmessaging.messages.create"},
		{"path", "/v1/messages:send", tok, 404, "Error 404"},
		{"ok", s.SendPath(), tok, 200, `"name"`},
	} {
		if status, _, body := post(t, s, c.path, "application/json", c.bearer, valid); status != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s", c.name, status, body)
		}
	}
	s.RevokeAccessTokens()
	if status, h, body := post(t, s, s.SendPath(), "application/json", tok, valid); status != 401 || !strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("revoked: %d %s", status, body)
	}
	if got := len(s.Requests()); got != 6 {
		t.Fatalf("Requests = %d, want 6 (the unrouted path is not a send)", got)
	}
}

// TestFailures: injected answers are for one send; a registry and
// unregistered tokens stay.
func TestFailures(t *testing.T) {
	s := newServer(t)
	tok := accessToken(t, s, fcmtest.Scope)
	s.FailNext(fcmtest.QuotaExceeded)
	status, h, body := post(t, s, s.SendPath(), "application/json", tok, valid)
	if status != 429 || h.Get("Retry-After") != "60" || !strings.Contains(body, `"errorCode":"QUOTA_EXCEEDED"`) || !strings.Contains(body, `"status":"RESOURCE_EXHAUSTED"`) {
		t.Fatalf("quota: %d %v %s", status, h, body)
	}
	if status, _, _ := post(t, s, s.SendPath(), "application/json", tok, valid); status != 200 {
		t.Fatalf("after the failure: %d", status)
	}
	const device = "dXNlci0wMDAx:APA91bH-a-registration-token-of-the-test"
	s.Unregister(device)
	for range 2 {
		if status, _, body := post(t, s, s.SendPath(), "application/json", tok, valid); status != 404 || !strings.Contains(body, "UNREGISTERED") {
			t.Fatalf("unregistered: %d %s", status, body)
		}
	}
	other := s.NewToken()
	s.Register(device)
	if status, _, _ := post(t, s, s.SendPath(), "application/json", tok, valid); status != 200 {
		t.Fatalf("registered again: %d", status)
	}
	stranger := strings.Replace(valid, device, strings.Repeat("Z", 40), 1)
	if status, _, body := post(t, s, s.SendPath(), "application/json", tok, stranger); status != 400 || !strings.Contains(body, "not a valid FCM registration token") {
		t.Fatalf("unknown token with a registry: %d %s", status, body)
	}
	if status, _, _ := post(t, s, s.SendPath(), "application/json", tok, strings.Replace(valid, device, other, 1)); status != 200 {
		t.Fatalf("NewToken's token: %d", status)
	}
	before := s.Accepted()
	s.FailNextHTTP(http.StatusBadGateway)
	if status, h, _ := post(t, s, s.SendPath(), "application/json", tok, valid); status != 502 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || s.Accepted() != before {
		t.Fatalf("proxy page: %d", status)
	}
	s.BreakNext()
	req, _ := http.NewRequest(http.MethodPost, s.URL+s.SendPath(), strings.NewReader(valid))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("BreakNext answered")
	}
	if s.Accepted() != before+1 {
		t.Fatalf("BreakNext: accepted %d, want %d", s.Accepted(), before+1)
	}
	s.FailNextToken(fcmtest.TokenUnavailable)
	if status, _ := grant(t, s, fcmtest.GrantType, assertion(t, s, s.KeyID(), claims(s))); status != 503 {
		t.Fatalf("token outage: %d", status)
	}
}

// TestLatency: a slow fake gives up when its client does.
func TestLatency(t *testing.T) {
	s := newServer(t)
	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+fcmtest.TokenPath, strings.NewReader("grant_type=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	start := time.Now()
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("answered")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
	s.SetLatency(0)
}
