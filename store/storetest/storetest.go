package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// Goroutines is how many goroutines the concurrent subtests run.
const Goroutines = 64

// newName returns a random name with the given prefix.
func newName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return prefix + "-" + hex.EncodeToString(b[:])
}

// inr is the currency of the suites' accounts and amounts.
var inr = record.Currency{Code: "INR", Symbol: "₹", Exponent: 2}

// rupees returns minor paise of inr.
func rupees(minor int64) record.Money { return record.Money{Minor: minor, Currency: inr} }

// atOnce runs f(g) for each g below n, each in a goroutine of its own,
// all released together so that their calls race, and returns when every
// one has.
func atOnce(n int, f func(g int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(g)
		}()
	}
	close(start)
	wg.Wait()
}

// together runs op calls times from each of goroutines goroutines,
// started at once (atOnce). An error of op fails t.
func together(t *testing.T, goroutines, calls int, op func(g, i int) error) {
	t.Helper()
	var (
		mu   sync.Mutex
		errs []error
	)
	atOnce(goroutines, func(g int) {
		for i := range calls {
			if err := op(g, i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}
	})
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
}

// wantOneWins runs op from Goroutines goroutines at once and checks that
// exactly one wins (op returns nil) and that every other loses with
// ErrConflict; call names op, and won says what the winner did.
func wantOneWins(t *testing.T, call, won string, op func() error) {
	t.Helper()
	var (
		mu       sync.Mutex
		wins     int
		failures []error
	)
	atOnce(Goroutines, func(int) {
		err := op()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			wins++
		case !isKind(err, store.ErrConflict):
			failures = append(failures, err)
		}
	})
	for _, err := range failures {
		t.Errorf("%s: %v, want success or Conflict", call, err)
	}
	if wins != 1 {
		t.Fatalf("%d of %d goroutines %s, want exactly 1", wins, Goroutines, won)
	}
}

// The suites' channels and price classes, as the channel packages and
// package notify name them.
const (
	kindSMS  record.Kind = "sms"
	kindChat record.Kind = "chat"
	kindOTP  record.Kind = "otp"

	transactional record.PriceClass = "transactional"
	promotional   record.PriceClass = "promotional"
)

// errorKinds are the errors that classify a store's answer: the sentinels
// of package store and the context errors, each of which the Notifier
// reads as a code of its own. A *store.LimitError is one more kind.
var errorKinds = []struct {
	err  error
	name string
}{
	{store.ErrNotFound, "ErrNotFound"},
	{store.ErrConflict, "ErrConflict"},
	{store.ErrInsufficientFunds, "ErrInsufficientFunds"},
	{store.ErrInvalid, "ErrInvalid"},
	{store.ErrUnauthenticated, "ErrUnauthenticated"},
	{store.ErrUnavailable, "ErrUnavailable"},
	{context.Canceled, "context.Canceled"},
	{context.DeadlineExceeded, "context.DeadlineExceeded"},
}

// kindsOf names every kind err matches: the errorKinds it matches (errors.Is)
// and "*store.LimitError" when it holds one.
func kindsOf(err error) []string {
	var names []string
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			names = append(names, k.name)
		}
	}
	var limit *store.LimitError
	if errors.As(err, &limit) {
		names = append(names, "*store.LimitError")
	}
	return names
}

// kindName names want, one of errorKinds.
func kindName(want error) string {
	for _, k := range errorKinds {
		if k.err == want {
			return k.name
		}
	}
	return fmt.Sprintf("%v", want)
}

// isKind reports whether err matches want (one of errorKinds) and no
// other kind: the error the contract asks for, and nothing a caller
// could read otherwise.
func isKind(err, want error) bool {
	kinds := kindsOf(err)
	return len(kinds) == 1 && kinds[0] == kindName(want)
}

// wantErr fails t unless err matches want, one of store's sentinels or a
// context error, and no other of them nor a *store.LimitError. A
// record.FieldErrors must name its fields.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, kindName(want))
	}
	if !isKind(err, want) {
		kinds := "no kind: the store failing"
		if k := kindsOf(err); len(k) > 0 {
			kinds = strings.Join(k, ", ")
		}
		t.Fatalf("%s: error %q matches %s, want %s alone", what, err, kinds, kindName(want))
	}
	var fields record.FieldErrors
	if errors.As(err, &fields) {
		if len(fields) == 0 {
			t.Fatalf("%s: error %q is an empty record.FieldErrors", what, err)
		}
		for _, f := range fields {
			if f.Field == "" || f.Message == "" {
				t.Fatalf("%s: error %q has a field error without a field or a rule: %+v", what, err, f)
			}
		}
	}
}

// isLimit reports whether err is a Limiter's refusal: a *store.LimitError
// matching none of errorKinds.
func isLimit(err error) bool {
	kinds := kindsOf(err)
	return len(kinds) == 1 && kinds[0] == "*store.LimitError"
}

// packagePrefix matches a text that starts with a package-like name and a
// colon.
var packagePrefix = regexp.MustCompile(`^[a-z][a-z0-9_]*: `)

// wantShownToSender fails t when err's text names a package: a sender
// sees this error, through the HTTP API too, and it must not tell what
// the service runs on ("memstore: ...", "pgstore: ..."). The text of the
// sentinel err matches, which a store puts at the end ("short:
// insufficient funds"), is not taken for the words after a package name.
func wantShownToSender(t *testing.T, what string, err error) {
	t.Helper()
	msg := err.Error()
	text := msg
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			text = strings.TrimSuffix(text, ": "+k.err.Error())
		}
	}
	if packagePrefix.MatchString(text) {
		t.Errorf("%s: error %q names a package; a sender sees it", what, msg)
	}
}

// diffs collects how a record read back differs from the one expected,
// one "Name = got, want want" each.
type diffs []string

// add notes a difference, as fmt.Sprintf words format with args.
func (d *diffs) add(format string, args ...any) { *d = append(*d, fmt.Sprintf(format, args...)) }

// field notes name's difference when got is not want, printed with %v.
func (d *diffs) field(name string, got, want any) {
	if got != want {
		d.add("%s = %v, want %v", name, got, want)
	}
}

// quoted is field printing what fmt.Sprint makes of got and want with %q.
func (d *diffs) quoted(name string, got, want any) {
	if got != want {
		d.add("%s = %q, want %q", name, fmt.Sprint(got), fmt.Sprint(want))
	}
}

// String joins the differences, "" for none.
func (d diffs) String() string { return strings.Join(d, "; ") }

// needs fails t with what a harness lacks unless it has it (has).
func needs(t *testing.T, has bool, what string) {
	t.Helper()
	if !has {
		t.Fatal("storetest: " + what)
	}
}

func runAll(t *testing.T, tests []subtest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}

type subtest struct {
	name string
	fn   func(*testing.T)
}

// sampleReceipt returns a receipt as the Notifier encodes one (its JSON,
// its keys in the Notifier's order, not sorted), naming a fresh message
// ID, for round trips: a store keeps its bytes as they are.
func sampleReceipt(account string) []byte {
	leg := func(kind record.Kind, status record.State, extra string) string {
		return `{"message_id":"` + newName("leg") + `","account":"` + account + `","kind":"` + string(kind) +
			`","to":"9876543210","status":"` + string(status) + `","provider":"prov-` + string(kind) +
			`","provider_message_id":"pm-` + string(kind) + `"` + extra +
			`,"units":1,"cost":{"minor":20,"code":"INR","symbol":"₹","exponent":2},` +
			`"balance":{"minor":99960,"code":"INR","symbol":"₹","exponent":2},"metered":true,"attempts":2,` +
			`"created_at":"2025-03-14T09:26:53.589793Z"}`
	}
	return []byte(`{"message_id":"` + newName("msg") + `","account":"` + account + `","kind":"otp",` +
		`"to":"9876543210","status":"sent","provider":"smsgateway","provider_message_id":"pm-1",` +
		`"gateway":"cloud","note":"chat leg failed over","units":2,` +
		`"cost":{"minor":40,"code":"INR","symbol":"₹","exponent":2},` +
		`"balance":{"minor":99960,"code":"INR","symbol":"₹","exponent":2},"metered":true,"attempts":3,` +
		`"domain":"shop.example","idempotency_key":"` + newName("idem") + `",` +
		`"created_at":"2025-03-14T09:26:53.589793Z","legs":[` +
		leg(kindSMS, record.StateSent, "") + `,` +
		leg(kindChat, record.StateFailed, `,"gateway":"qr","error_code":"unavailable","error":"unavailable: session down"`) +
		`]}`)
}

// oddReceipts returns receipts whose bytes a store that interprets them
// (as JSON, as text) would change: a store keeps any bytes as they are.
func oddReceipts() map[string][]byte {
	binary := make([]byte, 0, 512)
	for i := range 256 {
		binary = append(binary, byte(i), byte(255-i))
	}
	return map[string][]byte{
		"JSON with spaces and repeated keys": []byte(` { "b" : 1,  "a":2, "a" : 3 }` + "\n"),
		"NUL and invalid UTF-8":              {0, 'x', 0xff, 0xfe, 0xc3, 0x28, 0, 0x80},
		"every byte value":                   binary,
		"one byte":                           {'{'},
		"64 KiB":                             bytes.Repeat([]byte("receipt\x00\xff"), 64<<10/9+1),
	}
}

// diffReceipt describes how got differs from want, or returns "".
func diffReceipt(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("%d bytes, want %d; they differ from byte %d on: got %q, want %q",
		len(got), len(want), i, excerpt(got, i), excerpt(want, i))
}

func excerpt(b []byte, from int) []byte {
	if from >= len(b) {
		return nil
	}
	return b[from:min(len(b), from+32)]
}
