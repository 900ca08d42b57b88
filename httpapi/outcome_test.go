package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/httpapienv"
	"github.com/notifykit/notify/record"
)

// settled counts the sends whose outcome is final, so that a test can
// wait for detached sends without sleeping.
type settled struct {
	ch chan record.State
}

func newSettled() *settled { return &settled{ch: make(chan record.State, 64)} }

func (s *settled) Observe(_ context.Context, e notify.Event) {
	if e.Type != record.StatePending {
		s.ch <- e.Type
	}
}

// wait returns the types of the next n settled sends, failing the test
// after a generous bound.
func (s *settled) wait(t *testing.T, n int) []record.State {
	t.Helper()
	var got []record.State
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for len(got) < n {
		select {
		case ty := <-s.ch:
			got = append(got, ty)
		case <-timeout.C:
			t.Fatalf("%d of %d sends settled", len(got), n)
		}
	}
	return got
}

// hangUps posts n SMS whose clients hang up while the vendor call is in
// flight, waits until the server has seen every request's context end,
// then lets the vendor answer. The sends go on detached.
func hangUps(t *testing.T, e *httpapienv.Env, n int) {
	t.Helper()
	// A server of its own, whose middleware reports when a request's
	// context ends: for a client that hung up, that is the server noticing.
	ended := make(chan struct{}, n)
	url, client := httpapienv.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		context.AfterFunc(r.Context(), func() { ended <- struct{}{} })
		e.Handler.ServeHTTP(w, r)
	}))
	inFlight := make(chan struct{}, n)
	release := make(chan struct{})
	e.SMS.SetHandler(func(ctx context.Context, env *notify.Envelope) (*notify.Result, error) {
		inFlight <- struct{}{}
		select {
		case <-release:
			return &notify.Result{}, nil // memprovider captures and names it
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	ctx, hangUp := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/sms",
				strings.NewReader(`{"to":"9876543210","message":"Your parcel is out for delivery"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", httpapienv.TestKey)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close() // refused before the vendor call (402)
				inFlight <- struct{}{}
			}
		}()
	}
	for range n {
		<-inFlight // each request is either at the vendor or answered
	}
	hangUp()
	wg.Wait()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for i := range n {
		select {
		case <-ended:
		case <-timeout.C:
			t.Fatalf("the server saw %d of %d requests end", i, n)
		}
	}
	close(release)
}

// TestClientThatHangsUpIsStillCharged: ten clients that disconnected
// while the vendor call was in flight used to get their SMS for free.
func TestClientThatHangsUpIsStillCharged(t *testing.T) {
	s := newSettled()
	e := httpapienv.NewFull(t, httpapienv.OpeningBal, []notify.Option{notify.WithObserver(s)})
	hangUps(t, e, 10)
	for _, ty := range s.wait(t, 10) {
		if ty != record.StateSent {
			t.Fatalf("a send settled as %s, want sent", ty)
		}
	}
	if got, want := e.Minor(t, httpapienv.TestAccount), int64(httpapienv.OpeningBal-10*25); got != want || e.SMS.Len() != 10 {
		t.Fatalf("balance %d (want %d), vendor got %d SMS (want 10)", got, want, e.SMS.Len())
	}
}

// TestHangUpsCannotOverdrawTheWallet: with the price of one SMS in the
// wallet, twenty clients that hang up used to get 14 SMS out.
func TestHangUpsCannotOverdrawTheWallet(t *testing.T) {
	s := newSettled()
	e := httpapienv.NewFull(t, 25, []notify.Option{notify.WithObserver(s)})
	hangUps(t, e, 20)
	s.wait(t, 1)
	if got := e.Minor(t, httpapienv.TestAccount); got != 0 || e.SMS.Len() != 1 {
		t.Fatalf("balance %d, vendor got %d SMS: want 0 and exactly 1", got, e.SMS.Len())
	}
}

// TestLostAnswerIs202AndARepeatReturnsIt: the vendor takes the message and
// the answer is lost; the client gets 202 with the message ID, and its
// retry with the same Idempotency-Key the same answer, never a second SMS.
func TestLostAnswerIs202AndARepeatReturnsIt(t *testing.T) {
	e := httpapienv.New(t)
	e.SMS.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		return &notify.Result{}, errors.New("read: connection reset by peer") // taken, answer lost
	})
	hdr := map[string]string{"Content-Type": "application/json", "Authorization": httpapienv.TestKey, "Idempotency-Key": "order-42"}
	body := `{"to":"9876543210","message":"Your order shipped"}`
	first := e.Post(t, "/api/v1/sms", body, hdr)
	httpapienv.WantError(t, first, http.StatusAccepted, "outcome_unknown")
	id, _ := first.Body["message_id"].(string)
	if first.Body["status"] != "unknown" || id == "" || first.Body["cost_minor"] != 25.0 {
		t.Fatalf("202 body: %s", first.Raw)
	}
	msg, _ := first.Body["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "Idempotency-Key") || !strings.Contains(msg, "may have") {
		t.Fatalf("202 message does not say what to do: %q", msg)
	}
	again := e.Post(t, "/api/v1/sms", body, hdr)
	httpapienv.WantError(t, again, http.StatusAccepted, "outcome_unknown")
	if again.Body["message_id"] != id {
		t.Fatalf("repeat answered another message: %s", again.Raw)
	}
	if e.SMS.Len() != 1 || e.Minor(t, httpapienv.TestAccount) != httpapienv.OpeningBal-25 {
		t.Fatalf("vendor got %d, balance %d: want 1 SMS, charged once", e.SMS.Len(), e.Minor(t, httpapienv.TestAccount))
	}
}

// TestPanickingProviderIs202WithoutItsDetails: a provider that panics may
// have sent the message, so the answer is 202 and the charge stands; the
// panic's text is a bug's detail, for the log only.
func TestPanickingProviderIs202WithoutItsDetails(t *testing.T) {
	e := httpapienv.New(t)
	e.SMS.SetHandler(func(context.Context, *notify.Envelope) (*notify.Result, error) {
		panic("assignment to entry in nil map")
	})
	r := e.Post(t, "/api/v1/sms", `{"to":"9876543210","message":"hello"}`, nil)
	httpapienv.WantError(t, r, http.StatusAccepted, "outcome_unknown")
	if strings.Contains(r.Raw, "nil map") || strings.Contains(r.Raw, "panicked") {
		t.Fatalf("the panic's details reached the client: %s", r.Raw)
	}
	if !strings.Contains(e.Logs.String(), "nil map") {
		t.Fatalf("the panic's details are not in the log: %s", e.Logs.String())
	}
	if e.Minor(t, httpapienv.TestAccount) != httpapienv.OpeningBal-25 {
		t.Fatalf("balance %d: the charge must stand", e.Minor(t, httpapienv.TestAccount))
	}
}
