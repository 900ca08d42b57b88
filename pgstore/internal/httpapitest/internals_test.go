package httpapitest_test

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/internal/syncbuf"
	"github.com/notifykit/notify/pgstore/internal/unreachable"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/wallet"
)

// TestUnreachableDatabaseAnswersNoInternals: with a real pgstore whose
// server cannot be reached, no answer shows the database's user, name,
// host or port, or the store's package; each says which store failed and
// gives the request ID, under which the log has the details.
func TestUnreachableDatabaseAnswersNoInternals(t *testing.T) {
	port := httpapienv.ClosedPort(t)
	store := unreachable.Store(t, strconv.Itoa(port))
	leaks := []string{"gatewayuser", "ledgerdb", "127.0.0.1", strconv.Itoa(port), "pgstore", "dial", "refused"}
	details := []string{"gatewayuser", strconv.Itoa(port)}

	t.Run("every store", func(t *testing.T) {
		var logs syncbuf.Buffer
		ch, err := sms.New(sms.Config{Provider: memprovider.New("sms-mem")})
		if err != nil {
			t.Fatal(err)
		}
		n, err := notify.New(store, store, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()),
			notify.WithIdempotency(store))
		if err != nil {
			t.Fatal(err)
		}
		h, err := httpapi.New(n, store, httpapi.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		e := &httpapienv.Env{Logs: &logs}
		e.URL, e.Client = httpapienv.Serve(t, h)
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/api/v1/sms", `{"to":"9876543210","message":"hello"}`},
			{"GET", "/api/v1/balance", ""},
			{"GET", "/api/v1/messages/0b6a7c1e-1111-4222-8333-444455556666", ""},
		} {
			var r *httpapienv.Reply
			if c.method == "POST" {
				r = e.Post(t, c.path, c.body, nil)
			} else {
				r = e.Do(t, c.method, c.path, nil, nil)
			}
			httpapienv.WantError(t, r, http.StatusServiceUnavailable, "unavailable")
			if msg := httpapienv.WantNoInternals(t, c.path, r, leaks...); !strings.Contains(msg, "accounts store") {
				t.Errorf("%s: the message does not say which store failed: %q", c.path, msg)
			}
		}
		httpapienv.WantLogged(t, "every store", logs.String(), details...)
	})

	t.Run("all but the accounts", func(t *testing.T) {
		e := httpapienv.NewOf(t, httpapienv.OpeningBal, func(e *httpapienv.Env) []notify.Option {
			e.Ledger = store
			return []notify.Option{notify.WithIdempotency(store)}
		})
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/api/v1/sms", `{"to":"9876543210","message":"hello"}`},
			{"POST", "/api/v1/send-otp", `{"to":"9876543210","otp":"482915"}`},
			{"POST", "/api/v1/email/send", `{"to":"asha@example.com","subject":"Hi","message":"<p>Hello</p>"}`},
			{"GET", "/api/v1/balance", ""},
			{"GET", "/api/v1/messages/0b6a7c1e-1111-4222-8333-444455556666", ""},
		} {
			var r *httpapienv.Reply
			if c.method == "POST" {
				r = e.Post(t, c.path, c.body, map[string]string{"Idempotency-Key": "k-" + c.path})
			} else {
				r = e.Do(t, c.method, c.path, nil, nil)
			}
			httpapienv.WantError(t, r, http.StatusServiceUnavailable, "unavailable")
			if msg := httpapienv.WantNoInternals(t, c.path, r, leaks...); !strings.Contains(msg, " store is failing") {
				t.Errorf("%s: the message does not say a store failed: %q", c.path, msg)
			}
		}
		if n := e.Sent(); n != 0 {
			t.Errorf("%d sent", n)
		}
		httpapienv.WantLogged(t, "all but the accounts", e.Logs.String(), details...)
	})
}
