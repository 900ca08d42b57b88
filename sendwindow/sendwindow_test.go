package sendwindow_test

import (
	"testing"
	"time"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/sendwindow"
)

var ist = time.FixedZone("IST", 5*3600+1800)

func TestTRAI(t *testing.T) {
	rules := sendwindow.Rules{sendwindow.TRAI()}
	next := rules.For(record.Promotional, "IN", "+919876543210")
	if next == nil {
		t.Fatal("TRAI does not hold a promotional SMS to India")
	}
	for _, tc := range []struct{ now, want time.Time }{
		{time.Date(2026, 11, 26, 22, 0, 0, 0, ist), time.Date(2026, 11, 27, 9, 0, 0, 0, ist)},
		{time.Date(2026, 11, 26, 8, 59, 59, 0, ist), time.Date(2026, 11, 26, 9, 0, 0, 0, ist)},
		{time.Date(2026, 11, 26, 9, 0, 0, 0, ist), time.Date(2026, 11, 26, 9, 0, 0, 0, ist)},
		{time.Date(2026, 11, 26, 20, 59, 59, 0, ist), time.Date(2026, 11, 26, 20, 59, 59, 0, ist)},
		{time.Date(2026, 11, 26, 21, 0, 0, 0, ist), time.Date(2026, 11, 27, 9, 0, 0, 0, ist)},
		{time.Date(2026, 12, 31, 23, 30, 0, 0, ist), time.Date(2027, 1, 1, 9, 0, 0, 0, ist)},
		// 22:00 IST given in UTC.
		{time.Date(2026, 11, 26, 16, 30, 0, 0, time.UTC), time.Date(2026, 11, 27, 9, 0, 0, 0, ist)},
	} {
		if got := next(tc.now); !got.Equal(tc.want) {
			t.Errorf("at %v: next %v, want %v", tc.now, got, tc.want)
		}
	}
	for _, tc := range []struct {
		class   record.PriceClass
		country string
	}{{record.Transactional, "IN"}, {record.Promotional, "GB"}, {record.Promotional, ""}} {
		if rules.For(tc.class, tc.country, "+447700900123") != nil {
			t.Errorf("TRAI holds %s messages to %q", tc.class, tc.country)
		}
	}
}

func TestRecipientZoneAndFirstMatch(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	quiet := sendwindow.Window{Name: "quiet hours", Open: 8 * time.Hour, Close: 22 * time.Hour,
		Zone: func(to string) *time.Location {
			if to == "+12125550123" {
				return ny
			}
			return nil
		}}
	rules := sendwindow.Rules{sendwindow.TRAI(), quiet}
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC) // 23:00 in New York, 09:30 in India
	if got, want := rules.For(record.Transactional, "US", "+12125550123")(now), time.Date(2026, 11, 27, 8, 0, 0, 0, ny); !got.Equal(want) {
		t.Errorf("New York at 23:00: next %v, want %v", got, want)
	}
	// A zone the resolver does not know is UTC: 04:00 there, so 08:00 UTC.
	if got, want := rules.For(record.Transactional, "", "a@example.com")(now), time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("unknown zone: next %v, want %v", got, want)
	}
	// The first window that matches applies: TRAI, open at 09:30 IST.
	if got := rules.For(record.Promotional, "IN", "+919876543210")(now); !got.Equal(now) {
		t.Errorf("India at 09:30: next %v, want now", got)
	}
}

func TestCheck(t *testing.T) {
	for name, w := range map[string]sendwindow.Window{
		"negative open":    {Open: -time.Hour, Close: time.Hour},
		"close before":     {Open: 10 * time.Hour, Close: 9 * time.Hour},
		"empty":            {Open: 9 * time.Hour, Close: 9 * time.Hour},
		"past midnight":    {Open: 9 * time.Hour, Close: 25 * time.Hour},
		"lowercase":        {Country: "in", Open: 9 * time.Hour, Close: 21 * time.Hour},
		"three letters":    {Country: "IND", Open: 9 * time.Hour, Close: 21 * time.Hour},
		"open at 24 hours": {Open: 24 * time.Hour, Close: 24 * time.Hour},
	} {
		if err := (sendwindow.Rules{w}).Check(); err == nil {
			t.Errorf("%s: Check passed %+v", name, w)
		}
	}
	if err := (sendwindow.Rules{sendwindow.TRAI(), {Open: 0, Close: 24 * time.Hour}}).Check(); err != nil {
		t.Errorf("good windows: %v", err)
	}
}
