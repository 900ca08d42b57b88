package wants_test

import (
	"context"
	"testing"

	"github.com/notifykit/notify/internal/wants"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/store"
)

// Record writes the choices in order and then the locale; a category
// removed after the caller checked it stops the writes there, answered
// as removed, the choices before it standing and the locale not written;
// Read answers what was written.
func TestRecordAndRead(t *testing.T) {
	ctx := context.Background()
	prefs := memstore.NewPreferences()
	for _, name := range []string{"marketing", "news", "order"} {
		if _, err := prefs.PutCategory(ctx, store.Category{Account: "acme", Name: name, OptIn: name == "news"}); err != nil {
			t.Fatal(err)
		}
	}
	const to = "+919876543210"
	hi := "hi-IN"
	removed, err := wants.Record(ctx, prefs, "acme", "sms", to, []wants.Choice{{"marketing", false}, {"news", true}}, &hi)
	if removed != "" || err != nil {
		t.Fatalf("Record = %q, %v", removed, err)
	}
	got, tag, err := wants.Read(ctx, prefs, "acme", "sms", to, nil)
	if err != nil || tag != "hi-IN" || len(got) != 3 || got[0].Allowed || !got[0].Chosen || !got[1].Allowed || got[2].Chosen {
		t.Fatalf("Read = %+v, %q, %v; want marketing declined, news allowed, order unchosen, hi-IN", got, tag, err)
	}

	// order is removed after the caller's check.
	if err := prefs.RemoveCategory(ctx, "acme", "order"); err != nil {
		t.Fatal(err)
	}
	forget := ""
	removed, err = wants.Record(ctx, prefs, "acme", "sms", to, []wants.Choice{{"marketing", true}, {"order", false}, {"news", false}}, &forget)
	if removed != "order" || err != nil {
		t.Fatalf("Record with a removed category = %q, %v; want order named", removed, err)
	}
	got, tag, err = wants.Read(ctx, prefs, "acme", "sms", to, nil)
	if err != nil || tag != "hi-IN" || len(got) != 2 || !got[0].Allowed || !got[1].Allowed {
		t.Fatalf("Read after the stop = %+v, %q, %v; want marketing allowed (written before), news as it was, the locale kept", got, tag, err)
	}
}
