package smtp_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/notifykit/notify/provider/smtp"
)

// The host application's one-click unsubscribe endpoint (RFC 8058) for
// campaign mail sent with ListUnsubscribeURL
// "https://shop.example/unsubscribe?t={token}" and the same
// UnsubscribeSecret. Mail clients POST "List-Unsubscribe=One-Click" to
// the URL; a GET (a person's browser, or a link scanner) must not
// unsubscribe by itself, so it only shows a confirmation form.
func ExampleVerifyUnsubscribeToken() {
	// In a real application: at least 32 random bytes from the secret
	// store, shared with the smtp.Server configuration.
	secret := []byte("example-secret-do-not-use-0123456789")

	unsubscribed := map[string]bool{} // the application's own store
	mux := http.NewServeMux()
	mux.HandleFunc("/unsubscribe", func(w http.ResponseWriter, r *http.Request) {
		addr, err := smtp.VerifyUnsubscribeToken(secret, r.URL.Query().Get("t"))
		if errors.Is(err, smtp.ErrInvalidUnsubscribeToken) {
			http.Error(w, "this unsubscribe link is not valid", http.StatusBadRequest)
			return
		} else if err != nil {
			http.Error(w, "unsubscribe is not available", http.StatusInternalServerError)
			return
		}
		if r.Method != http.MethodPost {
			fmt.Fprintf(w, "Unsubscribe %s? <form method=post><button>Unsubscribe</button></form>\n", addr) // escape it in real HTML
			return
		}
		unsubscribed[addr] = true
		fmt.Fprintln(w, "unsubscribed")
	})

	// What a Server with this secret puts in place of {token} for
	// asha@example.com; a body's own unsubscribe link can use it too.
	token, err := smtp.UnsubscribeToken(secret, "asha@example.com")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "https://shop.example/unsubscribe?t="+token, strings.NewReader("List-Unsubscribe=One-Click")),
		httptest.NewRequest("POST", "https://shop.example/unsubscribe?t="+token[:len(token)-2]+"AA", nil), // altered
		httptest.NewRequest("POST", "https://shop.example/unsubscribe?t=YXNoYUBleGFtcGxlLmNvbQ", nil),     // forged
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	fmt.Println("unsubscribed:", unsubscribed)
	// Output:
	// 200 unsubscribed
	// 400 this unsubscribe link is not valid
	// 400 this unsubscribe link is not valid
	// unsubscribed: map[asha@example.com:true]
}
