package httpapi

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/notifykit/notify"
)

func TestPreferAsync(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{nil, false},
		{[]string{"respond-async"}, true},
		{[]string{"Respond-Async"}, true},
		{[]string{" respond-async ; foo=bar"}, true},
		{[]string{"return=minimal, respond-async"}, true},
		{[]string{"return=minimal", "wait=10, RESPOND-ASYNC"}, true},
		{[]string{`x="a, b", respond-async`}, true},
		{[]string{"respond-async=1"}, true}, // RFC 7240 ignores its value
		{[]string{"return=minimal"}, false},
		{[]string{"respond-asynchronous"}, false},
		{[]string{"async"}, false},
		{[]string{`foo="respond-async"`}, false},
		{[]string{`foo="x, respond-async, y"`}, false},
		{[]string{`foo="x\", respond-async"`}, false},
		{[]string{"foo;respond-async"}, false},
		{[]string{""}, false},
	} {
		hd := http.Header{}
		for _, l := range c.lines {
			hd.Add("Prefer", l)
		}
		if got := preferAsync(hd); got != c.want {
			t.Errorf("Prefer %q: %v, want %v", c.lines, got, c.want)
		}
	}
}

func TestSendAtField(t *testing.T) {
	ist := time.FixedZone("", 5*3600+1800)
	for _, c := range []struct {
		body string
		want time.Time
		bad  bool
	}{
		{`{"to":"9876543210","message":"x"}`, time.Time{}, false},
		{`{"to":"9876543210","message":"x","send_at":null}`, time.Time{}, false},
		{`{"to":"9876543210","message":"x","send_at":""}`, time.Time{}, false},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T09:30:00+05:30"}`, time.Date(2026, 12, 1, 9, 30, 0, 0, ist), false},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T04:00:00.250Z"}`, time.Date(2026, 12, 1, 4, 0, 0, 250e6, time.UTC), false},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T04:00:00"}`, time.Time{}, true},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01 04:00:00Z"}`, time.Time{}, true},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01"}`, time.Time{}, true},
		{`{"to":"9876543210","message":"x","send_at":"2026-13-01T04:00:00Z"}`, time.Time{}, true},
		// RFC 3339 offsets run to 23:59; time.Parse takes 24:00 and 23:60.
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T09:30:00+24:00"}`, time.Time{}, true},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T09:30:00-24:00"}`, time.Time{}, true},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T09:30:00+23:60"}`, time.Time{}, true},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T09:30:00+23:59"}`, time.Date(2026, 12, 1, 9, 30, 0, 0, time.FixedZone("", 23*3600+59*60)), false},
		{`{"to":"9876543210","message":"x","send_at":"2026-12-01T09:30:00-00:00"}`, time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), false},
		{`{"to":"9876543210","message":"x","send_at":1764561600}`, time.Time{}, true},
		{`{"to":"9876543210","message":"x","send_at":true}`, time.Time{}, true},
	} {
		_, at, err := decodeSMSAt([]byte(c.body), "a", Header{})
		if c.bad {
			var e *notify.Error
			if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "send_at" {
				t.Errorf("%s: %v, want a field error on send_at", c.body, err)
			}
			continue
		}
		if err != nil || !at.Equal(c.want) {
			t.Errorf("%s: %v %v, want %v", c.body, at, err, c.want)
		}
	}
	// The OTP endpoints refuse any send_at, with the other bad fields.
	for _, body := range []string{`{"to":"1","otp":"482915","send_at":"2026-12-01T04:00:00Z"}`, `{"to":"1","otp":"482915","send_at":"x"}`} {
		_, err := decodeOTP([]byte(body), "a", Header{})
		var e *notify.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "send_at" {
			t.Errorf("/send-otp %s: %v", body, err)
		}
		_, _, err = decodeChatOTP([]byte(body), "a", Header{})
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "send_at" {
			t.Errorf("/messenger/send-otp %s: %v", body, err)
		}
	}
}
