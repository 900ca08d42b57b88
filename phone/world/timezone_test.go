package world_test

import (
	"testing"
	"time"

	"github.com/notifykit/notify/phone/world"
)

func TestTimeZone(t *testing.T) {
	if world.TimeZone("+919876543210") == nil {
		t.Skip("no time zone database here")
	}
	// Compared by their offsets in winter and in summer: a country of
	// several zones of one offset (the United Kingdom's mobiles name
	// Guernsey, Jersey, the Isle of Man and London) answers its first.
	for number, want := range map[string]string{
		"+919876543210": "Asia/Kolkata",
		"+12125550123":  "America/New_York",
		"+14155550123":  "America/Los_Angeles",
		"+447700900123": "Europe/London",
	} {
		loc := world.TimeZone(number)
		if loc == nil {
			t.Errorf("TimeZone(%s) = nil, want %s", number, want)
			continue
		}
		wantLoc, err := time.LoadLocation(want)
		if err != nil {
			t.Skip(err)
		}
		for _, at := range []time.Time{time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC)} {
			_, got := at.In(loc).Zone()
			_, w := at.In(wantLoc).Zone()
			if got != w {
				t.Errorf("TimeZone(%s) = %v, offset %d at %v; want %s's %d", number, loc, got, at, want, w)
			}
		}
	}
	for _, bad := range []string{"", "not a number", "+999"} {
		if loc := world.TimeZone(bad); loc != nil {
			t.Errorf("TimeZone(%q) = %v, want nil", bad, loc)
		}
	}
}

func BenchmarkTimeZone(b *testing.B) {
	for b.Loop() {
		if world.TimeZone("+12125550123") == nil {
			b.Fatal("no zone")
		}
	}
}
