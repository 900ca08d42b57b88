package webpushtest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/mail"
	"net/url"
	"strings"
	"time"
)

// The sizes of RFC 8291's aes128gcm body.
const (
	// MaxBody is the largest body a push service must take (RFC 8291
	// section 4), and the largest the fake takes.
	MaxBody = 4096
	// headerLen is salt (16), rs (4), idlen (1) and the application
	// server's public key (65).
	headerLen = 16 + 4 + 1 + 65
	tagLen    = 16
)

// Decrypt opens an aes128gcm body (RFC 8188) encrypted for a Web Push
// subscription (RFC 8291 section 3) with the subscription's private key
// and authentication secret, as the user agent does, and returns the
// plaintext without its padding. It takes one record, the last: a body
// of more records, a keyid that is not a P-256 public key, a record that
// does not authenticate or whose padding does not end with the last
// record's delimiter (0x02) is an error.
func Decrypt(body []byte, key *ecdh.PrivateKey, auth []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("shorter than the aes128gcm header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if rs < 18 {
		return nil, fmt.Errorf("record size %d is under 18", rs)
	}
	if idlen != 65 || len(body) < 21+idlen {
		return nil, fmt.Errorf("keyid is %d bytes, not the application server's 65-byte public key", idlen)
	}
	asPublic, ciphertext := body[21:21+idlen], body[21+idlen:]
	switch {
	case len(ciphertext) < tagLen+1:
		return nil, errors.New("the record is shorter than its tag and delimiter")
	case uint32(len(ciphertext)) > rs:
		return nil, fmt.Errorf("%d bytes of records over the record size %d: a push message is one record", len(ciphertext), rs)
	}
	as, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, errors.New("keyid is not a P-256 public key")
	}
	shared, err := key.ECDH(as)
	if err != nil {
		return nil, err
	}
	// RFC 8291 section 3.4: the input keying material binds the
	// subscription's authentication secret and both public keys.
	info := "WebPush: info\x00" + string(key.PublicKey().Bytes()) + string(asPublic)
	ikm, err := hkdf.Key(sha256.New, shared, auth, info, 32)
	if err != nil {
		return nil, err
	}
	// RFC 8188 section 2.2 and 2.3.
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, errors.New("the record does not authenticate: encrypted for other keys, or altered")
	}
	// The padding: the delimiter, then zeros.
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 || plain[i] != 0x02 {
		return nil, errors.New("the record does not end with the last record's padding delimiter 0x02")
	}
	return plain[:i], nil
}

// VAPID is a VAPID authorization (RFC 8292) that verified.
type VAPID struct {
	// PublicKey is the k parameter: the application server's public key,
	// base64url without padding.
	PublicKey string
	// Audience, Subject and Expires are the token's aud, sub and exp.
	Audience string
	Subject  string
	Expires  time.Time
	// Header is the token's JOSE header, as sent (JSON).
	Header string
}

// CheckVAPID verifies an Authorization header as a push service does
// (RFC 8292): the scheme vapid with parameters t (a JWT) and k (a P-256
// public key, base64url); a token signed with ES256 that verifies under
// k; aud the origin of the push resource, origin ("https://host[:port]");
// exp after now and at most 24 hours after it; sub a mailto: URL of an
// address or an https: URL. It returns the verified authorization, or
// what is wrong.
func CheckVAPID(authorization, origin string, now time.Time) (*VAPID, error) {
	scheme, params, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "vapid") {
		return nil, errors.New(`the Authorization scheme is not "vapid"`)
	}
	var t, k string
	for _, p := range strings.Split(params, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		value = strings.Trim(strings.TrimSpace(value), `"`)
		switch {
		case !ok:
			return nil, fmt.Errorf("the vapid parameter %q has no value", name)
		case strings.EqualFold(name, "t"):
			t = value
		case strings.EqualFold(name, "k"):
			k = value
		}
	}
	if t == "" || k == "" {
		return nil, errors.New("the vapid authorization needs both t and k")
	}
	rawKey, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(k, "="))
	if err != nil || len(rawKey) != 65 {
		return nil, errors.New("k is not a P-256 public key in base64url")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), rawKey)
	if err != nil {
		return nil, errors.New("k is not a point on the P-256 curve")
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return nil, errors.New("t is not a JWT (three parts)")
	}
	var seg [3][]byte
	for i, p := range parts {
		if seg[i], err = base64.RawURLEncoding.DecodeString(p); err != nil {
			return nil, fmt.Errorf("part %d of the JWT is not base64url without padding", i+1)
		}
	}
	var header struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
	}
	if json.Unmarshal(seg[0], &header) != nil || header.Alg != "ES256" || (header.Typ != "" && !strings.EqualFold(header.Typ, "JWT")) {
		return nil, errors.New(`the JWT's header is not {"alg": "ES256", "typ": "JWT"}`)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(seg[2]) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(seg[2][:32]), new(big.Int).SetBytes(seg[2][32:])) {
		return nil, errors.New("the JWT's ES256 signature does not verify under k")
	}
	var claims struct {
		Aud string      `json:"aud"`
		Exp json.Number `json:"exp"`
		Sub string      `json:"sub"`
	}
	dec := json.NewDecoder(strings.NewReader(string(seg[1])))
	dec.UseNumber()
	if dec.Decode(&claims) != nil {
		return nil, errors.New("the JWT's claims are not a JSON object")
	}
	exp, err := claims.Exp.Int64()
	switch {
	case claims.Aud != origin:
		return nil, fmt.Errorf("aud %q is not the push resource's origin %q", claims.Aud, origin)
	case err != nil:
		return nil, errors.New("exp is not a NumericDate (whole seconds)")
	case exp <= now.Unix():
		return nil, errors.New("the JWT has expired")
	case exp > now.Add(24*time.Hour).Unix():
		return nil, errors.New("exp is more than 24 hours ahead (RFC 8292 section 2)")
	}
	if why := subjectRule(claims.Sub); why != "" {
		return nil, errors.New(why)
	}
	return &VAPID{PublicKey: base64.RawURLEncoding.EncodeToString(rawKey), Audience: claims.Aud, Subject: claims.Sub,
		Expires: time.Unix(exp, 0), Header: string(seg[0])}, nil
}

// subjectRule is the rule sub breaks, or "": a mailto: URL of one address
// (not "mailto:mailto:...") or an https: URL with a host.
func subjectRule(sub string) string {
	u, err := url.Parse(sub)
	if sub == "" || err != nil {
		return "sub is missing or not a URL"
	}
	switch u.Scheme {
	case "mailto":
		if a, err := mail.ParseAddress(u.Opaque); err != nil || a.Address != u.Opaque || strings.Contains(u.Opaque, ":") {
			return fmt.Sprintf("sub %q is not a mailto: URL of an address", sub)
		}
		return ""
	case "https":
		if u.Host == "" {
			return "sub is an https: URL without a host"
		}
		return ""
	}
	return fmt.Sprintf("sub %q is neither a mailto: nor an https: URL", sub)
}
