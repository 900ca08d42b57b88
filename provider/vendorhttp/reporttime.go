package vendorhttp

import (
	"strconv"
	"time"
)

// IST is Indian Standard Time, the zone Indian SMS vendors date their
// reports in without saying so, fixed rather than loaded so that no
// tzdata is needed.
var IST = time.FixedZone("IST", 5*3600+1800)

// ReportTime reads the time a delivery report carries, in whichever of
// the forms vendors use: Unix seconds (or milliseconds), RFC 3339, or
// "2006-01-02 15:04:05" (a T between date and time, and fractional
// seconds, allowed) in zone, for a time that carries no offset. It is in
// UTC; zero (the Notifier's now) when s is empty, not positive or
// unreadable.
func ReportTime(s string, zone *time.Location) time.Time {
	if s == "" {
		return time.Time{}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		switch {
		case n <= 0:
			return time.Time{}
		case n > 1e12:
			return time.UnixMilli(n).UTC()
		}
		return time.Unix(n, 0).UTC()
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC()
	}
	for _, layout := range []string{time.DateTime, "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, zone); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
