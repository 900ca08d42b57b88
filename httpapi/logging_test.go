package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// TestEveryLogLineOfASendNamesItsRequest: the access log, the provider's
// line (logged with the send's context, detached from the connection)
// and an observer's line all carry the request ID, and the message ID.
func TestEveryLogLineOfASendNamesItsRequest(t *testing.T) {
	var buf bytes.Buffer // ServeHTTP is called directly: one goroutine writes
	logger := slog.New(httpapi.NewLogHandler(slog.NewJSONHandler(&buf, nil)))
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: httpapienv.TestAccount, Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}, httpapienv.TestKey); err != nil {
		t.Fatal(err)
	}
	w := memstore.NewWallet()
	if err := w.Open(httpapienv.TestAccount, notify.Money{Minor: 1000, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	ch, err := sms.New(sms.Config{Provider: logprovider.New(logger, "sms-log")})
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, memstore.NewLedger(w), notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()),
		notify.WithObserver(observerFunc(func(ctx context.Context, e notify.Event) {
			if e.Receipt != nil {
				logger.InfoContext(ctx, "observed", "message_id", e.Receipt.MessageID, "event", string(e.Type))
			}
		})))
	if err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(n, accounts, httpapi.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}

	for _, reqID := range []string{"client-chosen-id.1", ""} {
		buf.Reset()
		req := httptest.NewRequest(http.MethodPost, httpapi.BasePath+"/sms", strings.NewReader(`{"to":"9876543210","message":"hello"}`))
		req.Header.Set("Authorization", "Bearer "+httpapienv.TestKey)
		req.Header.Set("Content-Type", "application/json")
		if reqID != "" {
			req.Header.Set("X-Request-ID", reqID)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var answer struct {
			MessageID string `json:"message_id"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || rec.Code != 200 || answer.MessageID == "" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		id := rec.Header().Get("X-Request-ID")
		if id == "" || (reqID != "" && id != reqID) {
			t.Fatalf("X-Request-ID %q, sent %q", id, reqID)
		}
		msgs := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("not JSON: %s", sc.Text())
			}
			if line["request_id"] != id || line["message_id"] != answer.MessageID {
				t.Errorf("line without request %s and message %s: %s", id, answer.MessageID, sc.Text())
			}
			msgs[line["msg"].(string)] = true
		}
		for _, m := range []string{"http request", "notify message", "observed"} {
			if !msgs[m] {
				t.Errorf("no %q line in:\n%s", m, buf.String())
			}
		}
	}
}

// TestRequestIDOutsideARequest: a context no send made carries no ID, and
// the log handler adds nothing to its records.
func TestRequestIDOutsideARequest(t *testing.T) {
	if got := httpapi.RequestID(context.Background()); got != "" {
		t.Fatalf("RequestID(Background) = %q", got)
	}
	var buf bytes.Buffer
	slog.New(httpapi.NewLogHandler(slog.NewJSONHandler(&buf, nil))).WithGroup("g").With("a", 1).Info("hi")
	if strings.Contains(buf.String(), "request_id") || !strings.Contains(buf.String(), `"g":{"a":1}`) {
		t.Fatalf("log: %s", buf.String())
	}
}

// observerFunc adapts a function to notify.Observer.
type observerFunc func(ctx context.Context, e notify.Event)

func (f observerFunc) Observe(ctx context.Context, e notify.Event) { f(ctx, e) }
