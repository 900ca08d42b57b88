package channeltest

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/notifykit/notify"
)

// windowSamples are the instants at which two Envelope.Window functions
// are compared: every 5 hours over a week, so that every hour of the day
// and every weekday is met in some zone.
var windowSamples = func() []time.Time {
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)
	var out []time.Time
	for h := 0; h < 7*24; h += 5 {
		out = append(out, start.Add(time.Duration(h)*time.Hour))
	}
	return out
}()

// diffEnvelope names the fields in which a and b differ, or returns "".
// Every field of notify.Envelope is compared, deeply (Content by
// reflect.DeepEqual); a func field (Window) by whether it is set and by
// its answers at windowSamples.
func diffEnvelope(a, b *notify.Envelope) string {
	if a == nil || b == nil {
		if a == b {
			return ""
		}
		return "being nil"
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var diffs []string
	for i := range va.NumField() {
		name := va.Type().Field(i).Name
		fa, fb := va.Field(i), vb.Field(i)
		if !sameField(fa, fb) {
			diffs = append(diffs, fmt.Sprintf("%s (%s, then %s)", name, show(fa), show(fb)))
		}
	}
	return strings.Join(diffs, ", ")
}

// sameField reports whether two values of one Envelope field are equal.
func sameField(a, b reflect.Value) bool {
	if a.Kind() != reflect.Func {
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	if a.IsNil() || b.IsNil() {
		return a.IsNil() == b.IsNil()
	}
	wa, oka := a.Interface().(func(time.Time) time.Time)
	wb, okb := b.Interface().(func(time.Time) time.Time)
	if !oka || !okb {
		return true // a func of another shape: only whether it is set
	}
	for _, at := range windowSamples {
		if !wa(at).Equal(wb(at)) {
			return false
		}
	}
	return true
}

// show formats a field's value for a message, shortly; content is not
// shown (it may hold a one-time code).
func show(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Func:
		if v.IsNil() {
			return "nil"
		}
		return "set"
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return "a " + v.Elem().Type().String()
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return fmt.Sprintf("%d bytes", v.Len())
		}
	}
	return fmt.Sprintf("%v", v.Interface())
}

// cloneAccount returns a copy of a that shares nothing with it.
func cloneAccount(a *notify.Account) *notify.Account {
	c := *a
	c.Countries = slices.Clone(a.Countries)
	if a.Settings != nil {
		c.Settings = maps.Clone(a.Settings)
		for k, v := range c.Settings {
			c.Settings[k] = bytes.Clone(v)
		}
	}
	return &c
}

// diffAccount names what differs between the account as it was and as it
// is, or returns "".
func diffAccount(was, is *notify.Account) string {
	if reflect.DeepEqual(was, is) {
		return ""
	}
	va, vb := reflect.ValueOf(was).Elem(), reflect.ValueOf(is).Elem()
	var diffs []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			diffs = append(diffs, va.Type().Field(i).Name)
		}
	}
	return strings.Join(diffs, ", ")
}
