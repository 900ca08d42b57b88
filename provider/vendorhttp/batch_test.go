package vendorhttp_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/vendorhttp"
)

func TestTrimEndpoint(t *testing.T) {
	paths := []string{"/api/sendText", "/api"}
	cases := map[string]string{
		"https://gw.example.com":                   "https://gw.example.com",
		"https://gw.example.com/":                  "https://gw.example.com",
		"https://gw.example.com/api":               "https://gw.example.com",
		"https://gw.example.com/API/":              "https://gw.example.com",
		"https://gw.example.com/api/sendText":      "https://gw.example.com",
		"https://gw.example.com/v2//api/sendtext/": "https://gw.example.com/v2",
		"https://gw.example.com/rapi":              "https://gw.example.com/rapi",
		"https://gw.example.com/apis":              "https://gw.example.com/apis",
	}
	for raw, want := range cases {
		if got := vendorhttp.TrimEndpoint(raw, paths...); got != want {
			t.Errorf("TrimEndpoint(%q) = %q, want %q", raw, got, want)
		}
	}
	if got := vendorhttp.TrimEndpoint("https://x.example/send/"); got != "https://x.example/send" {
		t.Errorf("without paths: %q", got)
	}
}

func TestMaxBatch(t *testing.T) {
	if n, err := vendorhttp.MaxBatch("acme", 0, 500); n != 500 || err != nil {
		t.Errorf("0: %d, %v; want the default", n, err)
	}
	if n, err := vendorhttp.MaxBatch("acme", 20, 500); n != 20 || err != nil {
		t.Errorf("20: %d, %v", n, err)
	}
	_, err := vendorhttp.MaxBatch("acme", -1, 500)
	if err == nil || err.Error() != "acme: Config.MaxBatch must not be negative" {
		t.Errorf("-1: %v", err)
	}
}

func TestBatch(t *testing.T) {
	for _, n := range []int{0, 4} {
		_, err := vendorhttp.NewBatch("acme", n, 3)
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), fmt.Sprintf("1 to 3 envelopes, got %d", n)) {
			t.Errorf("NewBatch of %d: %v", n, err)
		}
	}
	b, err := vendorhttp.NewBatch("acme", 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(0, "+919876543210", true); err != nil {
		t.Fatal(err)
	}
	err = b.Add(1, "+919876543210", true)
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.HasSuffix(err.Error(), "acme: number +919876543210 is twice in the batch") {
		t.Errorf("a number twice: %v", err)
	}
	err = b.Add(2, "+919876543211", false)
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.HasSuffix(err.Error(), "acme: envelope 2 of the batch differs from the first in more than its number") {
		t.Errorf("another message: %v", err)
	}
	var ne *notify.Error
	if !errors.As(err, &ne) {
		t.Errorf("%T is not a *notify.Error", err)
	}
	rs := b.Results("acme-in", "req-1")
	if len(rs) != 3 {
		t.Fatalf("%d results, want one per envelope", len(rs))
	}
	for i, r := range rs {
		if r.Provider != "acme-in" || r.ProviderMessageID != "req-1" {
			t.Errorf("result %d: %+v", i, r)
		}
	}
}

// A provider whose vendor takes one message to many numbers in a request
// checks its batch with a Batch as it prepares each envelope.
func ExampleBatch() {
	type request struct{ Text, To string }
	envs := []request{{"Sale today", "+919876543210"}, {"Sale today", "+919876543211"}}
	batch, err := vendorhttp.NewBatch("acme", len(envs), 1000)
	if err != nil {
		panic(err)
	}
	var numbers []string
	for i, r := range envs {
		if err := batch.Add(i, r.To, r.Text == envs[0].Text); err != nil {
			fmt.Println(err)
			return
		}
		numbers = append(numbers, r.To)
	}
	// ... one request to the vendor for every number, which answers "req-7" ...
	for _, r := range batch.Results("acme", "req-7") {
		fmt.Println(r.ProviderMessageID)
	}
	fmt.Println(strings.Join(numbers, ","))
	// Output:
	// req-7
	// req-7
	// +919876543210,+919876543211
}
