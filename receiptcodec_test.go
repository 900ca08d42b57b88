package notify

import (
	"reflect"
	"testing"
	"time"

	"github.com/notifykit/notify/record"
)

// FuzzDecodeReceipt: whatever a store.Keys hands back, decodeReceipt
// either refuses it or reads a receipt that survives its own round trip.
func FuzzDecodeReceipt(f *testing.F) {
	r := &Receipt{MessageID: "m1", Account: "a", Kind: "otp", Status: record.StateSent,
		Cost: Money{Minor: 40, Currency: record.INR()}, CreatedAt: time.Unix(1700000000, 5).UTC(),
		Legs: []*Receipt{{MessageID: "m2", Kind: "sms", ErrorCode: CodeRejected}}}
	body, err := encodeReceipt(r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"legs":[null,{"legs":[{}]}]}`))
	f.Add([]byte(`{"cost":{"minor":-9223372036854775808}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeReceipt(body)
		if err != nil {
			return
		}
		again, err := encodeReceipt(r)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		r2, err := decodeReceipt(again)
		if err != nil {
			t.Fatalf("decode of our own encoding: %v", err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the receipt:\n%+v\n%+v", r, r2)
		}
	})
}

// TestReceiptRoundTrip: a receipt the Notifier completes a key with is
// the receipt a repeat gets, legs, money and times included.
func TestReceiptRoundTrip(t *testing.T) {
	r := &Receipt{MessageID: "m1", Account: "a", Kind: "otp", To: "+919876543210", Status: record.StateUnknown,
		Provider: "p", ProviderMessageID: "v1", Note: "n", Units: 2, Cost: Money{Minor: 40, Currency: record.INR()},
		Balance: Money{Minor: 960, Currency: record.INR()}, Metered: true, Attempts: 3, ErrorCode: CodeOutcomeUnknown,
		Error: "e", Domain: "d", IdempotencyKey: "k", CreatedAt: time.Unix(1700000000, 5).UTC(),
		SendAt: time.Unix(1700003600, 0).UTC(), Fallback: "m3",
		Legs: []*Receipt{{MessageID: "m2", Kind: "sms", Status: record.StateFailed, ErrorCode: CodeRejected,
			Cost: Money{Currency: record.INR()}, CreatedAt: time.Unix(1700000000, 6).UTC()}}}
	body, err := encodeReceipt(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeReceipt(body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
}

// TestEncodeReceiptRefusesWhatJSONCannotCarry: a receipt dated past year
// 9999 (a clock gone wrong) is an error, not a panic.
func TestEncodeReceiptRefusesWhatJSONCannotCarry(t *testing.T) {
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	body, err := encodeReceipt(&Receipt{CreatedAt: far})
	if err == nil {
		t.Fatalf("encodeReceipt of year 10000 = %s, want an error", body)
	}
}
