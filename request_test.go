package notify

import (
	"reflect"
	"testing"
)

func TestValidOTP(t *testing.T) {
	for code, want := range map[string]bool{
		"1234": true, "12345678": true, "482913": true,
		"": false, "123": false, "123456789": false, "12a4": false, " 1234": false, "१२३४": false,
	} {
		if got := ValidOTP(code); got != want {
			t.Errorf("ValidOTP(%q) = %v, want %v", code, got, want)
		}
	}
}

// TestFingerprintCoversEveryContentField changes each field of each
// request type, one at a time, and wants a new fingerprint: a field added
// later and forgotten in its fingerprint method would let a reused
// idempotency key pass for another message.
func TestFingerprintCoversEveryContentField(t *testing.T) {
	changed := 0
	for _, base := range []func() fingerprinter{
		func() fingerprinter { return &SMSRequest{To: "9876543210", Variables: Vars{"A": "1"}} },
		func() fingerprinter { return &EmailRequest{To: "a@example.com", Variables: Vars{"A": "1"}} },
		func() fingerprinter { return &ChatRequest{To: "9876543210", Variables: Vars{"A": "1"}} },
		func() fingerprinter { return &OTPRequest{To: "9876543210"} },
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
			switch f.Kind() {
			case reflect.String:
				f.SetString(f.String() + "x")
			case reflect.Map:
				f.Set(reflect.ValueOf(Vars{"A": "2"}))
			default:
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

// Recipients are normalised: the same number or address written another
// way is the same request.
func TestFingerprintNormalisesTheRecipient(t *testing.T) {
	if fingerprintOf(&SMSRequest{To: "+91 98765 43210"}) != fingerprintOf(&SMSRequest{To: "9876543210"}) {
		t.Error("+91 98765 43210 and 9876543210 differ")
	}
	if fingerprintOf(&EmailRequest{To: " a@example.com "}) != fingerprintOf(&EmailRequest{To: "a@example.com"}) {
		t.Error("an address with spaces around differs")
	}
	if fingerprintOf(&SMSRequest{To: "9876543210", Message: "ab"}) == fingerprintOf(&SMSRequest{To: "9876543210a", Message: "b"}) {
		t.Error("fields run into each other")
	}
}
