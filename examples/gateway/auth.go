package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// requireKey serves h only to requests that carry key (the value of the
// setting variable), as a bearer token or as the password of basic
// authentication (any user name); others get 401 with a challenge a
// browser answers with a prompt. Keys are
// compared by digest in constant time, so neither their content nor
// their length leaks through timing.
func requireKey(key, variable, realm string, h http.Handler) http.Handler {
	want := sha256.Sum256([]byte(key))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := "", false
		if _, pass, basic := r.BasicAuth(); basic {
			got, ok = pass, true
		} else if tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); bearer {
			got, ok = tok, true
		}
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+realm+`", charset="UTF-8"`)
			http.Error(w, "401 unauthorized: send the key of "+variable+" as a bearer token or a basic-auth password", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
