package smtp

import (
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/store"
)

// Account tokens.
//
// A token made by UnsubscribeToken (version 1) names an address only; a
// suppression list is kept per account, so UnsubscribeHandler needs the
// account too. AccountUnsubscribeToken makes version 2 tokens, which name
// both, with the same keys and construction as version 1 (see
// unsubscribe.go), the version byte bound into the synthetic IV so that
// no token of one version verifies as the other:
//
//	iv    = first 16 bytes of HMAC-SHA256(kMAC, 0x02 || account || 0x00 || address)
//	token = base64url(0x02 || iv || AES-256-CTR(kEnc, iv, account || 0x00 || address))
//
// Version 1 tokens stay valid: UnsubscribeHandler takes them for its
// DefaultAccount (refusing them when it has none).

const accountTokenVersion = 2

// maxTokenAccount bounds the account ID a version 2 token may carry.
const maxTokenAccount = 128

// maxAccountTokenLen is the length of the longest valid version 2 token.
var maxAccountTokenLen = base64.RawURLEncoding.EncodedLen(1 + sivLen + maxTokenAccount + 1 + maxTokenAddress)

func (k *tokenKeys) siv2(plain []byte) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte{accountTokenVersion})
	m.Write(plain)
	return m.Sum(nil)[:sivLen]
}

// AccountUnsubscribeToken returns a version 2 unsubscribe token, naming
// both the account and the address, for an unsubscribe URL that
// UnsubscribeHandler answers. It fails when secret is shorter than
// MinUnsubscribeSecretLen, account is empty, longer than 128 bytes or
// holds a NUL, or address is empty or longer than 254 bytes; the error
// never shows the secret or the address.
func AccountUnsubscribeToken(secret []byte, account, address string) (string, error) {
	k, err := newTokenKeys(secret)
	if err != nil {
		return "", err
	}
	return k.accountToken(account, address)
}

// accountToken is AccountUnsubscribeToken with k's keys.
func (k *tokenKeys) accountToken(account, address string) (string, error) {
	if account == "" || len(account) > maxTokenAccount || strings.IndexByte(account, 0) >= 0 {
		return "", fmt.Errorf("smtp: an unsubscribe token carries an account of 1 to %d bytes without NUL", maxTokenAccount)
	}
	if address == "" || len(address) > maxTokenAddress {
		return "", fmt.Errorf("smtp: an unsubscribe token carries an address of 1 to %d bytes, not %d", maxTokenAddress, len(address))
	}
	plain := []byte(account + "\x00" + address)
	iv := k.siv2(plain)
	b := make([]byte, 1+sivLen+len(plain))
	b[0] = accountTokenVersion
	copy(b[1:], iv)
	cipher.NewCTR(k.block, iv).XORKeyStream(b[1+sivLen:], plain)
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// verifyAny returns the account ("" for a version 1 token) and address a
// token names, or an error matching ErrInvalidUnsubscribeToken.
func (k *tokenKeys) verifyAny(token string) (account, address string, err error) {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalidUnsubscribeToken, why) }
	if len(token) < 2 {
		return "", "", bad("too short")
	}
	// The first character holds the top six bits of the version byte:
	// "A" for both versions; the second tells them apart.
	if !strings.HasPrefix(token, "A") || token[1] < 'g' || token[1] > 'v' {
		address, err := k.verify(token)
		return "", address, err
	}
	if len(token) > maxAccountTokenLen {
		return "", "", bad("too long")
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "", "", bad("not unpadded base64url")
		}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	switch {
	case err != nil:
		return "", "", bad("not unpadded base64url")
	case len(b) < 1+sivLen+3:
		return "", "", bad("too short")
	case b[0] != accountTokenVersion:
		return "", "", bad(fmt.Sprintf("unknown version %d", b[0]))
	}
	iv, ct := b[1:1+sivLen], b[1+sivLen:]
	plain := make([]byte, len(ct))
	cipher.NewCTR(k.block, iv).XORKeyStream(plain, ct)
	if !hmac.Equal(iv, k.siv2(plain)) {
		return "", "", bad("not made with this secret")
	}
	account, address, ok := strings.Cut(string(plain), "\x00")
	if !ok || account == "" || address == "" {
		return "", "", bad("malformed")
	}
	return account, address, nil
}

// UnsubscribeConfig configures UnsubscribeHandler.
type UnsubscribeConfig struct {
	// Secret is the UnsubscribeSecret the tokens were made with, at least
	// MinUnsubscribeSecretLen bytes. Required.
	Secret []byte
	// Suppressions is the list the handler writes to: the one the
	// Notifier enforces (its ledger, when that implements
	// store.Suppressions). Required.
	Suppressions store.Suppressions
	// DefaultAccount is the account a version 1 token (UnsubscribeToken,
	// and a Server's "{token}" in mail sent before tokens named the
	// account, which names an address only) unsubscribes
	// from. Empty: version 1 tokens are refused as invalid, and only
	// AccountUnsubscribeToken's are taken.
	DefaultAccount string
	// Token returns the token of a request; default r.PathValue("token")
	// (a route such as "/unsubscribe/{token}"), else the query parameter
	// "token".
	Token func(r *http.Request) string
	// Now is the clock of the entries' times; default time.Now.
	Now func() time.Time
}

// maxUnsubscribeBody bounds a POST's body: RFC 8058's is
// "List-Unsubscribe=One-Click", 26 bytes; a multipart one is a little
// longer.
const maxUnsubscribeBody = 4 << 10

// unsubscribeTimeout bounds the write to the suppression list.
const unsubscribeTimeout = 10 * time.Second

// UnsubscribeHandler returns the http.Handler of an unsubscribe URL
// (Server.ListUnsubscribeURL, or a link in a message's body), which
// records the token's address as unsubscribed (store.SuppressUnsubscribed)
// on the e-mail channel of the token's account:
//
//   - POST with the form body List-Unsubscribe=One-Click
//     (application/x-www-form-urlencoded or multipart/form-data), what a
//     mailbox provider sends for RFC 8058 one-click unsubscribe, and what
//     the confirmation page's button sends: the address is recorded and
//     the answer is 200 with a short page. Any other body is 400.
//   - GET or HEAD shows a small page with that button and records
//     nothing: mail scanners and link previews fetch every URL of a
//     message, and a GET that unsubscribed would unsubscribe people who
//     never clicked.
//   - Any other method is 405.
//
// A token that is malformed, forged, made with another secret, or of
// version 1 without a DefaultAccount, is 400 and records nothing. A list
// that fails is 503 (the sender may try again). No answer and no error
// shows the address in full (the page masks it, "a***@example.com") or
// the token; answers are not cached and send no Referer (the URL holds
// the token). Recording is idempotent: a second POST changes nothing,
// and an entry with a stronger reason (a hard bounce) keeps it.
//
// It fails when Secret is short or Suppressions is nil. The handler is
// safe for concurrent use.
func UnsubscribeHandler(cfg UnsubscribeConfig) (http.Handler, error) {
	k, err := newTokenKeys(cfg.Secret)
	if err != nil {
		return nil, err
	}
	if cfg.Suppressions == nil {
		return nil, errors.New("smtp: UnsubscribeConfig.Suppressions is required")
	}
	h := &unsubscribeHandler{keys: k, list: cfg.Suppressions, def: cfg.DefaultAccount, token: cfg.Token, now: cfg.Now}
	if h.token == nil {
		h.token = func(r *http.Request) string {
			if t := r.PathValue("token"); t != "" {
				return t
			}
			return r.URL.Query().Get("token")
		}
	}
	if h.now == nil {
		h.now = time.Now
	}
	return h, nil
}

type unsubscribeHandler struct {
	keys  *tokenKeys
	list  store.Suppressions
	def   string
	token func(r *http.Request) string
	now   func() time.Time
}

var unsubscribePage = template.Must(template.New("unsubscribe").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p>
{{if .Form}}<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>{{end}}
</body></html>
`))

type unsubscribeView struct {
	Title, Text string
	Form        bool
}

func (h *unsubscribeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		hd.Set("Allow", "GET, HEAD, POST")
		h.page(w, r, http.StatusMethodNotAllowed, unsubscribeView{Title: "Method not allowed", Text: "Use the button on this page to unsubscribe."})
		return
	}
	account, address, err := h.keys.verifyAny(h.token(r))
	if err == nil && account == "" {
		if account = h.def; account == "" {
			err = ErrInvalidUnsubscribeToken
		}
	}
	if err != nil {
		h.page(w, r, http.StatusBadRequest, unsubscribeView{Title: "Invalid link", Text: "This unsubscribe link is not valid. Use the link of a message you received."})
		return
	}
	masked := maskAddress(address)
	if r.Method != http.MethodPost {
		h.page(w, r, http.StatusOK, unsubscribeView{Title: "Unsubscribe", Form: true,
			Text: "Unsubscribe " + masked + " from these messages? You will still receive messages you asked for, such as codes and receipts."})
		return
	}
	if !oneClick(w, r) {
		h.page(w, r, http.StatusBadRequest, unsubscribeView{Title: "Bad request", Form: true,
			Text: "The request did not ask to unsubscribe (List-Unsubscribe=One-Click). Use the button below."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), unsubscribeTimeout)
	defer cancel()
	// The list keeps the address in the e-mail channel's form, the one
	// the Notifier reads it by before a campaign.
	to, err := email.Recipient(address)
	if err == nil {
		_, err = h.list.AddSuppression(ctx, store.Suppression{Account: account, Kind: email.Kind, To: to,
			Reason: store.SuppressUnsubscribed, At: h.now()})
	}
	switch {
	case notify.CodeOf(err) == notify.CodeInvalidArgument:
		h.page(w, r, http.StatusBadRequest, unsubscribeView{Title: "Invalid link", Text: "This unsubscribe link does not name an address that can be unsubscribed."})
	case err != nil:
		hd.Set("Retry-After", "60")
		h.page(w, r, http.StatusServiceUnavailable, unsubscribeView{Title: "Try again later", Text: "We could not record your request just now. Please try again in a minute."})
	default:
		h.page(w, r, http.StatusOK, unsubscribeView{Title: "Unsubscribed", Text: masked + " will receive no more of these messages."})
	}
}

// oneClick reads a POST's form and reports whether it asks for RFC
// 8058's one-click unsubscribe. The body is bounded; a body over the
// bound, of another media type, or unparseable is no.
func oneClick(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxUnsubscribeBody)
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return false
	}
	switch mt {
	case "application/x-www-form-urlencoded":
		err = r.ParseForm()
	case "multipart/form-data":
		err = r.ParseMultipartForm(maxUnsubscribeBody)
		if r.MultipartForm != nil {
			defer func() { _ = r.MultipartForm.RemoveAll() }()
		}
	default:
		return false
	}
	return err == nil && r.PostForm.Get("List-Unsubscribe") == "One-Click"
}

func (h *unsubscribeHandler) page(w http.ResponseWriter, r *http.Request, status int, v unsubscribeView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	_ = unsubscribePage.Execute(w, v)
}

// maskAddress shows an address as its first character, "***" and its
// domain, enough for its owner to know it and too little to harvest.
func maskAddress(a string) string {
	at := strings.LastIndexByte(a, '@')
	if at <= 0 {
		return "***"
	}
	_, n := utf8.DecodeRuneInString(a)
	return a[:n] + "***" + a[at:]
}
