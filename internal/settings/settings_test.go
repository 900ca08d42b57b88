package settings

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/notifykit/notify"
)

type testSettings struct {
	Sender string `json:"sender"`
}

const kind notify.Kind = "test"

func account(raw string) *notify.Account {
	a := &notify.Account{ID: "acme"}
	if raw != "" {
		a.Settings = map[notify.Kind]json.RawMessage{kind: json.RawMessage(raw)}
	}
	return a
}

func TestCacheDecodesEachJSONOnce(t *testing.T) {
	var c Cache[testSettings]
	first, err := c.Of(account(`{"sender":"ACME"}`), kind)
	if err != nil || first.Sender != "ACME" {
		t.Fatalf("Of = %+v, %v", first, err)
	}
	// Another account with the same JSON gets the same decoded value.
	again, err := c.Of(account(`{"sender":"ACME"}`), kind)
	if err != nil || again != first {
		t.Fatalf("second Of = %p, %v; want the cached %p", again, err, first)
	}
	// Changed settings are decoded anew.
	changed, err := c.Of(account(`{"sender":"OTHER"}`), kind)
	if err != nil || changed.Sender != "OTHER" {
		t.Fatalf("changed Of = %+v, %v", changed, err)
	}
	none, err := c.Of(account(""), kind)
	if err != nil || *none != (testSettings{}) {
		t.Fatalf("Of without settings = %+v, %v", none, err)
	}
}

func TestCacheRefusesBrokenSettings(t *testing.T) {
	var c Cache[testSettings]
	_, err := c.Of(account(`{"sender":7}`), kind)
	if notify.CodeOf(err) != notify.CodeInternal {
		t.Fatalf("Of of broken settings = %v, want Internal", err)
	}
}

func TestCacheIsBounded(t *testing.T) {
	var c Cache[testSettings]
	for i := range maxCached + 10 {
		if _, err := c.Of(account(`{"sender":"S`+strconv.Itoa(i)+`"}`), kind); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > maxCached {
		t.Fatalf("%d entries kept, want at most %d", n, maxCached)
	}
}

// TestCacheKeepsLargeSettingsOut: settings larger than maxCachedEntry are
// decoded each time and not kept, so the cache's memory stays bounded.
func TestCacheKeepsLargeSettingsOut(t *testing.T) {
	var c Cache[testSettings]
	big := `{"sender":"` + strings.Repeat("A", maxCachedEntry) + `"}`
	got, err := c.Of(account(big), kind)
	if err != nil || len(got.Sender) != maxCachedEntry {
		t.Fatalf("Of = %d bytes, %v", len(got.Sender), err)
	}
	if len(c.m) != 0 || c.bytes != 0 {
		t.Fatalf("kept %d entries, %d bytes; want none", len(c.m), c.bytes)
	}
	if _, err := c.Of(account(`{"sender":"`+strings.Repeat("B", 1000)+`"}`), kind); err != nil || c.bytes == 0 {
		t.Fatalf("a small entry: %v, %d bytes kept", err, c.bytes)
	}
}
