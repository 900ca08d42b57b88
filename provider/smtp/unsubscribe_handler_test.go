package smtp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/store"
)

// recordingList is a suppression list that remembers every add.
type recordingList struct {
	*memstore.Suppressions
	mu   sync.Mutex
	adds []store.Suppression
}

func (l *recordingList) AddSuppression(ctx context.Context, e store.Suppression) (store.Suppression, error) {
	l.mu.Lock()
	l.adds = append(l.adds, e)
	l.mu.Unlock()
	return l.Suppressions.AddSuppression(ctx, e)
}

// FuzzUnsubscribeHandler feeds the handler any token, method, media type
// and body. It must never panic, answer only 200, 400 or 405, never show
// an address in full, and record an entry only from a token made with
// the secret: the two seeded ones, for their account and address.
func FuzzUnsubscribeHandler(f *testing.F) {
	v1, err := smtp.UnsubscribeToken(unsubSecret, "one@example.com")
	if err != nil {
		f.Fatal(err)
	}
	v2, err := smtp.AccountUnsubscribeToken(unsubSecret, "acct-2", "two@example.com")
	if err != nil {
		f.Fatal(err)
	}
	const form = "application/x-www-form-urlencoded"
	f.Add(v1, "POST", form, "List-Unsubscribe=One-Click")
	f.Add(v2, "POST", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--x--\r\n")
	f.Add(v2, "GET", "", "")
	f.Add(v2[:len(v2)-1]+"A", "POST", form, "List-Unsubscribe=One-Click")
	f.Add("AgAAAAAAAAAAAAAAAAAAAAAAAAAA", "POST", form, "List-Unsubscribe=One-Click&List-Unsubscribe=x")
	f.Add(v1, "DELETE", "text/plain", "%%%")
	f.Fuzz(func(t *testing.T, token, method, ctype, body string) {
		list := &recordingList{Suppressions: memstore.NewSuppressions()}
		h, err := smtp.UnsubscribeHandler(smtp.UnsubscribeConfig{Secret: unsubSecret, Suppressions: list, DefaultAccount: "acct-1",
			Token: func(*http.Request) string { return token }})
		if err != nil {
			t.Fatal(err)
		}
		if method == "" || strings.ContainsAny(method, " \t\r\n()<>@,;:\\\"/[]?={}") {
			method = "POST"
		}
		req := httptest.NewRequest(http.MethodGet, "/unsubscribe", strings.NewReader(body))
		req.Method = method
		req.Header.Set("Content-Type", ctype)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusMethodNotAllowed:
		default:
			t.Fatalf("status %d", w.Code)
		}
		page := w.Body.String()
		if strings.Contains(page, "one@example.com") || strings.Contains(page, "two@example.com") {
			t.Fatalf("page shows an address: %q", page)
		}
		for _, e := range list.adds {
			ok := e.Account == "acct-1" && e.To == "one@example.com" && token == v1 ||
				e.Account == "acct-2" && e.To == "two@example.com" && token == v2
			if !ok || e.Reason != store.SuppressUnsubscribed || method != "POST" {
				t.Fatalf("recorded %+v from token %q, method %s", e, token, method)
			}
		}
	})
}

// An unsubscribe link writes the address in the e-mail channel's form
// (email.Recipient), the one the Notifier looks a campaign's recipient up
// by: a link made for "Asha@Example.COM" stops mail to asha@example.com.
func TestUnsubscribeWritesTheChannelsForm(t *testing.T) {
	list := &recordingList{Suppressions: memstore.NewSuppressions()}
	h, err := smtp.UnsubscribeHandler(smtp.UnsubscribeConfig{Secret: unsubSecret, Suppressions: list})
	if err != nil {
		t.Fatal(err)
	}
	token, err := smtp.AccountUnsubscribeToken(unsubSecret, "acme", "Asha@Example.COM")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/unsubscribe/"+token, strings.NewReader("List-Unsubscribe=One-Click"))
	req.SetPathValue("token", token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || len(list.adds) != 1 || list.adds[0].To != "asha@example.com" {
		t.Fatalf("status %d, adds %+v: want one entry for asha@example.com", rec.Code, list.adds)
	}
}
