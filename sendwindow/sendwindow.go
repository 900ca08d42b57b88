package sendwindow

import (
	"fmt"
	"strings"
	"time"

	"github.com/notifykit/notify/record"
)

// Window is a daily span of local time, from Open to Close after
// midnight, in which messages of Class to Country may go.
type Window struct {
	// Name says what rule the window keeps, for receipts' notes, such as
	// "TRAI promotional hours". Optional.
	Name string
	// Class is the price class held (record.Promotional, say); empty:
	// every class.
	Class record.PriceClass
	// Country is the recipients' ISO 3166-1 alpha-2 country (notify.
	// Envelope.Country); empty: every country.
	Country string
	// Open and Close bound the window, as durations after local
	// midnight: 0 <= Open < Close <= 24h. Quiet hours from 22:00 to 08:00
	// are the window 08:00 to 22:00.
	Open, Close time.Duration
	// Location is the window's time zone. Nil: the recipient's zone, as
	// Zone says, or UTC when Zone is nil or knows none.
	Location *time.Location
	// Zone returns the time zone of a recipient (an E.164 number, or an
	// address), for a window without Location: quiet hours in each
	// recipient's own night. phone/world.TimeZone suits numbers. Nil: UTC.
	Zone func(to string) *time.Location
}

// TRAI returns the window Indian rules set for promotional SMS: from
// 09:00 to 21:00 Indian Standard Time, to numbers in India. It is the
// default of sms.Config.Windows.
func TRAI() Window {
	return Window{Name: "TRAI promotional hours", Class: record.Promotional, Country: "IN",
		Open: 9 * time.Hour, Close: 21 * time.Hour, Location: time.FixedZone("IST", 5*3600+1800)}
}

// Check reports what is wrong with w, naming the field, or nil.
func (w Window) Check() error {
	switch {
	case w.Open < 0 || w.Open >= 24*time.Hour:
		return fmt.Errorf("sendwindow: Open %v must be from 0 to before 24h", w.Open)
	case w.Close <= w.Open || w.Close > 24*time.Hour:
		return fmt.Errorf("sendwindow: Close %v must be after Open %v and at most 24h", w.Close, w.Open)
	case w.Country != "" && (len(w.Country) != 2 || strings.ToUpper(w.Country) != w.Country):
		return fmt.Errorf("sendwindow: Country %q must be an ISO 3166-1 alpha-2 code in capitals", w.Country)
	}
	return nil
}

// matches reports whether w holds a message of class to country.
func (w Window) matches(class record.PriceClass, country string) bool {
	return (w.Class == "" || w.Class == class) && (w.Country == "" || w.Country == country)
}

// location returns the zone w is kept in for recipient to.
func (w Window) location(to string) *time.Location {
	if w.Location != nil {
		return w.Location
	}
	if w.Zone != nil {
		if loc := w.Zone(to); loc != nil {
			return loc
		}
	}
	return time.UTC
}

// next returns the first instant at or after now inside w, for recipient
// to.
func (w Window) next(to string, now time.Time) time.Time {
	local := now.In(w.location(to))
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, local.Location())
	since := local.Sub(midnight)
	switch {
	case since < w.Open:
		return at(midnight, w.Open)
	case since < w.Close:
		return now
	}
	next := midnight.AddDate(0, 0, 1)
	return at(time.Date(next.Year(), next.Month(), next.Day(), 0, 0, 0, 0, next.Location()), w.Open)
}

// at is midnight plus d of wall-clock time, so that a window's 09:00 stays
// 09:00 on a day a zone changes its clocks.
func at(midnight time.Time, d time.Duration) time.Time {
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	return time.Date(midnight.Year(), midnight.Month(), midnight.Day(), h, m, s, int(d%time.Second), midnight.Location())
}

// Rules are the windows of a channel; the first that matches a message
// applies, and a message no window matches may go at any time. A nil
// Rules holds nothing.
type Rules []Window

// Check reports the first bad window, naming its index, or nil.
func (r Rules) Check() error {
	for i, w := range r {
		if err := w.Check(); err != nil {
			return fmt.Errorf("window %d: %w", i, err)
		}
	}
	return nil
}

// For returns the function a channel puts on an envelope of class to
// country for recipient to (notify.Envelope.Window): the first instant at
// or after now at which the message may go. It returns nil when no
// window applies, so that the Notifier skips the question.
func (r Rules) For(class record.PriceClass, country, to string) func(now time.Time) time.Time {
	for _, w := range r {
		if w.matches(class, country) {
			return func(now time.Time) time.Time { return w.next(to, now) }
		}
	}
	return nil
}
