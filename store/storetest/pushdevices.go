package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/channel/push/pushstore"
	"github.com/notifykit/notify/store"
)

// PushDevicesHarness connects RunPushDevices to one pushstore.Devices.
type PushDevicesHarness struct {
	// New returns a store, releasing it with t.Cleanup. Required. It may
	// hand every subtest the same database: the suite's accounts are
	// random.
	New func(t *testing.T) pushstore.Devices
}

// RunPushDevices checks a pushstore.Devices, the push channel's device
// registry:
//
//   - RegisterDevice keeps a device that Devices answers with every
//     field: To, P256dh and Auth exactly as given (a Web Push
//     subscription's keys, none for an FCM token; a To of 4096 bytes, the
//     longest token the push channel accepts), Recipient as asked, and
//     RegisteredAt in UTC truncated to the microsecond though given in
//     another zone with nanoseconds;
//   - Devices answers the recipient's devices the most recently
//     registered first, devices registered at the same microsecond in
//     byte order of To, whatever the order they were registered in;
//   - registering a To the account has again replaces its device: its new
//     keys and time, and, registered for another recipient, it leaves the
//     first recipient's list for the second's;
//   - the (MaxDevices+1)th device of a recipient forgets the one
//     registered longest ago (the device just registered, when it is
//     that one), and only it: other recipients of the account, and the
//     same recipient of another account, keep theirs; registering again a
//     To the recipient has forgets nothing;
//   - accounts never meet: the same To registered by two accounts is two
//     devices, each account sees only its own, and unregistering one
//     leaves the other; recipients are compared byte for byte, so
//     another spelling is another recipient;
//   - UnregisterDevice forgets the account's device, whichever recipient
//     it is registered for; a second call, one of a To never registered,
//     or one of another account's device is ErrNotFound;
//   - an empty account, recipient or To, a recipient longer than
//     MaxRecipientLen bytes (not characters) or a zero RegisteredAt is
//     ErrInvalid (errors.Is) and changes nothing; a recipient of
//     MaxRecipientLen bytes is kept;
//   - a recipient without devices, or an account without any, is an
//     empty slice and a nil error, and so is an empty list of names;
//   - Devices of several names answers their devices in one list,
//     grouped by recipient in the order the names were given (whatever
//     the order of registration or of the names' bytes), each
//     recipient's in Devices' order, Recipient set to each device's;
//     a name given twice is answered once, at its first place; names
//     without devices add none, and another account's devices, of the
//     same names or of others, never appear;
//   - Devices takes 10,000 names (notify.MaxBulkRecipients) in one call,
//     and more, even the same name 10,001 times, is ErrInvalid;
//   - of Goroutines goroutines registering two devices each for one
//     recipient and one for another, all at once, the devices left are
//     each recipient's MaxDevices most recently registered, in order;
//   - changing what RegisterDevice was given, or what Devices answered
//     (its devices, its order, appending to it), changes nothing the
//     store holds.
//
// The suite passes every time in and never reads the clock; a store
// keeps the times it is given.
func RunPushDevices(t *testing.T, h PushDevicesHarness) {
	t.Helper()
	needs(t, h.New != nil, "PushDevicesHarness needs New")
	runAll(t, []subtest{
		{"RoundTrip", func(t *testing.T) { testPushRoundTrip(t, h) }},
		{"Order", func(t *testing.T) { testPushOrder(t, h) }},
		{"Replace", func(t *testing.T) { testPushReplace(t, h) }},
		{"Evict", func(t *testing.T) { testPushEvict(t, h) }},
		{"Apart", func(t *testing.T) { testPushApart(t, h) }},
		{"Unregister", func(t *testing.T) { testPushUnregister(t, h) }},
		{"Invalid", func(t *testing.T) { testPushInvalid(t, h) }},
		{"None", func(t *testing.T) { testPushNone(t, h) }},
		{"ManyNames", func(t *testing.T) { testPushManyNames(t, h) }},
		{"NamesBound", func(t *testing.T) { testPushNamesBound(t, h) }},
		{"Concurrent", func(t *testing.T) { testPushConcurrent(t, h) }},
		{"CallersCannotChangeStore", func(t *testing.T) { testPushCopies(t, h) }},
	})
}

// registeredAt is when the suite's devices are registered: in a zone
// other than UTC and finer than a microsecond, so that a store must
// convert and truncate it.
var registeredAt = time.Date(2026, 12, 7, 9, 30, 15, 123456789, time.FixedZone("IST", 5*3600+1800))

// pushKeys are a Web Push subscription's keys as a browser gives them
// (base64url, unpadded): a P-256 point and 16 bytes of auth secret.
const (
	pushP256dh = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM"
	pushAuth   = "tBHItJI5svbpez7KI4CCXg"
)

// newEndpoint returns a Web Push endpoint of its own, as push.Recipient
// makes them canonical.
func newEndpoint() string {
	return "https://fcm.googleapis.com/fcm/send/" + rand.Text() + ":" + rand.Text()
}

// newToken returns an FCM registration token of its own, n bytes long
// (at least 32).
func newToken(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(rand.Text())
		b.WriteString(":APA91b-")
	}
	return b.String()[:n]
}

// subscription returns a Web Push device of recipient registered at at.
func subscription(recipient string, at time.Time) pushstore.Device {
	return pushstore.Device{Recipient: recipient, To: newEndpoint(), P256dh: pushP256dh, Auth: pushAuth, RegisteredAt: at}
}

// token returns an FCM device of recipient registered at at.
func token(recipient string, at time.Time) pushstore.Device {
	return pushstore.Device{Recipient: recipient, To: newToken(163), RegisteredAt: at}
}

// kept is d as a store keeps it: its time in UTC to the microsecond.
func kept(d pushstore.Device) pushstore.Device {
	d.RegisteredAt = d.RegisteredAt.Truncate(time.Microsecond).UTC()
	return d
}

// pushOrder sorts devices as Devices answers them: the most recently
// registered first, ties by To.
func pushOrder(l []pushstore.Device) {
	slices.SortFunc(l, func(a, b pushstore.Device) int {
		if c := b.RegisteredAt.Compare(a.RegisteredAt); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
}

func newPushDevices(t *testing.T, h PushDevicesHarness) pushstore.Devices {
	t.Helper()
	s := h.New(t)
	if s == nil {
		t.Fatal("PushDevicesHarness.New returned nil")
	}
	return s
}

// register keeps d for account or fails t.
func register(t *testing.T, s pushstore.Devices, account string, d pushstore.Device) {
	t.Helper()
	if err := s.RegisterDevice(context.Background(), account, d); err != nil {
		t.Fatalf("RegisterDevice(%s, %s for %q at %s): %v", account, short(d.To), d.Recipient, vat(d.RegisteredAt), err)
	}
}

// short shows a To without its length getting in the way.
func short(to string) string {
	if len(to) > 60 {
		return fmt.Sprintf("%q...(%d bytes)", to[:48], len(to))
	}
	return fmt.Sprintf("%q", to)
}

// devicesOf returns Devices of account's recipient or fails t; a nil
// slice fails it too.
func devicesOf(t *testing.T, s pushstore.Devices, account, recipient string) []pushstore.Device {
	t.Helper()
	return devicesOfAll(t, s, account, []string{recipient})
}

// devicesOfAll returns Devices of account's recipients or fails t; a
// nil slice fails it too.
func devicesOfAll(t *testing.T, s pushstore.Devices, account string, recipients []string) []pushstore.Device {
	t.Helper()
	got, err := s.Devices(context.Background(), account, recipients)
	if err != nil {
		t.Fatalf("Devices(%s, %s): %v", account, listNames(recipients), err)
	}
	if got == nil {
		t.Fatalf("Devices(%s, %s) answered a nil slice, want an empty one", account, listNames(recipients))
	}
	return got
}

// listNames shows the names of a Devices call, a long list shortened.
func listNames(names []string) string {
	if len(names) > 8 {
		return fmt.Sprintf("%q...(%d names)", names[:8], len(names))
	}
	return fmt.Sprintf("%q", names)
}

// wantDevices fails t unless Devices of account's recipient answers want
// (devices as given; kept makes them as stored), in that order.
func wantDevices(t *testing.T, s pushstore.Devices, account, recipient string, want []pushstore.Device, what string) {
	t.Helper()
	got := devicesOf(t, s, account, recipient)
	if d := diffDevices(got, want); d != "" {
		t.Fatalf("%s: Devices(%q): %s", what, recipient, d)
	}
}

// diffDevices describes how got differs from want, whose devices are
// taken as a store keeps them, or returns "".
func diffDevices(got, want []pushstore.Device) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d devices %s, want %d %s", len(got), listDevices(got), len(want), listDevices(want))
	}
	var d diffs
	for i := range want {
		g, w := got[i], kept(want[i])
		if g.To != w.To {
			d.add("[%d].To = %s, want %s (got %s, want %s)", i, short(g.To), short(w.To), listDevices(got), listDevices(want))
			continue
		}
		d.quoted(fmt.Sprintf("[%d].Recipient", i), g.Recipient, w.Recipient)
		d.quoted(fmt.Sprintf("[%d].P256dh", i), g.P256dh, w.P256dh)
		d.quoted(fmt.Sprintf("[%d].Auth", i), g.Auth, w.Auth)
		if !g.RegisteredAt.Equal(w.RegisteredAt) || g.RegisteredAt.Location() != time.UTC {
			d.add("[%d].RegisteredAt = %s (%v), want %s in UTC", i, vat(g.RegisteredAt), g.RegisteredAt.Location(), vat(w.RegisteredAt))
		}
	}
	return d.String()
}

// listDevices shows devices by To and time, for a failure.
func listDevices(l []pushstore.Device) string {
	parts := make([]string, len(l))
	for i, d := range l {
		to := d.To
		if len(to) > 16 {
			to = "…" + to[len(to)-12:]
		}
		parts[i] = to + "@" + d.RegisteredAt.UTC().Format("15:04:05.000000")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// testPushRoundTrip checks that a subscription and a token are kept with
// every field, the time in UTC to the microsecond, a 4096-byte To too.
func testPushRoundTrip(t *testing.T, h PushDevicesHarness) {
	s, acct := newPushDevices(t, h), newName("push")
	sub := subscription("user-42", registeredAt)
	tok := token("user-42", registeredAt.Add(-time.Minute))
	long := token("user-42", registeredAt.Add(-time.Hour))
	long.To = newToken(4096)
	for _, d := range []pushstore.Device{sub, tok, long} {
		register(t, s, acct, d)
	}
	wantDevices(t, s, acct, "user-42", []pushstore.Device{sub, tok, long}, "after RegisterDevice")
}

// testPushOrder checks that Devices answers the newest first, ties by
// To in byte order, whatever the order of registration.
func testPushOrder(t *testing.T, h PushDevicesHarness) {
	s, acct := newPushDevices(t, h), newName("push")
	at := registeredAt.Truncate(time.Second)
	var all []pushstore.Device
	// Registered out of order; three share a microsecond (their
	// nanoseconds differ, which a store does not keep), two of them with
	// To's that differ in case and in a byte past 0x7f.
	for i, off := range []time.Duration{3, 1, 4, 0, 5, 2} {
		d := subscription("ann", at.Add(off*time.Second))
		if i < 3 {
			d.RegisteredAt = at.Add(10*time.Second + time.Duration(i)*100*time.Nanosecond)
			d.To = []string{"https://push.example/b", "https://push.example/B", "https://push.example/é"}[i] + "/" + acct
		}
		register(t, s, acct, d)
		all = append(all, kept(d))
	}
	pushOrder(all)
	wantDevices(t, s, acct, "ann", all, "devices registered out of order")
}

// testPushReplace checks that registering a To again replaces its
// device, and that registering it for another recipient moves it there.
func testPushReplace(t *testing.T, h PushDevicesHarness) {
	s, acct := newPushDevices(t, h), newName("push")
	at := registeredAt
	first := subscription("ann", at)
	other := subscription("ann", at.Add(time.Minute))
	register(t, s, acct, first)
	register(t, s, acct, other)

	// The browser renewed its keys.
	renewed := first
	renewed.P256dh, renewed.Auth = "BOr"+pushP256dh[3:], "renewed-auth-secret"
	renewed.RegisteredAt = at.Add(2 * time.Minute)
	register(t, s, acct, renewed)
	wantDevices(t, s, acct, "ann", []pushstore.Device{renewed, other}, "after the device's keys were renewed")

	// The device passed to another recipient, as an FCM token now
	// without keys: it leaves ann's list.
	moved := renewed
	moved.Recipient, moved.P256dh, moved.Auth = "bob", "", ""
	moved.RegisteredAt = at.Add(-time.Hour) // earlier than ever: the last registration wins, not the latest time
	register(t, s, acct, moved)
	wantDevices(t, s, acct, "ann", []pushstore.Device{other}, "after ann's device was registered for bob")
	wantDevices(t, s, acct, "bob", []pushstore.Device{moved}, "after ann's device was registered for bob")
}

// testPushEvict checks that a recipient keeps its MaxDevices most
// recently registered devices and that others keep theirs.
func testPushEvict(t *testing.T, h PushDevicesHarness) {
	s, acct, elsewhere := newPushDevices(t, h), newName("push"), newName("push")
	at := registeredAt.Truncate(time.Second)
	// Another recipient of the account, and the same recipient of another
	// account, registered before all the rest: the oldest devices of all.
	carl := token("carl", at.Add(-time.Hour))
	register(t, s, acct, carl)
	annElsewhere := token("ann", at.Add(-time.Hour))
	register(t, s, elsewhere, annElsewhere)

	var ann []pushstore.Device // newest first
	for i := range pushstore.MaxDevices {
		d := token("ann", at.Add(time.Duration(i)*time.Second))
		register(t, s, acct, d)
		ann = slices.Insert(ann, 0, d)
	}
	wantDevices(t, s, acct, "ann", ann, fmt.Sprintf("%d devices", pushstore.MaxDevices))

	// Registering one ann has again forgets nothing.
	again := ann[pushstore.MaxDevices/2]
	again.RegisteredAt = at.Add(-time.Minute) // now the oldest
	register(t, s, acct, again)
	ann = slices.Delete(ann, pushstore.MaxDevices/2, pushstore.MaxDevices/2+1)
	ann = append(ann, again)
	wantDevices(t, s, acct, "ann", ann, "a device registered again")

	// One more forgets the oldest: the one just registered again.
	extra := subscription("ann", at.Add(time.Hour))
	register(t, s, acct, extra)
	ann = slices.Insert(ann[:pushstore.MaxDevices-1], 0, extra)
	wantDevices(t, s, acct, "ann", ann, fmt.Sprintf("the %dth device", pushstore.MaxDevices+1))

	// One registered longer ago than all of ann's is forgotten at once.
	stale := token("ann", at.Add(-2*time.Minute))
	register(t, s, acct, stale)
	wantDevices(t, s, acct, "ann", ann, "a device registered longer ago than all kept")
	wantDevices(t, s, acct, "carl", []pushstore.Device{carl}, "another recipient of the account")
	wantDevices(t, s, elsewhere, "ann", []pushstore.Device{annElsewhere}, "the recipient in another account")
	// The forgotten devices are gone, not just hidden.
	for _, to := range []string{again.To, stale.To} {
		err := s.UnregisterDevice(context.Background(), acct, to)
		wantErr(t, "UnregisterDevice of a forgotten device", err, store.ErrNotFound)
	}
}

// testPushApart checks that accounts never see each other's devices and
// that recipients are compared byte for byte.
func testPushApart(t *testing.T, h PushDevicesHarness) {
	ctx := context.Background()
	s, a, b := newPushDevices(t, h), newName("push"), newName("push")
	da := subscription("ann@example.com", registeredAt)
	db := da
	db.P256dh, db.Auth, db.RegisteredAt = "", "", registeredAt.Add(time.Second)
	register(t, s, a, da)
	register(t, s, b, db)
	wantDevices(t, s, a, "ann@example.com", []pushstore.Device{da}, "account a")
	wantDevices(t, s, b, "ann@example.com", []pushstore.Device{db}, "account b, the same To")
	wantDevices(t, s, newName("push"), "ann@example.com", nil, "a third account")
	for _, spelling := range []string{"Ann@example.com", "ann@example.com ", "ann@example.co"} {
		wantDevices(t, s, a, spelling, nil, "another spelling")
	}
	if err := s.UnregisterDevice(ctx, b, db.To); err != nil {
		t.Fatalf("UnregisterDevice(b): %v", err)
	}
	wantDevices(t, s, a, "ann@example.com", []pushstore.Device{da}, "account a after b unregistered the same To")
	wantDevices(t, s, b, "ann@example.com", nil, "account b after it unregistered")
}

// testPushUnregister checks that UnregisterDevice forgets a device once,
// whichever recipient has it.
func testPushUnregister(t *testing.T, h PushDevicesHarness) {
	ctx := context.Background()
	s, acct := newPushDevices(t, h), newName("push")
	d1 := subscription("ann", registeredAt)
	d2 := token("ann", registeredAt.Add(time.Second))
	d3 := token("bob", registeredAt)
	for _, d := range []pushstore.Device{d1, d2, d3} {
		register(t, s, acct, d)
	}
	err := s.UnregisterDevice(ctx, newName("push"), d1.To)
	wantErr(t, "UnregisterDevice of another account's device", err, store.ErrNotFound)
	err = s.UnregisterDevice(ctx, acct, newEndpoint())
	wantErr(t, "UnregisterDevice of a To never registered", err, store.ErrNotFound)
	wantDevices(t, s, acct, "ann", []pushstore.Device{d2, d1}, "after refused unregistrations")

	if err := s.UnregisterDevice(ctx, acct, d1.To); err != nil {
		t.Fatalf("UnregisterDevice: %v", err)
	}
	wantDevices(t, s, acct, "ann", []pushstore.Device{d2}, "after UnregisterDevice")
	err = s.UnregisterDevice(ctx, acct, d1.To)
	wantErr(t, "a second UnregisterDevice", err, store.ErrNotFound)
	// The To alone names the device, whoever has it.
	if err := s.UnregisterDevice(ctx, acct, d3.To); err != nil {
		t.Fatalf("UnregisterDevice of bob's device: %v", err)
	}
	wantDevices(t, s, acct, "bob", nil, "after bob's only device was unregistered")
	wantDevices(t, s, acct, "ann", []pushstore.Device{d2}, "ann, after bob's device was unregistered")
	// Registered again after it was forgotten: a device like any other.
	register(t, s, acct, d1)
	wantDevices(t, s, acct, "ann", []pushstore.Device{d2, d1}, "registered again")
}

// testPushInvalid checks that RegisterDevice refuses what the contract
// refuses, and changes nothing doing it.
func testPushInvalid(t *testing.T, h PushDevicesHarness) {
	ctx := context.Background()
	s, acct := newPushDevices(t, h), newName("push")
	good := subscription("ann", registeredAt)
	register(t, s, acct, good)
	longest := strings.Repeat("é", pushstore.MaxRecipientLen/2) // MaxRecipientLen bytes, half as many characters
	for _, c := range []struct {
		name    string
		account string
		mod     func(d *pushstore.Device)
	}{
		{"an empty account", "", func(d *pushstore.Device) {}},
		{"an empty recipient", acct, func(d *pushstore.Device) { d.Recipient = "" }},
		{"an empty To", acct, func(d *pushstore.Device) { d.To = "" }},
		{"a recipient one byte too long", acct, func(d *pushstore.Device) { d.Recipient = longest + "x" }},
		{"a recipient of fewer characters but too many bytes", acct, func(d *pushstore.Device) {
			d.Recipient = strings.Repeat("€", pushstore.MaxRecipientLen/3+1)
		}},
		{"a zero RegisteredAt", acct, func(d *pushstore.Device) { d.RegisteredAt = time.Time{} }},
	} {
		// Each would replace good (its To), or move it to another
		// recipient, were it kept.
		d := good
		d.Recipient, d.P256dh, d.Auth, d.RegisteredAt = "bob", "", "", registeredAt.Add(time.Hour)
		c.mod(&d)
		err := s.RegisterDevice(ctx, c.account, d)
		wantErr(t, "RegisterDevice with "+c.name, err, store.ErrInvalid)
		wantDevices(t, s, acct, "ann", []pushstore.Device{good}, "after RegisterDevice with "+c.name)
		if d.Recipient != "" {
			wantDevices(t, s, acct, d.Recipient, nil, "after RegisterDevice with "+c.name)
		}
	}
	// A recipient of MaxRecipientLen bytes is kept.
	edge := token(longest, registeredAt)
	register(t, s, acct, edge)
	wantDevices(t, s, acct, longest, []pushstore.Device{edge}, fmt.Sprintf("a recipient of %d bytes", pushstore.MaxRecipientLen))
}

// testPushNone checks that a recipient without devices, of an account
// with some or of one without any, is an empty slice and no error.
func testPushNone(t *testing.T, h PushDevicesHarness) {
	s, acct := newPushDevices(t, h), newName("push")
	wantDevices(t, s, acct, "ann", nil, "an account without devices")
	register(t, s, acct, token("ann", registeredAt))
	wantDevices(t, s, acct, "bob", nil, "a recipient without devices")
}

// testPushManyNames checks Devices of several names at once: grouped in
// the names' order, a repeated name once, names without devices and
// other accounts' devices left out.
func testPushManyNames(t *testing.T, h PushDevicesHarness) {
	s, acct, elsewhere := newPushDevices(t, h), newName("push"), newName("push")
	at := registeredAt.Truncate(time.Second)
	// Registered interleaved and out of every order the names are
	// asked in; ann's two share a microsecond.
	ann := []pushstore.Device{subscription("ann", at.Add(3*time.Second)), token("ann", at), token("ann", at)}
	ann[1].To, ann[2].To = "https://push.example/b/"+acct, "https://push.example/B/"+acct
	bob := []pushstore.Device{token("bob", at.Add(time.Hour)), subscription("bob", at.Add(-time.Hour))}
	carl := []pushstore.Device{token("carl", at.Add(time.Second))}
	for _, d := range []pushstore.Device{bob[1], ann[1], carl[0], ann[0], bob[0], ann[2]} {
		register(t, s, acct, d)
	}
	// Another account has devices of ann, and of erin, whom acct has
	// none of.
	register(t, s, elsewhere, token("ann", at.Add(2*time.Hour)))
	register(t, s, elsewhere, token("erin", at.Add(2*time.Hour)))
	pushOrder(ann)
	pushOrder(bob)

	for _, c := range []struct {
		names []string
		want  [][]pushstore.Device
	}{
		{[]string{"carl", "dave", "ann", "erin", "bob", "ann", "carl"}, [][]pushstore.Device{carl, ann, bob}},
		{[]string{"bob", "ann"}, [][]pushstore.Device{bob, ann}},
		{[]string{"dave", "bob", "bob", "erin"}, [][]pushstore.Device{bob}},
		{[]string{"Ann", "ann ", "dave", "erin"}, nil},
		{[]string{}, nil},
		{nil, nil},
	} {
		var want []pushstore.Device
		for _, l := range c.want {
			want = append(want, l...)
		}
		got := devicesOfAll(t, s, acct, c.names)
		if d := diffDevices(got, want); d != "" {
			t.Fatalf("Devices(%q): %s", c.names, d)
		}
	}
}

// testPushNamesBound checks that Devices takes 10,000 names in one call,
// and no more.
func testPushNamesBound(t *testing.T, h PushDevicesHarness) {
	const bound = pushstore.MaxLookup
	s, acct := newPushDevices(t, h), newName("push")
	d := token("ann", registeredAt)
	register(t, s, acct, d)
	names := make([]string, 0, bound+1)
	for i := range bound - 1 {
		names = append(names, fmt.Sprintf("user-%05d", i))
	}
	names = append(names, "ann")
	got := devicesOfAll(t, s, acct, names)
	if diff := diffDevices(got, []pushstore.Device{d}); diff != "" {
		t.Fatalf("Devices of %d names, ann last: %s", bound, diff)
	}
	names = append(names, "bob")
	_, err := s.Devices(context.Background(), acct, names)
	wantErr(t, fmt.Sprintf("Devices of %d names", bound+1), err, store.ErrInvalid)
	_, err = s.Devices(context.Background(), acct, slices.Repeat([]string{"ann"}, bound+1))
	wantErr(t, fmt.Sprintf("Devices of one name given %d times", bound+1), err, store.ErrInvalid)
}

// testPushConcurrent checks that registrations racing for one recipient
// leave its MaxDevices newest devices, and never more.
func testPushConcurrent(t *testing.T, h PushDevicesHarness) {
	s, acct := newPushDevices(t, h), newName("push")
	at := registeredAt.Truncate(time.Second)
	// Each goroutine registers two of ann's devices and one of bob's,
	// their times spread so that the newest are not the last started.
	var mu sync.Mutex
	var ann, bob []pushstore.Device
	together(t, Goroutines, 3, func(g, i int) error {
		n := (g*3 + i) * 47 % (3 * Goroutines) // distinct for each (g, i): 47 is prime to 3 * 64
		d := token("ann", at.Add(time.Duration(n)*time.Millisecond))
		if i == 2 {
			d.Recipient = "bob"
		}
		if err := s.RegisterDevice(context.Background(), acct, d); err != nil {
			return fmt.Errorf("RegisterDevice(%d, %d): %w", g, i, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if i == 2 {
			bob = append(bob, d)
		} else {
			ann = append(ann, d)
		}
		return nil
	})
	for _, r := range []struct {
		name string
		all  []pushstore.Device
	}{{"ann", ann}, {"bob", bob}} {
		pushOrder(r.all)
		got := devicesOf(t, s, acct, r.name)
		if len(got) > pushstore.MaxDevices {
			t.Fatalf("%s has %d devices after %d concurrent registrations, want at most %d", r.name, len(got), len(r.all), pushstore.MaxDevices)
		}
		if d := diffDevices(got, r.all[:pushstore.MaxDevices]); d != "" {
			t.Fatalf("%s after %d concurrent registrations, want the %d newest: %s", r.name, len(r.all), pushstore.MaxDevices, d)
		}
	}
}

// testPushCopies checks that neither the caller of RegisterDevice nor a
// reader of Devices can change what the store holds.
func testPushCopies(t *testing.T, h PushDevicesHarness) {
	s, acct := newPushDevices(t, h), newName("push")
	d1 := subscription("ann", registeredAt)
	d2 := token("ann", registeredAt.Add(-time.Second))
	want := []pushstore.Device{d1, d2}
	mine := slices.Clone(want)
	for i := range mine {
		register(t, s, acct, mine[i])
		mine[i].To, mine[i].P256dh, mine[i].RegisteredAt = "changed", "changed", time.Time{}
	}
	wantDevices(t, s, acct, "ann", want, "after the caller changed what it registered")

	got := devicesOf(t, s, acct, "ann")
	if len(got) == 2 {
		got[0].To, got[0].Auth, got[0].Recipient = "changed", "changed", "changed"
		got[1].RegisteredAt = got[1].RegisteredAt.Add(time.Hour)
		slices.Reverse(got)
		// Appending to the answer writes into its spare capacity.
		for i, full := 0, got[:cap(got)]; i < len(full); i++ {
			full[i] = pushstore.Device{To: "appended"}
		}
	}
	wantDevices(t, s, acct, "ann", want, "after a reader changed what Devices answered")
}
