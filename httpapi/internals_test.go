package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify/store/storeutil"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
)

// pgWords is how pgx names an unreachable server: what a store fake says.
const pgWords = "failed to connect to `user=postgres database=notify host=127.0.0.1:5432`: dial error: connection refused"

var pgLeaks = []string{"user=", "postgres", "database=", "127.0.0.1", ":5432", "pgstore", "dial"}

// leakyOpen's Open, which writes a record with its debit, fails in
// pgx's words.
type leakyOpen struct{ store.Ledger }

func (leakyOpen) Open(context.Context, *record.Message) (record.Balance, error) {
	return record.Balance{}, notify.Errorf(notify.CodeUnavailable, "pgstore: open: %s", pgWords)
}

// OpenUnlisted goes through Open, as a wrapper's must.
func (l leakyOpen) OpenUnlisted(ctx context.Context, m *record.Message, to string, stopping []store.SuppressionReason) (record.Balance, store.Suppression, error) {
	return storeutil.OpenUnlisted(ctx, l, m, to, stopping)
}

// leakyIdempotency fails every Complete in pgx's words: the message went
// out, and the answer's note says the record failed.
type leakyIdempotency struct{ *memstore.Idempotency }

func (leakyIdempotency) Complete(context.Context, string, string, []byte) error {
	return notify.Errorf(notify.CodeInternal, "pgstore: complete: %s", pgWords)
}

// leakyMessages fails to move a record to sent, in pgx's words.
type leakyMessages struct{ store.Ledger }

func (m leakyMessages) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if u.State == record.StateSent {
		return store.Moved{}, notify.Errorf(notify.CodeInternal, "pgstore: move: %s", pgWords)
	}
	return m.Ledger.Move(ctx, account, id, u)
}

// TestStoreWordsNeverAnswered: whatever a store says (here in pgx's words,
// naming the user, database and address) stays out of every answer, those
// of a sent message included (whose note says what failed after the
// send), and goes to the log.
func TestStoreWordsNeverAnswered(t *testing.T) {
	const sendSMS = `{"to":"9876543210","message":"hello"}`
	t.Run("ledger", func(t *testing.T) {
		e := httpapienv.NewOf(t, httpapienv.OpeningBal, func(e *httpapienv.Env) []notify.Option {
			e.Ledger = leakyOpen{e.Ledger}
			return nil
		})
		r := e.Post(t, "/api/v1/sms", sendSMS, nil)
		httpapienv.WantError(t, r, http.StatusServiceUnavailable, "unavailable")
		if msg := httpapienv.WantNoInternals(t, "ledger", r, pgLeaks...); !strings.Contains(msg, "ledger store") {
			t.Errorf("the message does not name the ledger store: %q", msg)
		}
		httpapienv.WantLogged(t, "ledger", e.Logs.String(), "user=postgres database=notify host=127.0.0.1:5432")
	})
	for _, c := range []struct {
		name string
		opts func(*httpapienv.Env) []notify.Option
		says string
	}{
		{"idempotency record", func(e *httpapienv.Env) []notify.Option {
			return []notify.Option{notify.WithIdempotency(leakyIdempotency{memstore.NewIdempotency(time.Hour)})}
		}, "the idempotency record could not be written"},
		{"message record", func(e *httpapienv.Env) []notify.Option {
			e.Ledger = leakyMessages{e.Ledger}
			return nil
		}, "the message record could not be updated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := httpapienv.NewOf(t, httpapienv.OpeningBal, c.opts)
			r := e.Post(t, "/api/v1/sms", sendSMS, map[string]string{"Idempotency-Key": "k1"})
			if r.Status != http.StatusOK || r.Body["success"] != true {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
			httpapienv.WantNoLeaks(t, c.name, r, pgLeaks...)
			if note, _ := r.Body["note"].(string); !strings.Contains(note, c.says) {
				t.Errorf("note %q, want it to say %q", note, c.says)
			}
			httpapienv.WantLogged(t, c.name, e.Logs.String(), "user=postgres database=notify host=127.0.0.1:5432", r.Header.Get("X-Request-ID"))
		})
	}
}

// downAtFailed fails every move into failed in pgx's words while down is
// set: the database goes away just as a refusal is to be refunded.
type downAtFailed struct {
	store.Ledger
	down *atomic.Bool
}

func (m downAtFailed) Move(ctx context.Context, account, id string, u store.Update) (store.Moved, error) {
	if u.State == record.StateFailed && m.down.Load() {
		return store.Moved{}, notify.Errorf(notify.CodeUnavailable, "pgstore: move: %s", pgWords)
	}
	return m.Ledger.Move(ctx, account, id, u)
}

// TestRefusalWithItsRefundUnwrittenClaimsNoRefund: the provider refuses
// and the database fails the refund's move into failed. The answer must
// not say the charge was refunded (it is not, yet: the Notifier retries
// the move in the background); it names the failing store, and shows no
// internals.
func TestRefusalWithItsRefundUnwrittenClaimsNoRefund(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	e := httpapienv.NewOf(t, httpapienv.OpeningBal, func(e *httpapienv.Env) []notify.Option {
		e.Ledger = downAtFailed{e.Ledger, &down}
		return nil
	})
	t.Cleanup(func() { down.Store(false) }) // the background retry lands and ends
	e.SMS.FailNext(1, notify.CodeRejected)
	r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hello"}`, nil)
	httpapienv.WantError(t, r, http.StatusBadGateway, "rejected")
	msg := httpapienv.WantNoInternals(t, "refund unwritten", r, pgLeaks...)
	if strings.Contains(msg, "refunded") || !strings.Contains(msg, "ledger store") {
		t.Errorf("the answer says %q: want the failing ledger store named, and no refund claimed", msg)
	}
	if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal-25 {
		t.Errorf("balance %d: the charge stands until the store takes the refund", got)
	}
}

// TestUnreachableRelayAnswersNoInternals: with the SMTP relay down (a
// real smtp provider pointed at a loopback port nothing listens on), or
// refusing the message in words that name its host, the answer names the
// provider but not the relay's host, port or words, and gives the request
// ID; the log has the details.
func TestUnreachableRelayAnswersNoInternals(t *testing.T) {
	const mail = `{"to":"asha@example.com","subject":"Hi","message":"<p>Hello</p>"}`
	relay := func(t *testing.T, port int) *httpapienv.Env {
		p, err := smtp.New(smtp.Config{Default: smtp.Server{Host: "127.0.0.1", Port: port, Encryption: smtp.EncryptionNone,
			From: "shop@example.com", Helo: "gw.example.com", ConnectTimeout: 5 * time.Second, SendTimeout: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		ch, err := email.New(email.Config{Provider: p})
		if err != nil {
			t.Fatal(err)
		}
		return httpapienv.NewFull(t, httpapienv.OpeningBal, []notify.Option{notify.WithChannel(ch)})
	}

	t.Run("down", func(t *testing.T) {
		port := httpapienv.ClosedPort(t)
		e := relay(t, port)
		r := e.Post(t, "/api/v1/email/send", mail, nil)
		httpapienv.WantError(t, r, http.StatusServiceUnavailable, "unavailable")
		msg := httpapienv.WantNoInternals(t, "relay down", r, "127.0.0.1", strconv.Itoa(port), "dial", "refused", "connect to")
		if !strings.Contains(msg, "provider smtp") {
			t.Errorf("the message does not name the provider: %q", msg)
		}
		httpapienv.WantLogged(t, "relay down", e.Logs.String(), "127.0.0.1:"+strconv.Itoa(port))
		if got := e.Minor(t, httpapienv.TestAccount); got != httpapienv.OpeningBal {
			t.Errorf("balance %d, want %d: refunded", got, httpapienv.OpeningBal)
		}
	})

	t.Run("refusing", func(t *testing.T) {
		srv, err := smtptest.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		srv.RejectNext(554, "5.7.1 mx7.corp.internal: relaying denied for account 4471")
		e := relay(t, srv.Port)
		r := e.Post(t, "/api/v1/email/send", mail, nil)
		httpapienv.WantError(t, r, http.StatusBadGateway, "rejected")
		httpapienv.WantNoInternals(t, "relay refusing", r, srv.Addr, strconv.Itoa(srv.Port), "mx7.corp.internal", "4471", "554")
		httpapienv.WantLogged(t, "relay refusing", e.Logs.String(), "mx7.corp.internal", srv.Addr)
	})
}

// TestVendorWordsNeverAnswered: a vendor's words (addresses, URLs, its
// accounts) stay out of an outcome_unknown answer, a failed leg of a sent
// OTP, a chat failover's note and a message record; each goes to the log.
func TestVendorWordsNeverAnswered(t *testing.T) {
	const vendorWords = "Post \"https://api.vendor.internal:8443/v2/send?acct=AC7731\": read tcp 10.9.8.7:51234: connection reset by peer"
	leaks := []string{"vendor.internal", "8443", "AC7731", "10.9.8.7", "read tcp"}

	t.Run("outcome unknown", func(t *testing.T) {
		e := httpapienv.New(t)
		e.SMS.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
			return nil, errors.New(vendorWords)
		})
		r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hello"}`, nil)
		httpapienv.WantError(t, r, http.StatusAccepted, "outcome_unknown")
		if msg := httpapienv.WantNoInternals(t, "unknown", r, leaks...); !strings.Contains(msg, "Idempotency-Key") {
			t.Errorf("the message does not say what to do: %q", msg)
		}
		httpapienv.WantLogged(t, "unknown", e.Logs.String(), "AC7731")
	})

	t.Run("failed leg", func(t *testing.T) {
		e := httpapienv.New(t)
		e.Cloud.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
			return nil, notify.Errorf(notify.CodeRejected, "cloudchat: %s", vendorWords)
		})
		r := e.Post(t, "/api/v1/send-otp", `{"to":"9876543210","otp":"482915"}`, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		httpapienv.WantNoLeaks(t, "failed leg", r, leaks...)
		legs, _ := r.Body["legs"].([]any)
		if len(legs) != 2 {
			t.Fatalf("legs: %s", r.Raw)
		}
		leg := legs[1].(map[string]any)
		msg, _ := leg["error"].(map[string]any)["message"].(string)
		if id := r.Header.Get("X-Request-ID"); !strings.Contains(msg, "(request "+id+")") || leg["success"] != false {
			t.Errorf("failed leg %v: want a plain message with the request ID %s", leg, id)
		}
		httpapienv.WantLogged(t, "failed leg", e.Logs.String(), "AC7731")
	})

	t.Run("failover note", func(t *testing.T) {
		e := httpapienv.New(t)
		e.Cloud.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
			return nil, notify.Errorf(notify.CodeUnavailable, "cloudchat: %s", vendorWords)
		})
		r := e.Post(t, "/api/v1/messenger/send", `{"to":"9876543210","message":"hello","gateway":"auto"}`, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		httpapienv.WantNoLeaks(t, "failover note", r, leaks...)
		if note, _ := r.Body["note"].(string); note != "sent by the qr gateway: the cloud gateway failed first" {
			t.Errorf("note %q", note)
		}
		httpapienv.WantLogged(t, "failover note", e.Logs.String(), "AC7731")
	})

	t.Run("message record", func(t *testing.T) {
		e := httpapienv.New(t)
		e.SMS.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
			return nil, notify.Errorf(notify.CodeUnavailable, "smsgateway: %s", vendorWords)
		})
		r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hello"}`, nil)
		httpapienv.WantError(t, r, http.StatusServiceUnavailable, "unavailable")
		httpapienv.WantNoInternals(t, "send", r, leaks...)
		id, _ := r.Body["message_id"].(string)
		if id == "" {
			t.Fatalf("no message ID: %s", r.Raw)
		}
		rec := e.Do(t, http.MethodGet, "/api/v1/messages/"+id, nil, nil)
		if rec.Status != http.StatusOK {
			t.Fatalf("%d %s", rec.Status, rec.Raw)
		}
		d, _ := rec.Body["data"].(map[string]any)
		if d["status"] != "failed" || d["error_code"] != "unavailable" || d["error"] == "" || d["error"] == nil {
			t.Fatalf("record %s", rec.Raw)
		}
		httpapienv.WantNoLeaks(t, "the record", rec, leaks...)
	})
}

// TestCallersFaultsKeepTheirWords: the errors a client is to act on are
// answered as informatively as ever, without a request ID in the message.
func TestCallersFaultsKeepTheirWords(t *testing.T) {
	e := httpapienv.NewWith(t, 10)
	for _, c := range []struct {
		body, code string
		status     int
		says       string
	}{
		{`{"to":"98765","message":"hello"}`, "invalid_argument", 400, "to "},
		{`{"to":"9876543210","message":"hello"}`, "insufficient_funds", 402, "0.25 INR"},
	} {
		r := e.Post(t, "/api/v1/sms", c.body, nil)
		httpapienv.WantError(t, r, c.status, c.code)
		msg, _ := r.Body["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, c.says) || strings.Contains(msg, "(request ") {
			t.Errorf("%s: message %q, want it to say %q and no request ID", c.code, msg, c.says)
		}
	}
}
