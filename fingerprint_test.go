package notify_test

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/record"
)

func fingerprintOf(r notify.Request) string {
	h := sha256.New()
	r.Fingerprint(h)
	return hex.EncodeToString(h.Sum(nil))
}

// TestFingerprintCoversEveryContentField changes each field of each
// request type, one at a time, and wants a new fingerprint: a field added
// later and forgotten in its fingerprint method would let a reused
// idempotency key pass for another message.
func TestFingerprintCoversEveryContentField(t *testing.T) {
	changed := 0
	for _, base := range []func() notify.Request{
		func() notify.Request { return &sms.Request{To: "9876543210", Variables: record.Vars{"A": "1"}} },
		func() notify.Request { return &email.Request{To: "a@example.com", Variables: record.Vars{"A": "1"}} },
		func() notify.Request { return &chat.Request{To: "9876543210", Variables: record.Vars{"A": "1"}} },
		func() notify.Request { return &otp.Request{To: "9876543210"} },
	} {
		want := fingerprintOf(base())
		typ := reflect.TypeOf(base()).Elem()
		for i := range typ.NumField() {
			name := typ.Name() + "." + typ.Field(i).Name
			switch typ.Field(i).Name {
			case "Account", "IdempotencyKey":
				continue // not the request's content
			}
			req := base()
			f := reflect.ValueOf(req).Elem().Field(i)
			if !changeField(f) {
				t.Fatalf("%s: a %s field; teach this test about it", name, f.Kind())
			}
			if fingerprintOf(req) == want {
				t.Errorf("changing %s leaves the fingerprint as it was", name)
			}
			changed++
		}
	}
	if changed < 30 {
		t.Fatalf("only %d fields were tried", changed)
	}
}

// changeField changes f, a request's field: a string gains a letter, a
// map of strings gets a new value for key "A", a slice gains an element
// whose strings are "x" and whose byte slices hold "x". It reports false
// for a kind it cannot change.
func changeField(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Map:
		if f.Type().Key().Kind() != reflect.String || f.Type().Elem().Kind() != reflect.String {
			return false
		}
		m := reflect.MakeMap(f.Type())
		m.SetMapIndex(reflect.ValueOf("A").Convert(f.Type().Key()), reflect.ValueOf("2").Convert(f.Type().Elem()))
		f.Set(m)
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Uint8 {
			f.SetBytes(append(f.Bytes(), 'x'))
			return true
		}
		e := reflect.New(f.Type().Elem()).Elem()
		if !changeField(e) {
			return false
		}
		f.Set(reflect.Append(f, e))
	case reflect.Struct:
		for i := range f.NumField() {
			if g := f.Field(i); g.CanSet() && (g.Kind() == reflect.String || g.Kind() == reflect.Slice && g.Type().Elem().Kind() == reflect.Uint8) {
				changeField(g)
			}
		}
	case reflect.Int:
		f.SetInt(f.Int() + 1)
	default:
		return false
	}
	return true
}

// Recipients are normalised: the same number or address written another
// way is the same request.
func TestFingerprintNormalisesTheRecipient(t *testing.T) {
	if fingerprintOf(&sms.Request{To: "+91 98765 43210"}) != fingerprintOf(&sms.Request{To: "9876543210"}) {
		t.Error("+91 98765 43210 and 9876543210 differ")
	}
	if fingerprintOf(&email.Request{To: " a@example.com "}) != fingerprintOf(&email.Request{To: "a@example.com"}) {
		t.Error("an address with spaces around differs")
	}
	if fingerprintOf(&sms.Request{To: "9876543210", Message: "ab"}) == fingerprintOf(&sms.Request{To: "9876543210a", Message: "b"}) {
		t.Error("fields run into each other")
	}
}
