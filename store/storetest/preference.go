package storetest

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// PreferencesHarness connects RunPreferences to one store.Preferences.
type PreferencesHarness struct {
	// New returns a store, releasing it with t.Cleanup. Required. It may
	// hand every subtest the same database: the suite's accounts are
	// random.
	New func(t *testing.T) store.Preferences
}

// RunPreferences checks a store.Preferences:
//
//   - PutCategory keeps a category with every field, which Categories
//     lists in order of name and LookupChoices answers; putting it again
//     replaces it and keeps the recipients' choices;
//   - SetChoice keeps a choice that Choices and LookupChoices answer, the
//     recipient compared byte for byte; a second choice replaces the
//     first; a recipient without a choice is absent from both answers;
//   - accounts, channels and recipients never meet: a choice of one is
//     not seen by another account, channel or spelling;
//   - a choice of a category the account has not defined, a lookup of
//     one, and the removal of one is ErrNotFound;
//   - RemoveCategory takes the category and its choices: defined again,
//     it has none;
//   - an empty account, a bad category name, channel or recipient, or a
//     description too long is ErrInvalid and keeps nothing;
//   - concurrent choices of one recipient leave one of them, and
//     concurrent categories of one account are all kept;
//   - SetLocale keeps a recipient's locale canonical ("hi_in" as
//     "hi-IN"), which Locales answers for that account and spelling
//     alone, replaces it, and forgets it for ""; a tag that is not a
//     locale, an empty account or a bad recipient is ErrInvalid and
//     changes nothing.
func RunPreferences(t *testing.T, h PreferencesHarness) {
	needs(t, h.New != nil, "PreferencesHarness needs New")
	runAll(t, []subtest{
		{"Categories", func(t *testing.T) { testPreferencesCategories(t, h) }},
		{"Choices", func(t *testing.T) { testPreferencesChoices(t, h) }},
		{"Apart", func(t *testing.T) { testPreferencesApart(t, h) }},
		{"Undefined", func(t *testing.T) { testPreferencesUndefined(t, h) }},
		{"Remove", func(t *testing.T) { testPreferencesRemove(t, h) }},
		{"Invalid", func(t *testing.T) { testPreferencesInvalid(t, h) }},
		{"Concurrent", func(t *testing.T) { testPreferencesConcurrent(t, h) }},
		{"Locales", func(t *testing.T) { testPreferencesLocales(t, h) }},
	})
}

// putCategory defines c or fails t.
func putCategory(t *testing.T, s store.Preferences, c store.Category) {
	t.Helper()
	got, err := s.PutCategory(context.Background(), c)
	if err != nil || got != c {
		t.Fatalf("PutCategory(%+v) = %+v, %v; want it back", c, got, err)
	}
}

// setChoice records a choice or fails t.
func setChoice(t *testing.T, s store.Preferences, account string, kind record.Kind, to, category string, allowed bool) {
	t.Helper()
	if err := s.SetChoice(context.Background(), account, kind, to, category, allowed); err != nil {
		t.Fatalf("SetChoice(%s, %s, %s, %v): %v", kind, to, category, allowed, err)
	}
}

// wantChoices fails t unless the recipient's choices are want.
func wantChoices(t *testing.T, s store.Preferences, account string, kind record.Kind, to string, want map[string]bool) {
	t.Helper()
	got, err := s.Choices(context.Background(), account, kind, to)
	if err != nil || got == nil || !maps.Equal(got, want) {
		t.Fatalf("Choices(%s, %s) = %v, %v; want %v", kind, to, got, err, want)
	}
}

// testPreferencesCategories checks that categories are kept with every
// field, listed by name, and replaced whole by a second put that keeps
// the choices made of them.
func testPreferencesCategories(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct := h.New(t), randomAccount()
	if cs, err := s.Categories(ctx, acct); err != nil || len(cs) != 0 {
		t.Fatalf("Categories of a new account = %+v, %v; want none", cs, err)
	}
	order := store.Category{Account: acct, Name: "order", Description: "Order and delivery updates — ₹ and all"}
	marketing := store.Category{Account: acct, Name: "marketing", Description: "Offers", OptIn: true}
	otp := store.Category{Account: acct, Name: "otp", Critical: true}
	for _, c := range []store.Category{order, marketing, otp} {
		putCategory(t, s, c)
	}
	cs, err := s.Categories(ctx, acct)
	if want := []store.Category{marketing, order, otp}; err != nil || fmt.Sprint(cs) != fmt.Sprint(want) {
		t.Fatalf("Categories = %+v, %v; want %+v, in order of name", cs, err, want)
	}
	setChoice(t, s, acct, kindSMS, "+919876543210", "order", false)
	order.Description, order.OptIn = "Orders", true
	putCategory(t, s, order)
	c, choices, err := s.LookupChoices(ctx, acct, "order", kindSMS, []string{"+919876543210"})
	if err != nil || c != order || !maps.Equal(choices, map[string]bool{"+919876543210": false}) {
		t.Fatalf("LookupChoices after a second put = %+v, %v, %v; want %+v and the choice kept", c, choices, err, order)
	}
}

// testPreferencesChoices checks that a choice is kept, answered by
// Choices and LookupChoices, and replaced by the next one, and that a
// recipient without a choice is absent.
func testPreferencesChoices(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct := h.New(t), randomAccount()
	putCategory(t, s, store.Category{Account: acct, Name: "order"})
	putCategory(t, s, store.Category{Account: acct, Name: "marketing", OptIn: true})
	wantChoices(t, s, acct, kindSMS, "+919876543210", map[string]bool{})
	setChoice(t, s, acct, kindSMS, "+919876543210", "marketing", true)
	setChoice(t, s, acct, kindSMS, "+919876543210", "order", false)
	wantChoices(t, s, acct, kindSMS, "+919876543210", map[string]bool{"marketing": true, "order": false})
	setChoice(t, s, acct, kindSMS, "+919876543210", "marketing", false)
	wantChoices(t, s, acct, kindSMS, "+919876543210", map[string]bool{"marketing": false, "order": false})
	setChoice(t, s, acct, kindSMS, "+14155550100", "marketing", true)

	tos := []string{"+14155550100", "+919876543210", "+447700900123", "not a number", "+14155550100"}
	c, choices, err := s.LookupChoices(ctx, acct, "marketing", kindSMS, tos)
	want := map[string]bool{"+14155550100": true, "+919876543210": false}
	if err != nil || c.Name != "marketing" || !c.OptIn || !maps.Equal(choices, want) {
		t.Fatalf("LookupChoices = %+v, %v, %v; want marketing (opt-in) and %v", c, choices, err, want)
	}
	if c, choices, err := s.LookupChoices(ctx, acct, "order", kindSMS, nil); err != nil || c.Name != "order" || len(choices) != 0 {
		t.Fatalf("LookupChoices of no recipients = %+v, %v, %v; want order and no choices", c, choices, err)
	}
}

// testPreferencesApart checks that a choice belongs to its account,
// channel and recipient, spelled as given.
func testPreferencesApart(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct, other := h.New(t), randomAccount(), randomAccount()
	for _, a := range []string{acct, other} {
		putCategory(t, s, store.Category{Account: a, Name: "order"})
	}
	setChoice(t, s, acct, "email", "ann@example.com", "order", false)
	wantChoices(t, s, acct, "email", "ann@example.com", map[string]bool{"order": false})
	for _, c := range []struct {
		acct string
		kind record.Kind
		to   string
	}{{other, "email", "ann@example.com"}, {acct, "chat", "ann@example.com"}, {acct, "email", "Ann@example.com"}, {acct, "email", "bob@example.com"}} {
		wantChoices(t, s, c.acct, c.kind, c.to, map[string]bool{})
		_, choices, err := s.LookupChoices(ctx, c.acct, "order", c.kind, []string{c.to})
		if err != nil || len(choices) != 0 {
			t.Errorf("LookupChoices(%+v) = %v, %v; want none", c, choices, err)
		}
	}
}

// testPreferencesUndefined checks that a category the account has not
// defined is ErrNotFound, and that another account's category of the same
// name does not count.
func testPreferencesUndefined(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct := h.New(t), randomAccount()
	putCategory(t, s, store.Category{Account: randomAccount(), Name: "order"})
	wantErr(t, "SetChoice of an undefined category", s.SetChoice(ctx, acct, kindSMS, "+919876543210", "order", true), store.ErrNotFound)
	_, _, err := s.LookupChoices(ctx, acct, "order", kindSMS, []string{"+919876543210"})
	wantErr(t, "LookupChoices of an undefined category", err, store.ErrNotFound)
	wantErr(t, "RemoveCategory of an undefined category", s.RemoveCategory(ctx, acct, "order"), store.ErrNotFound)
	wantChoices(t, s, acct, kindSMS, "+919876543210", map[string]bool{})
}

// testPreferencesRemove checks that RemoveCategory takes the category and
// its choices, so that one defined again starts with none.
func testPreferencesRemove(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct := h.New(t), randomAccount()
	putCategory(t, s, store.Category{Account: acct, Name: "order"})
	putCategory(t, s, store.Category{Account: acct, Name: "news"})
	setChoice(t, s, acct, kindChat, "+919876543210", "order", false)
	setChoice(t, s, acct, kindChat, "+919876543210", "news", false)
	if err := s.RemoveCategory(ctx, acct, "order"); err != nil {
		t.Fatal(err)
	}
	wantChoices(t, s, acct, kindChat, "+919876543210", map[string]bool{"news": false})
	if cs, err := s.Categories(ctx, acct); err != nil || len(cs) != 1 || cs[0].Name != "news" {
		t.Fatalf("Categories after removal = %+v, %v; want news alone", cs, err)
	}
	wantErr(t, "a second RemoveCategory", s.RemoveCategory(ctx, acct, "order"), store.ErrNotFound)
	putCategory(t, s, store.Category{Account: acct, Name: "order"})
	wantChoices(t, s, acct, kindChat, "+919876543210", map[string]bool{"news": false})
}

// testPreferencesInvalid checks that every argument the rules refuse is
// ErrInvalid naming its field, and that nothing is kept.
func testPreferencesInvalid(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct := h.New(t), randomAccount()
	for name, c := range map[string]store.Category{
		"account":             {Name: "order"},
		"empty name":          {Account: acct},
		"upper case":          {Account: acct, Name: "Order"},
		"digit first":         {Account: acct, Name: "1order"},
		"space":               {Account: acct, Name: "or der"},
		"long name":           {Account: acct, Name: strings.Repeat("o", 33)},
		"long description":    {Account: acct, Name: "order", Description: strings.Repeat("d", 201)},
		"control description": {Account: acct, Name: "order", Description: "a\nb"},
		"invalid UTF-8":       {Account: acct, Name: "order", Description: "\xff"},
	} {
		_, err := s.PutCategory(ctx, c)
		wantErr(t, "PutCategory with a bad "+name, err, store.ErrInvalid)
	}
	if cs, err := s.Categories(ctx, acct); err != nil || len(cs) != 0 {
		t.Fatalf("Categories after refused puts = %+v, %v; want none", cs, err)
	}
	putCategory(t, s, store.Category{Account: acct, Name: strings.Repeat("o", 32), Description: strings.Repeat("d", 200)})
	putCategory(t, s, store.Category{Account: acct, Name: "order"})
	for name, err := range map[string]error{
		"SetChoice without an account":    s.SetChoice(ctx, "", kindSMS, "+919876543210", "order", true),
		"SetChoice on a bad channel":      s.SetChoice(ctx, acct, "Fax!", "+919876543210", "order", true),
		"SetChoice of a bad recipient":    s.SetChoice(ctx, acct, kindSMS, "+91 98765 43210", "order", true),
		"SetChoice of an empty recipient": s.SetChoice(ctx, acct, kindSMS, "", "order", true),
		"SetChoice of a bad category":     s.SetChoice(ctx, acct, kindSMS, "+919876543210", "Order", true),
		"SetChoice of no category":        s.SetChoice(ctx, acct, kindSMS, "+919876543210", "", true),
		"RemoveCategory of a bad name":    s.RemoveCategory(ctx, acct, "Order"),
	} {
		wantErr(t, name, err, store.ErrInvalid)
	}
	for name, call := range map[string]func() error{
		"Choices without an account":          func() error { _, err := s.Choices(ctx, "", kindSMS, "+919876543210"); return err },
		"Choices of a bad recipient":          func() error { _, err := s.Choices(ctx, acct, kindSMS, "+91 98765"); return err },
		"Categories without an account":       func() error { _, err := s.Categories(ctx, ""); return err },
		"LookupChoices without an account":    func() error { _, _, err := s.LookupChoices(ctx, "", "order", kindSMS, nil); return err },
		"LookupChoices of a bad category":     func() error { _, _, err := s.LookupChoices(ctx, acct, "", kindSMS, nil); return err },
		"LookupChoices on a bad channel":      func() error { _, _, err := s.LookupChoices(ctx, acct, "order", "", nil); return err },
		"LookupChoices on an unnamed channel": func() error { _, _, err := s.LookupChoices(ctx, acct, "order", "SMS", nil); return err },
	} {
		wantErr(t, name, call(), store.ErrInvalid)
	}
	wantChoices(t, s, acct, kindSMS, "+919876543210", map[string]bool{})
}

// testPreferencesConcurrent checks that choices of one recipient made at
// once leave one of them, and categories defined at once are all kept.
func testPreferencesConcurrent(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct := h.New(t), randomAccount()
	together(t, Goroutines, 1, func(g, _ int) error {
		_, err := s.PutCategory(ctx, store.Category{Account: acct, Name: fmt.Sprintf("c%02d", g)})
		return err
	})
	if cs, err := s.Categories(ctx, acct); err != nil || len(cs) != Goroutines {
		t.Fatalf("Categories after %d concurrent puts: %d, %v", Goroutines, len(cs), err)
	}
	together(t, Goroutines, 4, func(g, i int) error {
		return s.SetChoice(ctx, acct, kindSMS, "+919876543210", "c00", (g+i)%2 == 0)
	})
	got, err := s.Choices(ctx, acct, kindSMS, "+919876543210")
	if _, ok := got["c00"]; err != nil || len(got) != 1 || !ok {
		t.Fatalf("Choices after concurrent choices = %v, %v; want one choice of c00", got, err)
	}
}

// testPreferencesLocales checks that a recipient's locale is kept
// canonical, answered for its account and spelling alone, replaced,
// forgotten, and that a bad one changes nothing.
func testPreferencesLocales(t *testing.T, h PreferencesHarness) {
	ctx := context.Background()
	s, acct, other := h.New(t), randomAccount(), randomAccount()
	wantLocales := func(account string, tos []string, want map[string]string) {
		t.Helper()
		got, err := s.Locales(ctx, account, tos)
		if err != nil || got == nil || !maps.Equal(got, want) {
			t.Fatalf("Locales(%v) = %v, %v; want %v", tos, got, err, want)
		}
	}
	tos := []string{"+919876543210", "ann@example.com", "Ann@example.com", "not a recipient", "+919876543210"}
	wantLocales(acct, tos, map[string]string{})
	for to, tag := range map[string]string{"+919876543210": "hi_in", "ann@example.com": "FR"} {
		if err := s.SetLocale(ctx, acct, to, tag); err != nil {
			t.Fatalf("SetLocale(%s, %s): %v", to, tag, err)
		}
	}
	wantLocales(acct, tos, map[string]string{"+919876543210": "hi-IN", "ann@example.com": "fr"})
	wantLocales(other, tos, map[string]string{})
	wantLocales(acct, nil, map[string]string{})

	if err := s.SetLocale(ctx, acct, "+919876543210", "ta-IN"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.SetLocale(ctx, acct, "ann@example.com", ""), s.SetLocale(ctx, acct, "bob@example.com", "")} {
		if err != nil {
			t.Fatalf("SetLocale to forget: %v", err)
		}
	}
	wantLocales(acct, tos, map[string]string{"+919876543210": "ta-IN"})

	for name, err := range map[string]error{
		"SetLocale without an account":    s.SetLocale(ctx, "", "+919876543210", "hi"),
		"SetLocale of a bad recipient":    s.SetLocale(ctx, acct, "+91 98765 43210", "hi"),
		"SetLocale of an empty recipient": s.SetLocale(ctx, acct, "", "hi"),
		"SetLocale of a bad tag":          s.SetLocale(ctx, acct, "+919876543210", "hindi"),
		"SetLocale of an extension":       s.SetLocale(ctx, acct, "+919876543210", "en-US-u-ca-buddhist"),
	} {
		wantErr(t, name, err, store.ErrInvalid)
	}
	_, err := s.Locales(ctx, "", tos)
	wantErr(t, "Locales without an account", err, store.ErrInvalid)
	wantLocales(acct, tos, map[string]string{"+919876543210": "ta-IN"})
}
