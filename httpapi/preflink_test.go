package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/prefpage"
)

var pageSecret = []byte("0123456789abcdef0123456789abcdef-link-secret")

// newLinkEnv is the preference env with links to a page served at its
// own loopback server, over the env's ledger and Notifier.
func newLinkEnv(t *testing.T) (*httpapienv.Env, *httptest.Server) {
	t.Helper()
	var srv *httptest.Server
	e := httpapienv.NewHooked(t, httpapienv.OpeningBal, func(*httpapienv.Env) []notify.Option { return nil },
		func(e *httpapienv.Env) []httpapi.Option {
			page, err := prefpage.New(prefpage.Config{Secret: pageSecret, Preferences: e.Ledger, Recipients: e.Notifier})
			if err != nil {
				t.Fatal(err)
			}
			srv = httptest.NewServer(page)
			t.Cleanup(srv.Close)
			return []httpapi.Option{httpapi.WithPreferences(e.Ledger), httpapi.WithPreferenceLinks(page, srv.URL)}
		})
	putCategories(t, e.Ledger)
	return e, srv
}

// A link made through the API opens the page for the recipient given as
// a send takes it; what they save there stops the next send, and the
// link's URL shows neither the number nor the account.
func TestPreferenceLinkOpensThePage(t *testing.T) {
	e, srv := newLinkEnv(t)
	r := e.Post(t, "/api/v1/preferences/link", `{"to":"`+prefNumber+`","channels":["sms","chat"],"expires_in":3600}`, nil)
	if r.Status != http.StatusOK || r.Body["success"] != true {
		t.Fatalf("link: %d %s", r.Status, r.Raw)
	}
	link, _ := r.Body["url"].(string)
	if !strings.HasPrefix(link, srv.URL+"?t=") || strings.Contains(link, "9876543210") || strings.Contains(link, httpapienv.TestAccount) {
		t.Fatalf("link %q: want the page's URL with an opaque token", link)
	}
	u, _ := url.Parse(link)
	token := u.Query().Get("t")
	res, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), `name="c:marketing:sms"`) {
		t.Fatalf("page: %d\n%s", res.StatusCode, page)
	}
	// Everything unchecked on both channels.
	form := url.Values{"t": {token}, "shown": {"c:marketing:sms", "c:marketing:chat", "c:news:sms", "c:news:chat", "c:order:sms", "c:order:chat"}}
	res, err = http.PostForm(srv.URL, form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("save: %d", res.StatusCode)
	}
	before := e.Minor(t, httpapienv.TestAccount)
	httpapienv.WantError(t, e.Post(t, "/api/v1/sms", `{"to":"`+prefNumber+`","message":"Order 7 shipped","category":"order"}`, nil),
		http.StatusUnprocessableEntity, "declined")
	if got := e.Minor(t, httpapienv.TestAccount); got != before {
		t.Fatalf("balance %d after a declined send, want %d", got, before)
	}
}

// A link request names each bad field at once.
func TestPreferenceLinkInputs(t *testing.T) {
	e, _ := newLinkEnv(t)
	for body, fields := range map[string][]string{
		`{"to":"` + prefNumber + `"}`:                                         {"channels"},
		`{"to":"` + prefNumber + `","channels":["fax"]}`:                      {"channels.0"},
		`{"to":"` + prefNumber + `","channels":["sms"],"expires_in":30}`:      {"expires_in"},
		`{"to":"` + prefNumber + `","channels":["sms"],"expires_in":9999999}`: {"expires_in"},
		`{"channels":["sms"]}`:                                                {"to"},
		`{"to":"` + prefNumber + `","channels":["sms","sms"]}`:                {"channels"},
	} {
		r := e.Post(t, "/api/v1/preferences/link", body, nil)
		httpapienv.WantError(t, r, http.StatusBadRequest, "invalid_argument")
		for _, f := range fields {
			if !strings.Contains(r.Raw, `"`+f+`"`) {
				t.Errorf("%s: %s does not name %s", body, r.Raw, f)
			}
		}
	}
}
