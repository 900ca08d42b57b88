package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/notifykit/notify/channel/push/pushstore"
)

// A forgotten device leaves both indexes, and a recipient without
// devices leaves the registry: memory follows the devices kept.
func TestPushDevicesForget(t *testing.T) {
	ctx := context.Background()
	s := NewPushDevices()
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	const n = 5 * pushstore.MaxDevices
	for i := range n {
		d := pushstore.Device{Recipient: "ann", To: fmt.Sprintf("token-%03d", i), RegisteredAt: at.Add(time.Duration(i) * time.Second)}
		if err := s.RegisterDevice(ctx, "acme", d); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, owners, recipients int) {
		t.Helper()
		s.mu.RLock()
		defer s.mu.RUnlock()
		if len(s.owners) != owners || len(s.recipients) != recipients {
			t.Fatalf("%s: %d devices in %d lists, want %d in %d", what, len(s.owners), len(s.recipients), owners, recipients)
		}
		kept := 0
		for k, l := range s.recipients {
			kept += len(l)
			for _, d := range l {
				if s.owners[deviceKey{k.account, d.To}] != k.name {
					t.Fatalf("%s: %s of %s is not indexed as its", what, d.To, k.name)
				}
			}
		}
		if kept != owners {
			t.Fatalf("%s: %d devices listed, %d indexed", what, kept, owners)
		}
	}
	check("after registering "+fmt.Sprint(n), pushstore.MaxDevices, 1)

	// Moving every device to bob drops ann.
	l, _ := s.Devices(ctx, "acme", []string{"ann"})
	for _, d := range l {
		d.Recipient = "bob"
		if err := s.RegisterDevice(ctx, "acme", d); err != nil {
			t.Fatal(err)
		}
	}
	check("after moving all to bob", pushstore.MaxDevices, 1)
	for _, d := range l {
		if err := s.UnregisterDevice(ctx, "acme", d.To); err != nil {
			t.Fatal(err)
		}
	}
	check("after unregistering all", 0, 0)
}
