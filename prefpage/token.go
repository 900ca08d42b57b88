package prefpage

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/notifykit/notify"
)

// Tokens.
//
// A link's token is opaque and authenticated: AES-256-GCM (the standard
// library's) under a key derived from the secret, with a random nonce,
// over the grant in JSON:
//
//	key   = HMAC-SHA256(secret, "notify/prefpage link v1")
//	token = base64url(0x01 || nonce || AES-256-GCM-Seal(key, nonce, grant, 0x01)), unpadded
//
// Whoever sees the URL (a web server's log, a proxy, a link scanner)
// sees neither the recipient nor the account, and nobody without the
// secret can make or alter one: a token changed in any bit fails to
// open. The expiry is inside, so it cannot be moved either.

// MinSecretLen is the shortest Config.Secret accepted: 32 bytes, the
// AES-256 key it stands for.
const MinSecretLen = 32

// MaxTTL is the longest a link may be good for: a link in an e-mail is
// forwarded and kept, so it must not work for ever.
const MaxTTL = 90 * 24 * time.Hour

// maxTokenLen bounds the token a request may carry, before it is
// decoded: a grant of a long address on a few channels is far below it.
const maxTokenLen = 2048

const tokenVersion = 1

// ErrInvalidLink is the cause of a token that is malformed or was not
// made with the secret (forged, altered, or made with another one).
var ErrInvalidLink = errors.New("prefpage: invalid link")

// ErrExpiredLink is the cause of a token whose grant has expired.
var ErrExpiredLink = errors.New("prefpage: expired link")

// Grant is what a link lets its holder do: manage the choices of one
// recipient of one account on the channels named, until Expires.
type Grant struct {
	// Account is the ID of the account whose categories the page shows.
	Account string
	// To is the recipient, in any form its channels take: each channel
	// puts it in its canonical form when the link is made.
	To string
	// Channels are the channels whose choices the page shows, in the
	// page's column order: "sms" and "chat" for a number, "email" for an
	// address. At least one; each must be a channel of the Notifier that
	// takes To.
	Channels []notify.Kind
	// Expires is when the link stops working: after now, at most MaxTTL
	// ahead.
	Expires time.Time
}

// claim is a grant as a token carries it: the recipient already in
// each channel's canonical form.
type claim struct {
	Account string      `json:"a"`
	To      []recipient `json:"r"`
	Expires int64       `json:"e"` // Unix seconds
}

// recipient is a channel and the recipient in its form.
type recipient struct {
	Kind notify.Kind `json:"k"`
	To   string      `json:"t"`
}

// sealer seals and opens tokens with the key derived from a secret.
type sealer struct{ aead cipher.AEAD }

func newSealer(secret []byte) (*sealer, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("prefpage: the secret must be at least %d bytes, not %d", MinSecretLen, len(secret))
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("notify/prefpage link v1"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("prefpage: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("prefpage: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal returns the token of c.
func (s *sealer) seal(c claim) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("prefpage: %w", err)
	}
	b := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	b[0] = tokenVersion
	_, _ = rand.Read(b[1:]) // crypto/rand.Read never fails
	b = s.aead.Seal(b, b[1:], plain, b[:1])
	if enc := base64.RawURLEncoding.EncodedLen(len(b)); enc > maxTokenLen {
		return "", fmt.Errorf("prefpage: a link of %d characters is longer than %d: name fewer channels or a shorter recipient", enc, maxTokenLen)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// open returns the claim of token, an error matching ErrInvalidLink for
// one malformed or not made with the secret, or ErrExpiredLink for one
// whose grant ended before now.
func (s *sealer) open(token string, now time.Time) (claim, error) {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalidLink, why) }
	if len(token) > maxTokenLen {
		return claim{}, bad("too long")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	switch {
	case err != nil:
		return claim{}, bad("not unpadded base64url")
	case len(b) < 1+s.aead.NonceSize()+s.aead.Overhead():
		return claim{}, bad("too short")
	case b[0] != tokenVersion:
		return claim{}, bad(fmt.Sprintf("unknown version %d", b[0]))
	}
	n := 1 + s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[1:n], b[n:], b[:1])
	if err != nil {
		return claim{}, bad("not made with this secret")
	}
	var c claim
	if err := json.Unmarshal(plain, &c); err != nil || c.Account == "" || len(c.To) == 0 {
		return claim{}, bad("malformed")
	}
	if !now.Before(time.Unix(c.Expires, 0)) {
		return claim{}, ErrExpiredLink
	}
	return c, nil
}
