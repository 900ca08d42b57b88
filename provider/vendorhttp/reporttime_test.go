package vendorhttp

import (
	"testing"
	"time"
)

func TestReportTime(t *testing.T) {
	want := time.Date(2026, 11, 26, 4, 30, 0, 0, time.UTC) // 10:00 IST
	for in, out := range map[string]time.Time{
		"2026-11-26 10:00:00":       want,
		"2026-11-26T10:00:00":       want,
		"2026-11-26T04:30:00Z":      want,
		"2026-11-26T10:00:00+05:30": want,
		"1795667400":                want,
		"1795667400000":             want,
		"":                          {},
		"0":                         {},
		"-5":                        {},
		"yesterday":                 {},
	} {
		if got := ReportTime(in, IST); !got.Equal(out) || got.Location() != time.UTC {
			t.Errorf("ReportTime(%q) = %v, want %v", in, got, out)
		}
	}
}
