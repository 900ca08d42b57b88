package storetest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/notifykit/notify/record"

	"github.com/notifykit/notify/store"
)

// SuppressionsHarness connects RunSuppressions to one store.Suppressions.
type SuppressionsHarness struct {
	// New returns a store, releasing it with t.Cleanup. Required. It may
	// hand every subtest the same database: the suite's accounts are
	// random.
	New func(t *testing.T) store.Suppressions
}

// RunSuppressions checks a store.Suppressions:
//
//   - AddSuppression keeps an entry that LookupSuppression answers with
//     every field, the recipient as given and At in UTC to the
//     microsecond; recipients arrive in their channel's canonical form
//     (notify.Channel.Recipient) and are compared byte for byte, so
//     another spelling is another recipient, and one with a space or a
//     control character is ErrInvalid;
//   - a second add with the same or a weaker reason changes nothing and
//     answers the entry kept; a stronger one (hard_bounce over the rest)
//     replaces reason and time;
//   - RemoveSuppression takes the entry off; a second removal, or one of
//     a recipient never added, is ErrNotFound;
//   - accounts and channels never meet: an entry of one is not found by
//     another account, or by the same recipient on another channel;
//   - an empty account, an unknown channel or reason, a bad recipient or
//     a zero time is ErrInvalid and keeps nothing; a query with a bad
//     channel or limit is ErrInvalid;
//   - ListSuppressions pages through the account's entries in order of
//     channel then recipient, with a channel filter, a default and a
//     maximum page size, and pages that neither skip nor repeat;
//   - concurrent adds of one recipient with every reason leave one entry,
//     hard_bounce;
//   - when the store implements store.Suppressions, LookupSuppressions
//     answers, in the recipients' order, what LookupSuppression answers
//     for each (none for another account, channel or spelling, none for
//     a recipient the rules refuse), and ErrInvalid for an empty
//     account or a bad channel.
func RunSuppressions(t *testing.T, h SuppressionsHarness) {
	needs(t, h.New != nil, "SuppressionsHarness needs New")
	runAll(t, []subtest{
		{"AddLookup", func(t *testing.T) { testSuppressionsAddLookup(t, h) }},
		{"Strongest", func(t *testing.T) { testSuppressionsStrongest(t, h) }},
		{"Remove", func(t *testing.T) { testSuppressionsRemove(t, h) }},
		{"Invalid", func(t *testing.T) { testSuppressionsInvalid(t, h) }},
		{"LookupMany", func(t *testing.T) { testSuppressionsLookupMany(t, h) }},
		{"AnyChannel", func(t *testing.T) { testSuppressionsAnyChannel(t, h) }},
		{"List", func(t *testing.T) { testSuppressionsList(t, h) }},
		{"DefaultPage", func(t *testing.T) { testSuppressionsDefaultPage(t, h) }},
		{"Concurrent", func(t *testing.T) { testSuppressionsConcurrent(t, h) }},
	})
}

// suppressedAt is when the suites' entries are suppressed: in a zone
// other than UTC and finer than a microsecond, so that a store must
// convert and truncate it.
var suppressedAt = time.Date(2026, 11, 27, 1, 2, 3, 456789123, time.FixedZone("IST", 5*3600+1800))

// testSuppressionsAddLookup checks that an entry added is kept with every
// field, its recipient as given and its time in UTC to the microsecond,
// that the recipient finds it, and that another channel, account,
// recipient or spelling does not: the callers give each recipient in its
// channel's canonical form, and the store compares forms byte for byte.
func testSuppressionsAddLookup(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	s, acct := h.New(t), randomAccount()
	got, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "email", To: "ann@example.com", Reason: store.SuppressUnsubscribed, At: at})
	want := store.Suppression{Account: acct, Kind: "email", To: "ann@example.com", Reason: store.SuppressUnsubscribed, At: at.UTC().Truncate(time.Microsecond)}
	if err != nil || !sameSuppression(got, want) {
		t.Fatalf("AddSuppression = %+v, %v; want %+v", got, err, want)
	}
	e, ok, err := s.LookupSuppression(ctx, acct, "email", "ann@example.com")
	if err != nil || !ok || !sameSuppression(e, want) || e.At.Location() != time.UTC {
		t.Errorf("LookupSuppression = %+v, %v, %v; want %+v in UTC", e, ok, err, want)
	}
	if e, ok, err := s.LookupSuppression(ctx, acct, "email", "Ann@Example.com"); err != nil || ok {
		t.Errorf("LookupSuppression of another spelling = %+v, %v, %v; want none: forms are compared byte for byte", e, ok, err)
	}
	if _, _, err := s.LookupSuppression(ctx, acct, "email", " ann@example.com"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("LookupSuppression of a recipient with a space = %v; want ErrInvalid", err)
	}
	if _, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "sms", To: "+919876543210", Reason: store.SuppressManual, At: at}); err != nil {
		t.Fatal(err)
	}
	e, ok, err = s.LookupSuppression(ctx, acct, "sms", "+919876543210")
	if err != nil || !ok || e.To != "+919876543210" || e.Reason != store.SuppressManual {
		t.Errorf("LookupSuppression(sms) = %+v, %v, %v", e, ok, err)
	}
	// Other channel, other account, other recipient: nothing.
	for _, c := range []struct {
		acct string
		kind record.Kind
		to   string
	}{{acct, "chat", "+919876543210"}, {randomAccount(), "email", "ann@example.com"}, {acct, "email", "bob@example.com"}} {
		if e, ok, err := s.LookupSuppression(ctx, c.acct, c.kind, c.to); err != nil || ok {
			t.Errorf("LookupSuppression(%v) = %+v, %v, %v; want none", c, e, ok, err)
		}
	}
}

// testSuppressionsStrongest checks that adding a recipient again keeps
// the entry unless the reason is stronger (a hard bounce over the rest),
// which replaces reason and time: a later, weaker reason must not lift a
// hard bounce.
func testSuppressionsStrongest(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	s, acct := h.New(t), randomAccount()
	add := func(r store.SuppressionReason, at time.Time) store.Suppression {
		t.Helper()
		e, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "email", To: "c@example.com", Reason: r, At: at})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	first := add(store.SuppressUnsubscribed, at)
	if e := add(store.SuppressUnsubscribed, at.Add(time.Hour)); !sameSuppression(e, first) {
		t.Errorf("same reason again = %+v; want the first %+v", e, first)
	}
	if e := add(store.SuppressManual, at.Add(time.Hour)); !sameSuppression(e, first) {
		t.Errorf("weaker reason = %+v; want the first %+v", e, first)
	}
	later := at.Add(2 * time.Hour).Truncate(time.Microsecond)
	if e := add(store.SuppressHardBounce, later); e.Reason != store.SuppressHardBounce || !e.At.Equal(later) {
		t.Errorf("hard bounce over unsubscribed = %+v; want hard_bounce at %v", e, later)
	}
	if e := add(store.SuppressComplaint, at.Add(3*time.Hour)); e.Reason != store.SuppressHardBounce || !e.At.Equal(later) {
		t.Errorf("complaint over hard bounce = %+v; want hard_bounce kept", e)
	}
	e, ok, err := s.LookupSuppression(ctx, acct, "email", "c@example.com")
	if err != nil || !ok || e.Reason != store.SuppressHardBounce || !e.At.Equal(later) {
		t.Errorf("LookupSuppression = %+v, %v, %v; want hard_bounce at %v", e, ok, err, later)
	}
}

// testSuppressionsRemove checks that RemoveSuppression takes the entry
// off, that removing it again, or
// another account's, is ErrNotFound, and that an entry added after a
// removal is a fresh one.
func testSuppressionsRemove(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	s, acct := h.New(t), randomAccount()
	if _, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "chat", To: "+14155550100", Reason: store.SuppressComplaint, At: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveSuppression(ctx, randomAccount(), "chat", "+14155550100"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RemoveSuppression of another account = %v; want ErrNotFound", err)
	}
	if err := s.RemoveSuppression(ctx, acct, "chat", "+1 415-555-0100"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("RemoveSuppression of a recipient with spaces = %v; want ErrInvalid", err)
	}
	if err := s.RemoveSuppression(ctx, acct, "chat", "+14155550100"); err != nil {
		t.Fatalf("RemoveSuppression = %v", err)
	}
	if _, ok, err := s.LookupSuppression(ctx, acct, "chat", "+14155550100"); err != nil || ok {
		t.Errorf("LookupSuppression after removal = %v, %v; want none", ok, err)
	}
	if err := s.RemoveSuppression(ctx, acct, "chat", "+14155550100"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second RemoveSuppression = %v; want ErrNotFound", err)
	}
	// Added again after removal: a fresh entry.
	e, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "chat", To: "+14155550100", Reason: store.SuppressManual, At: at})
	if err != nil || e.Reason != store.SuppressManual {
		t.Errorf("AddSuppression after removal = %+v, %v; want manual", e, err)
	}
}

// testSuppressionsInvalid checks that an entry with an empty account, an
// unknown channel or reason, a bad recipient or a zero time is ErrInvalid
// and keeps nothing, and that a lookup, removal or query the rules refuse
// is ErrInvalid rather than an empty answer.
func testSuppressionsInvalid(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	s, acct := h.New(t), randomAccount()
	good := store.Suppression{Account: acct, Kind: "email", To: "d@example.com", Reason: store.SuppressManual, At: at}
	for name, mod := range map[string]func(*store.Suppression){
		"account":    func(e *store.Suppression) { e.Account = "" },
		"channel":    func(e *store.Suppression) { e.Kind = "Fax!" },
		"no channel": func(e *store.Suppression) { e.Kind = "" },
		"reason":     func(e *store.Suppression) { e.Reason = "bored" },
		"to":         func(e *store.Suppression) { e.To = "d @example.com" },
		"control":    func(e *store.Suppression) { e.To = "d@example.com\x7f" },
		"length":     func(e *store.Suppression) { e.To = strings.Repeat("d", 250) + "@x.in" },
		"empty":      func(e *store.Suppression) { e.Kind = "sms"; e.To = "" },
		"at":         func(e *store.Suppression) { e.At = time.Time{} },
	} {
		e := good
		mod(&e)
		if _, err := s.AddSuppression(ctx, e); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AddSuppression with a bad %s = %v; want ErrInvalid", name, err)
		}
	}
	if l, err := s.ListSuppressions(ctx, acct, store.SuppressionQuery{}); err != nil || len(l) != 0 {
		t.Errorf("ListSuppressions after refused adds = %+v, %v; want none", l, err)
	}
	if _, _, err := s.LookupSuppression(ctx, acct, "Fax!", "x"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("LookupSuppression of channel Fax! = %v; want ErrInvalid", err)
	}
	if err := s.RemoveSuppression(ctx, "", "email", "d@example.com"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("RemoveSuppression without account = %v; want ErrInvalid", err)
	}
	for _, q := range []store.SuppressionQuery{{Kind: "Fax!"}, {Limit: -1}, {Limit: store.MaxSuppressionPage + 1}, {AfterKind: "Fax!"}} {
		if _, err := s.ListSuppressions(ctx, acct, q); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ListSuppressions(%+v) = %v; want ErrInvalid", q, err)
		}
	}
}

// testSuppressionsLookupMany checks that LookupSuppressions answers in
// the recipients' order what LookupSuppression answers for each (a bulk
// send must suppress exactly the recipients a single send would), and
// that an empty account or a bad channel is ErrInvalid.
func testSuppressionsLookupMany(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	s, acct := h.New(t), randomAccount()

	for _, e := range []store.Suppression{
		{Account: acct, Kind: "email", To: "ann@example.com", Reason: store.SuppressUnsubscribed, At: at},
		{Account: acct, Kind: "email", To: "cy@example.com", Reason: store.SuppressHardBounce, At: at},
		{Account: acct, Kind: "sms", To: "+919876543210", Reason: store.SuppressManual, At: at},
		{Account: randomAccount(), Kind: "email", To: "bob@example.com", Reason: store.SuppressManual, At: at},
	} {
		if _, err := s.AddSuppression(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	tos := []string{" cy@example.com", "bob@example.com", "a b", "ann@example.com", "cy@example.com", "+919876543210"}
	got, err := s.LookupSuppressions(ctx, acct, "email", tos)
	if err != nil || len(got) != len(tos) {
		t.Fatalf("LookupSuppressions = %+v, %v; want %d answers", got, err, len(tos))
	}
	for i, to := range tos {
		want, _, err := s.LookupSuppression(ctx, acct, "email", to)
		if errors.Is(err, store.ErrInvalid) {
			want = store.Suppression{}
		} else if err != nil {
			t.Fatal(err)
		}
		if !sameSuppression(got[i], want) {
			t.Errorf("LookupSuppressions[%d] (%q) = %+v; LookupSuppression answers %+v", i, to, got[i], want)
		}
	}
	if got[4].Reason != store.SuppressHardBounce || got[3].Reason != store.SuppressUnsubscribed || got[1].Reason != "" || got[0].Reason != "" {
		t.Errorf("LookupSuppressions = %+v", got)
	}
	if got, err := s.LookupSuppressions(ctx, acct, "sms", []string{"+919876543210", "ann@example.com"}); err != nil ||
		len(got) != 2 || got[0].Reason != store.SuppressManual || got[1].Reason != "" {
		t.Errorf("LookupSuppressions(sms) = %+v, %v", got, err)
	}
	if got, err := s.LookupSuppressions(ctx, acct, "email", nil); err != nil || len(got) != 0 {
		t.Errorf("LookupSuppressions of none = %+v, %v", got, err)
	}
	for _, c := range []struct {
		acct string
		kind record.Kind
	}{{"", "email"}, {acct, "Fax!"}} {
		if _, err := s.LookupSuppressions(ctx, c.acct, c.kind, tos); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("LookupSuppressions(%q, %q) = %v; want ErrInvalid", c.acct, c.kind, err)
		}
	}
}

// testSuppressionsAnyChannel checks that a channel of the host's own has
// a list too, its recipients kept as its channel writes them (their case
// included).
func testSuppressionsAnyChannel(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	// A channel of the host's own has a list too, its recipients
	// kept as its records name them.
	s, acct := h.New(t), randomAccount()
	e, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "push", To: "device:Ab12", Reason: store.SuppressUnsubscribed, At: at})
	if err != nil || e.To != "device:Ab12" {
		t.Fatalf("AddSuppression of a push recipient = %+v, %v", e, err)
	}
	if got, ok, err := s.LookupSuppression(ctx, acct, "push", "device:Ab12"); err != nil || !ok || got.Reason != store.SuppressUnsubscribed {
		t.Errorf("LookupSuppression = %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := s.LookupSuppression(ctx, acct, "push", "device:ab12"); err != nil || ok {
		t.Errorf("another channel's recipients keep their case: %v, %v", ok, err)
	}
}

// testSuppressionsList checks that ListSuppressions lists every entry of
// the account and none of another, in order of channel then recipient;
// that pages walk the same list, neither skipping nor repeating; and that
// the channel filter and a cursor within it hold.
func testSuppressionsList(t *testing.T, h SuppressionsHarness) {
	ctx := context.Background()
	s, acct := h.New(t), randomAccount()
	want := addListedSuppressions(t, s, acct)

	all, err := s.ListSuppressions(ctx, acct, store.SuppressionQuery{})
	if err != nil || len(all) != 60 {
		t.Fatalf("ListSuppressions = %d entries, %v; want 60", len(all), err)
	}
	for i := range want {
		if !sameSuppression(all[i], want[i]) {
			t.Fatalf("entry %d = %+v; want %+v", i, all[i], want[i])
		}
	}
	// Pages of 7 walk the same list, neither skipping nor repeating.
	paged := pageSuppressions(t, s, acct, 7)
	if len(paged) != len(want) {
		t.Fatalf("paged %d entries; want %d", len(paged), len(want))
	}
	for i := range want {
		if !sameSuppression(paged[i], want[i]) {
			t.Fatalf("paged entry %d = %+v; want %+v", i, paged[i], want[i])
		}
	}
	// The channel filter, and a cursor within it.
	emails, err := s.ListSuppressions(ctx, acct, store.SuppressionQuery{Kind: "email", AfterKind: "email", AfterTo: "u010@example.com", Limit: 5})
	if err != nil || len(emails) != 5 {
		t.Fatalf("ListSuppressions(email) = %d entries, %v; want 5", len(emails), err)
	}
	for _, e := range emails {
		if e.Kind != "email" || e.To <= "u010@example.com" {
			t.Errorf("filtered page has %+v", e)
		}
	}
	if emails[0].To != "u013@example.com" { // u011, u012 are not e-mail entries
		t.Errorf("first after u010 = %q; want u013@example.com", emails[0].To)
	}
	// An account with nothing: an empty list.
	if l, err := s.ListSuppressions(ctx, randomAccount(), store.SuppressionQuery{}); err != nil || len(l) != 0 {
		t.Errorf("ListSuppressions of an empty account = %+v, %v", l, err)
	}
}

// addListedSuppressions adds the 60 entries of acct that
// testSuppressionsList lists, over three channels and out of order, and
// one of another account that the list must never show. It returns acct's
// entries as AddSuppression answered them, in the list's order (channel,
// then recipient).
func addListedSuppressions(t *testing.T, s store.Suppressions, acct string) []store.Suppression {
	t.Helper()
	ctx, at := context.Background(), suppressedAt
	var want []store.Suppression
	// Added out of order: the list is ordered by channel, then
	// recipient.
	for i := 0; i < 60; i++ {
		kind := []record.Kind{"sms", "email", "chat"}[i%3]
		to := fmt.Sprintf("u%03d@example.com", 59-i)
		if kind != "email" {
			to = fmt.Sprintf("+91987654%04d", 59-i)
		}
		e, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: kind, To: to, Reason: store.SuppressManual, At: at})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	// Another account's entries never show.
	if _, err := s.AddSuppression(ctx, store.Suppression{Account: randomAccount(), Kind: "email", To: "zzz@example.com", Reason: store.SuppressManual, At: at}); err != nil {
		t.Fatal(err)
	}
	sortSuppressions(want)
	return want
}

// pageSuppressions walks acct's list in pages of size, each from the
// cursor the page before it ends at, failing t on an error or a page
// larger than size, and returns the entries of every page in the order
// they came. It stops at the first short page, or after 20 pages, so that
// a cursor that never moves cannot loop forever.
func pageSuppressions(t *testing.T, s store.Suppressions, acct string, size int) []store.Suppression {
	t.Helper()
	var paged []store.Suppression
	q := store.SuppressionQuery{Limit: size}
	for range 20 {
		page, err := s.ListSuppressions(context.Background(), acct, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > size {
			t.Fatalf("page of %d entries; want at most %d", len(page), size)
		}
		paged = append(paged, page...)
		if len(page) < size {
			break
		}
		q.AfterKind, q.AfterTo = page[len(page)-1].Kind, page[len(page)-1].To
	}
	return paged
}

// testSuppressionsDefaultPage checks that a query without a limit answers
// store.DefaultSuppressionPage entries, and one asking
// store.MaxSuppressionPage answers more.
func testSuppressionsDefaultPage(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	s, acct := h.New(t), randomAccount()
	for i := range store.DefaultSuppressionPage + 1 {
		if _, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "email", To: fmt.Sprintf("p%04d@example.com", i), Reason: store.SuppressManual, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.ListSuppressions(ctx, acct, store.SuppressionQuery{})
	if err != nil || len(l) != store.DefaultSuppressionPage {
		t.Fatalf("ListSuppressions = %d entries, %v; want %d", len(l), err, store.DefaultSuppressionPage)
	}
	l, err = s.ListSuppressions(ctx, acct, store.SuppressionQuery{Limit: store.MaxSuppressionPage})
	if err != nil || len(l) != store.DefaultSuppressionPage+1 {
		t.Fatalf("ListSuppressions(max) = %d entries, %v; want %d", len(l), err, store.DefaultSuppressionPage+1)
	}
}

// testSuppressionsConcurrent checks that concurrent adds of one recipient
// with every reason leave one entry, the strongest (hard_bounce): the
// store must decide the stronger reason atomically.
func testSuppressionsConcurrent(t *testing.T, h SuppressionsHarness) {
	ctx, at := context.Background(), suppressedAt
	s, acct := h.New(t), randomAccount()
	reasons := []store.SuppressionReason{store.SuppressManual, store.SuppressUnsubscribed, store.SuppressHardBounce, store.SuppressComplaint}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(reasons))
	for i := range 4 * len(reasons) {
		wg.Go(func() {
			_, err := s.AddSuppression(ctx, store.Suppression{Account: acct, Kind: "email", To: "race@example.com", Reason: reasons[i%len(reasons)], At: at.Add(time.Duration(i) * time.Second)})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.ListSuppressions(ctx, acct, store.SuppressionQuery{})
	if err != nil || len(l) != 1 || l[0].Reason != store.SuppressHardBounce {
		t.Fatalf("after concurrent adds: %+v, %v; want one hard_bounce entry", l, err)
	}
}

func sameSuppression(a, b store.Suppression) bool {
	return a.Account == b.Account && a.Kind == b.Kind && a.To == b.To && a.Reason == b.Reason && a.At.Equal(b.At)
}

func sortSuppressions(l []store.Suppression) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && (l[j].Kind < l[j-1].Kind || l[j].Kind == l[j-1].Kind && l[j].To < l[j-1].To); j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

func randomAccount() string { return "sup-" + rand.Text()[:12] }
