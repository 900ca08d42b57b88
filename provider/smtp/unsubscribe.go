package smtp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// Unsubscribe tokens.
//
// A token is opaque: it names the recipient without showing the address
// to whoever sees the URL (web server logs, proxies, link scanners), and
// nobody without the secret can make one. It is deterministic
// authenticated encryption in the SIV manner (RFC 5297's construction,
// with HMAC-SHA256 as its pseudo-random function):
//
//	kMAC  = HMAC-SHA256(secret, "notify/smtp unsubscribe v1 mac")
//	kEnc  = HMAC-SHA256(secret, "notify/smtp unsubscribe v1 enc")
//	iv    = first 16 bytes of HMAC-SHA256(kMAC, address)
//	token = base64url(0x01 || iv || AES-256-CTR(kEnc, iv, address)), unpadded
//
// VerifyUnsubscribeToken decrypts the address and recomputes iv from it,
// comparing in constant time, so a token altered in any bit is refused.
// The same address and secret always give the same token, so a message
// sent twice carries the same URL.

// MinUnsubscribeSecretLen is the shortest Server.UnsubscribeSecret, and
// secret of UnsubscribeToken and VerifyUnsubscribeToken, accepted: 32
// bytes, as many as the HMAC-SHA256 key it stands for.
const MinUnsubscribeSecretLen = 32

// maxTokenAddress bounds the address a token may carry: the longest
// address RFC 5321 lets through a forward path.
const maxTokenAddress = 254

// maxTokenLen is the length of the longest valid token, in characters.
var maxTokenLen = base64.RawURLEncoding.EncodedLen(1 + sivLen + maxTokenAddress)

const (
	tokenVersion = 1
	sivLen       = 16
)

// ErrInvalidUnsubscribeToken is the error of VerifyUnsubscribeToken for
// a token that is malformed, or was not made with the secret (forged,
// altered, or made with another secret). Test with errors.Is; the
// error's text says which, and never shows the secret or the token.
var ErrInvalidUnsubscribeToken = errors.New("smtp: invalid unsubscribe token")

// tokenKeys are the two keys derived from a secret.
type tokenKeys struct {
	mac   []byte
	block cipher.Block
}

func newTokenKeys(secret []byte) (*tokenKeys, error) {
	if len(secret) < MinUnsubscribeSecretLen {
		return nil, fmt.Errorf("smtp: an unsubscribe secret must be at least %d bytes, not %d", MinUnsubscribeSecretLen, len(secret))
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("notify/smtp unsubscribe v1 enc")) // 32 bytes: AES-256
	if err != nil {
		return nil, err // cannot happen with a 32-byte key
	}
	return &tokenKeys{mac: derive("notify/smtp unsubscribe v1 mac"), block: block}, nil
}

func (k *tokenKeys) siv(address []byte) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write(address)
	return m.Sum(nil)[:sivLen]
}

func (k *tokenKeys) token(address string) string {
	b := make([]byte, 1+sivLen+len(address))
	b[0] = tokenVersion
	iv := k.siv([]byte(address))
	copy(b[1:], iv)
	cipher.NewCTR(k.block, iv).XORKeyStream(b[1+sivLen:], []byte(address))
	return base64.RawURLEncoding.EncodeToString(b)
}

func (k *tokenKeys) verify(token string) (string, error) {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalidUnsubscribeToken, why) }
	if len(token) > maxTokenLen {
		return "", bad("too long")
	}
	// The decoder skips CR and LF; a token is canonical only without
	// them, so anything outside the alphabet is refused first.
	for i := 0; i < len(token); i++ {
		if c := token[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "", bad("not unpadded base64url")
		}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	switch {
	case err != nil:
		return "", bad("not unpadded base64url")
	case len(b) < 1+sivLen+1:
		return "", bad("too short")
	case b[0] != tokenVersion:
		return "", bad(fmt.Sprintf("unknown version %d", b[0]))
	}
	iv, ct := b[1:1+sivLen], b[1+sivLen:]
	address := make([]byte, len(ct))
	cipher.NewCTR(k.block, iv).XORKeyStream(address, ct)
	if !hmac.Equal(iv, k.siv(address)) {
		return "", bad("not made with this secret")
	}
	return string(address), nil
}

// UnsubscribeToken returns the token that names address in an
// unsubscribe URL: what a Server with this UnsubscribeSecret puts in
// place of "{token}" in ListUnsubscribeURL. Host applications use it to
// put the same link in a message's body. It fails when secret is shorter
// than MinUnsubscribeSecretLen, or address is empty or longer than 254
// bytes; the error never shows the secret.
func UnsubscribeToken(secret []byte, address string) (string, error) {
	k, err := newTokenKeys(secret)
	if err != nil {
		return "", err
	}
	if address == "" || len(address) > maxTokenAddress {
		return "", fmt.Errorf("smtp: an unsubscribe token carries an address of 1 to %d bytes, not %d", maxTokenAddress, len(address))
	}
	return k.token(address), nil
}

// VerifyUnsubscribeToken returns the address that token names, when
// UnsubscribeToken, AccountUnsubscribeToken or a Server's "{token}"
// (which names the message's account too) made it with secret. It is
// what a host application's unsubscribe endpoint calls on the token from
// the URL, before it records the address as unsubscribed.
//
// A token that is malformed, or was not made with secret (forged,
// altered in any bit, or made with another secret), gives an error for
// which errors.Is(err, ErrInvalidUnsubscribeToken) holds; the check is
// in constant time. A secret shorter than MinUnsubscribeSecretLen is an
// error of its own. It never panics, whatever token holds, and no error
// shows the secret or the token. To rotate secrets, try the new secret,
// then the old one while mail sent with it may still be answered.
func VerifyUnsubscribeToken(secret []byte, token string) (address string, err error) {
	k, err := newTokenKeys(secret)
	if err != nil {
		return "", err
	}
	_, address, err = k.verifyAny(token)
	return address, err
}
