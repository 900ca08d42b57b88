package push_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/store"
)

func newRegistry(t *testing.T) (*push.Registry, *memstore.PushDevices, *memstore.Suppressions) {
	t.Helper()
	devices, supp := memstore.NewPushDevices(), memstore.NewSuppressions()
	reg, err := push.NewRegistry(devices, supp)
	if err != nil {
		t.Fatal(err)
	}
	return reg, devices, supp
}

// TestRegistry: devices are checked by the channel's rules, kept in their
// canonical form, listed newest first and forgotten.
func TestRegistry(t *testing.T) {
	ctx := context.Background()
	reg, _, _ := newRegistry(t)
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	sub := subscription(t, "https://Push.Example.COM/s/1")
	d, err := reg.Register(ctx, "acme", "user-42", sub, "", at)
	if err != nil || d.To != "https://push.example.com/s/1" || d.P256dh != sub.Keys.P256dh || d.Recipient != "user-42" {
		t.Fatalf("register: %+v, %v", d, err)
	}
	if _, err := reg.Register(ctx, "acme", "user-42", nil, " "+token, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	ds, err := reg.Devices(ctx, "acme", "user-42")
	if err != nil || len(ds) != 2 || ds[0].To != token || ds[1].To != d.To {
		t.Fatalf("devices %+v, %v", ds, err)
	}
	for _, c := range []struct {
		recipient string
		sub       *push.Subscription
		token     string
		want      string
	}{
		{"", nil, token, "recipient"},
		{"user-42", nil, "", "subscription"},
		{"user-42", sub, token, "token"},
		{"user-42", &push.Subscription{Endpoint: "http://x"}, "", "subscription.endpoint,subscription.keys.p256dh,subscription.keys.auth"},
		{"user\n42", nil, token, "recipient"},
	} {
		if _, err := reg.Register(ctx, "acme", c.recipient, c.sub, c.token, at); fields(err) != c.want {
			t.Errorf("register %q: %v; want fields %s", c.recipient, err, c.want)
		}
	}
	if err := reg.Unregister(ctx, "acme", "HTTPS://push.example.com/s/1"); err != nil {
		t.Fatal(err)
	}
	if err := reg.Unregister(ctx, "acme", "https://push.example.com/s/1"); notify.CodeOf(err) != notify.CodeNotFound {
		t.Fatalf("a second unregister: %v", err)
	}
}

// TestBulkFor: a bulk push to recipients reaches each of their devices
// once, leaves out and forgets a device the push service declared gone,
// and names a recipient nobody can reach.
func TestBulkFor(t *testing.T) {
	ctx := context.Background()
	reg, devices, supp := newRegistry(t)
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	a, b := subscription(t, "https://push.example.com/s/a"), subscription(t, "https://push.example.com/s/b")
	for _, r := range []struct {
		who string
		sub *push.Subscription
		tok string
	}{{"ann", a, ""}, {"ann", nil, token}, {"bob", b, ""}} {
		if _, err := reg.Register(ctx, "acme", r.who, r.sub, r.tok, at); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}
	devs, err := reg.BulkFor(ctx, "acme", []string{"ann", "bob"})
	if err != nil || len(devs.Subscriptions) != 2 || len(devs.Tokens) != 1 || len(devs.Unreachable) != 0 {
		t.Fatalf("bulk: %+v, %v", devs, err)
	}
	bulk := &push.BulkRequest{Message: push.Request{Account: "acme", Body: "Sale"}, Tokens: []string{"x" + token}, Registered: devs}
	reqs, err := bulk.Recipients()
	if err != nil || len(reqs) != 4 || reqs[0].(*push.Request).Token != "x"+token || reqs[3].(*push.Request).Token != token {
		t.Fatalf("recipients %d, %v", len(reqs), err)
	}
	// The fingerprint is the names', whatever their devices.
	again := &push.BulkRequest{Message: bulk.Message, Tokens: bulk.Tokens, Registered: &push.Registered{Names: []string{"ann", "bob"}}}
	if fp(bulk) != fp(again) {
		t.Fatal("a bulk push's fingerprint depends on the registered devices")
	}

	// Bob's only subscription is gone: he is named, and it is forgotten.
	if _, err := supp.AddSuppression(ctx, store.Suppression{Account: "acme", Kind: push.Kind, To: "https://push.example.com/s/b",
		Reason: store.SuppressHardBounce, At: at}); err != nil {
		t.Fatal(err)
	}
	devs, err = reg.BulkFor(ctx, "acme", []string{"ann", "bob"})
	if err != nil || len(devs.Unreachable) != 1 || devs.Unreachable[0] != 1 {
		t.Fatalf("bob unreachable: %+v, %v", devs, err)
	}
	if _, err := (&push.BulkRequest{Message: push.Request{Account: "acme", Body: "Sale"}, Registered: devs}).Recipients(); fields(err) != "recipients.1" {
		t.Fatalf("a bulk push to bob: %v", err)
	}
	if ds, _ := devices.Devices(ctx, "acme", []string{"bob"}); len(ds) != 0 {
		t.Fatalf("bob's gone subscription is still registered: %+v", ds)
	}
	// An unsubscribed (not gone) device stays: the send decides by class.
	if _, err := supp.AddSuppression(ctx, store.Suppression{Account: "acme", Kind: push.Kind, To: token,
		Reason: store.SuppressUnsubscribed, At: at}); err != nil {
		t.Fatal(err)
	}
	devs, err = reg.BulkFor(ctx, "acme", []string{"ann"})
	if err != nil || len(devs.Tokens) != 1 {
		t.Fatalf("ann: %+v, %v", devs, err)
	}
	if _, err := reg.BulkFor(ctx, "acme", nil); fields(err) != "recipients" {
		t.Fatalf("no recipients: %v", err)
	}
}

// countingDevices is a registry store that counts its reads.
type countingDevices struct {
	*memstore.PushDevices
	reads int
}

func (c *countingDevices) Devices(ctx context.Context, account string, recipients []string) ([]pushstore.Device, error) {
	c.reads++
	return c.PushDevices.Devices(ctx, account, recipients)
}

// TestBulkForOneRead: the devices of every recipient of a bulk push are
// one read of the store, split by recipient in the names' order; a name
// given twice is reachable (or not) at both places, its devices sent to
// once.
func TestBulkForOneRead(t *testing.T) {
	ctx := context.Background()
	devices := &countingDevices{PushDevices: memstore.NewPushDevices()}
	reg, err := push.NewRegistry(devices, memstore.NewSuppressions())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	a, b := subscription(t, "https://push.example.com/s/a"), subscription(t, "https://push.example.com/s/b")
	for _, r := range []struct {
		who string
		sub *push.Subscription
		tok string
	}{{"ann", a, ""}, {"bob", b, ""}, {"ann", nil, token}} {
		if _, err := reg.Register(ctx, "acme", r.who, r.sub, r.tok, at); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}
	devs, err := reg.BulkFor(ctx, "acme", []string{"bob", "nobody", "ann", "bob", "nobody"})
	if err != nil || devices.reads != 1 {
		t.Fatalf("bulk: %+v, %v; %d reads, want 1", devs, err, devices.reads)
	}
	var subs []string
	for _, s := range devs.Subscriptions {
		subs = append(subs, s.Endpoint)
	}
	if len(subs) != 2 || subs[0] != b.Endpoint || subs[1] != a.Endpoint || len(devs.Tokens) != 1 || devs.Tokens[0] != token {
		t.Fatalf("subscriptions %v and tokens %v; want bob's, then ann's, and ann's token", subs, devs.Tokens)
	}
	if len(devs.Unreachable) != 2 || devs.Unreachable[0] != 1 || devs.Unreachable[1] != 4 {
		t.Fatalf("unreachable %v, want [1 4]", devs.Unreachable)
	}
}

// failingDevices is a registry store that is down.
type failingDevices struct{ store pushstore.Devices }

func (f failingDevices) RegisterDevice(ctx context.Context, account string, d pushstore.Device) error {
	return f.store.RegisterDevice(ctx, account, d)
}

func (f failingDevices) UnregisterDevice(ctx context.Context, account, to string) error {
	return f.store.UnregisterDevice(ctx, account, to)
}

func (failingDevices) Devices(context.Context, string, []string) ([]pushstore.Device, error) {
	return nil, errors.New("connection refused")
}

// TestRegistryStoreDown: a store failure is unavailable, its cause kept.
func TestRegistryStoreDown(t *testing.T) {
	reg, err := push.NewRegistry(failingDevices{memstore.NewPushDevices()}, memstore.NewSuppressions())
	if err != nil {
		t.Fatal(err)
	}
	_, err = reg.BulkFor(context.Background(), "acme", []string{"ann"})
	if notify.CodeOf(err) != notify.CodeUnavailable || !notify.IsRetryable(err) {
		t.Fatalf("%v", err)
	}
	if _, err := push.NewRegistry(nil, nil); err == nil {
		t.Fatal("NewRegistry without stores")
	}
}
