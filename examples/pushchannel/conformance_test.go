package pushchannel_test

import (
	"strings"
	"testing"

	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/channeltest"
	"github.com/notifykit/notify/examples/pushchannel"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/wallet"
)

// TestConformance runs the channel kit on the push channel, with its
// request codec, over a capture provider standing in for the push service.
func TestConformance(t *testing.T) {
	p := memprovider.New("push")
	ch := pushchannel.New(p)
	req := func(r pushchannel.Request) *pushchannel.Request { r.Account = "acme"; return &r }
	channeltest.Run(t, channeltest.Harness{
		Channel: ch,
		Account: &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()},
		Valid: []notify.Request{
			req(pushchannel.Request{Token: token, Body: "Your order has shipped."}),
			req(pushchannel.Request{Token: " " + token + " ", Title: "Acme", Body: "नमस्ते", Domain: "shop.example.in",
				IdempotencyKey: "order-17"}),
		},
		Invalid: []channeltest.Invalid{
			{Name: "no body", Request: req(pushchannel.Request{Token: token}), Fields: []string{"body"}},
			{Name: "every field", Request: req(pushchannel.Request{Token: "short", Title: strings.Repeat("t", 66), Body: "\xff"}),
				Fields: []string{"token", "title", "body"}},
		},
		Providers: []channeltest.Fake{p},
		Codec:     ch,
		Stored: []channeltest.Stored{{Name: "v1",
			Data: []byte(`{"v":1,"account":"acme","request":{"token":"` + token +
				`","title":"","body":"Hi","domain":"","idempotency_key":"k1"}}`),
			Request: req(pushchannel.Request{Token: token, Body: "Hi", IdempotencyKey: "k1"})}},
	})
}

// TestDecodeRefuses: what is not a push request of a known version is an
// error, never a request.
func TestDecodeRefuses(t *testing.T) {
	ch := pushchannel.New(memprovider.New("push"))
	for _, data := range []string{``, `null`, `{}`, `{"v":2,"account":"acme","request":{"body":"x"}}`,
		`{"v":1,"request":{"body":"x"}}`, `{"v":1,"account":"acme"}`, `[1]`} {
		if r, err := ch.DecodeRequest([]byte(data)); err == nil {
			t.Errorf("DecodeRequest(%s) = %+v", data, r)
		}
	}
	if _, err := ch.EncodeRequest(&otherRequest{}); err == nil {
		t.Error("EncodeRequest took a request of another channel")
	}
}

type otherRequest struct{ pushchannel.Request }

func (*otherRequest) Kind() notify.Kind { return "other" }

// TestQueuedPush: with its codec a push waits on a queue like any other
// message: charged when queued, sent by the worker from its record.
func TestQueuedPush(t *testing.T) {
	p := memprovider.New("push")
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}, apiKey); err != nil {
		t.Fatal(err)
	}
	wal := memstore.NewWallet()
	if err := wal.Open("acme", notify.Money{Minor: opening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	ledger := memstore.NewLedger(wal)
	q, err := memqueue.New(memqueue.Config{Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, ledger, notify.WithChannel(pushchannel.New(p)), notify.WithQueue(q),
		notify.WithPrices(&pushchannel.Prices{Next: wallet.DefaultINR(), Push: perPush}))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := queued.New(n).Enqueue(t.Context(), &pushchannel.Request{Account: "acme", Token: token, Title: "Acme", Body: "Shipped"})
	if err != nil || rc.Status != record.StateQueued || rc.Cost.Minor != perPush {
		t.Fatalf("Enqueue = %+v, %v", rc, err)
	}
	if p.Len() != 0 {
		t.Fatal("queued push sent before the worker ran")
	}
	if ran := q.RunDue(t.Context(), queued.New(n)); ran != 1 {
		t.Fatalf("the worker ran %d jobs, want 1", ran)
	}
	m, err := n.Message(t.Context(), "acme", rc.MessageID)
	if err != nil || m.State != record.StateSent || p.Len() != 1 {
		t.Fatalf("record %+v, %v; %d pushes sent", m, err, p.Len())
	}
	if got := p.Sent()[0].Content.(*pushchannel.Message); got.Title != "Acme" || got.Body != "Shipped" || p.Sent()[0].To != token {
		t.Fatalf("sent %+v to %q", got, p.Sent()[0].To)
	}
}
