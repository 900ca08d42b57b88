package world

import (
	"time"

	"github.com/nyaruka/phonenumbers"
)

// TimeZone returns the time zone of an E.164 number, as libphonenumber
// knows it: the first of its zones when its country has several (the
// United States' numbers name their area's), or nil when the number does
// not parse, its zone is unknown, or the zone database lacks it. It suits
// sendwindow.Window.Zone, for quiet hours in each recipient's own night.
// It is safe for concurrent use. It reads the zone database each call
// (time.LoadLocation), tens of microseconds: cheap beside a send.
func TimeZone(number string) *time.Location {
	n, err := phonenumbers.Parse(number, "")
	if err != nil {
		return nil
	}
	names, err := phonenumbers.GetTimezonesForNumber(n)
	if err != nil || len(names) == 0 || names[0] == "Etc/Unknown" {
		return nil
	}
	loc, err := time.LoadLocation(names[0])
	if err != nil {
		return nil
	}
	return loc
}
