package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/otp"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/errtext"
)

// Goroutines is how many goroutines the concurrent subtests run.
const Goroutines = 64

// newName returns a random name with the given prefix.
func newName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return prefix + "-" + hex.EncodeToString(b[:])
}

// wantCode fails t unless err has the code.
func wantCode(t *testing.T, what string, err error, code notify.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	if got := notify.CodeOf(err); got != code {
		t.Fatalf("%s: code %q (%v), want %q", what, got, err, code)
	}
}

// wantShownToSender fails t when err's text names a package: a sender
// sees this error, through the HTTP API too.
func wantShownToSender(t *testing.T, what string, err error) {
	t.Helper()
	if msg, bad := errtext.NamesPackage(err); bad {
		t.Errorf("%s: error %q names a package; a sender sees it", what, msg)
	}
}

func runAll(t *testing.T, tests []subtest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}

type subtest struct {
	name string
	fn   func(*testing.T)
}

// sampleReceipt returns a receipt with every field set, for round trips.
// Its times are in UTC at microsecond precision.
func sampleReceipt(account string) *notify.Receipt {
	inr := notify.INR()
	at := time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)
	leg := func(kind notify.Kind, status notify.MessageState) *notify.Receipt {
		return &notify.Receipt{
			MessageID: newName("leg"), Account: account, Kind: kind, To: "9876543210",
			Status: status, Provider: "prov-" + string(kind), ProviderMessageID: "pm-" + string(kind),
			Units: 1, Cost: notify.Money{Minor: 20, Currency: inr}, Balance: notify.Money{Minor: 99960, Currency: inr},
			Metered: true, Attempts: 2, CreatedAt: at,
		}
	}
	failed := leg(chat.Kind, notify.StateFailed)
	failed.Gateway = "qr"
	failed.ErrorCode = notify.CodeUnavailable
	failed.Error = "unavailable: session down"
	failed.Cost = notify.Money{Currency: inr}
	return &notify.Receipt{
		MessageID:         newName("msg"),
		Account:           account,
		Kind:              otp.Kind,
		To:                "9876543210",
		Status:            notify.StateSent,
		Provider:          "smsgateway",
		ProviderMessageID: "pm-1",
		Gateway:           "cloud",
		Note:              "chat leg failed over",
		Units:             2,
		Cost:              notify.Money{Minor: 40, Currency: inr},
		Balance:           notify.Money{Minor: 99960, Currency: inr},
		Metered:           true,
		Attempts:          3,
		ErrorCode:         "",
		Domain:            "shop.example",
		IdempotencyKey:    newName("idem"),
		CreatedAt:         at,
		Legs:              []*notify.Receipt{leg(sms.Kind, notify.StateSent), failed},
	}
}

// diffReceipt describes how got differs from want, or returns "". Times
// compare by instant; a nil and an empty Legs are the same.
func diffReceipt(got, want *notify.Receipt) string {
	var d []string
	diffReceiptInto(&d, "", got, want)
	return strings.Join(d, "; ")
}

func diffReceiptInto(d *[]string, path string, got, want *notify.Receipt) {
	if got == nil || want == nil {
		if got != want {
			*d = append(*d, fmt.Sprintf("%sreceipt = %v, want %v", path, got, want))
		}
		return
	}
	field := func(name string, g, w any) {
		if g != w {
			*d = append(*d, fmt.Sprintf("%s%s = %v, want %v", path, name, g, w))
		}
	}
	field("MessageID", got.MessageID, want.MessageID)
	field("Account", got.Account, want.Account)
	field("Kind", got.Kind, want.Kind)
	field("To", got.To, want.To)
	field("Status", got.Status, want.Status)
	field("Provider", got.Provider, want.Provider)
	field("ProviderMessageID", got.ProviderMessageID, want.ProviderMessageID)
	field("Gateway", got.Gateway, want.Gateway)
	field("Note", got.Note, want.Note)
	field("Units", got.Units, want.Units)
	field("Cost", got.Cost, want.Cost)
	field("Balance", got.Balance, want.Balance)
	field("Metered", got.Metered, want.Metered)
	field("Attempts", got.Attempts, want.Attempts)
	field("ErrorCode", got.ErrorCode, want.ErrorCode)
	field("Error", got.Error, want.Error)
	field("Domain", got.Domain, want.Domain)
	field("IdempotencyKey", got.IdempotencyKey, want.IdempotencyKey)
	if !got.CreatedAt.Equal(want.CreatedAt) {
		*d = append(*d, fmt.Sprintf("%sCreatedAt = %v, want %v", path, got.CreatedAt, want.CreatedAt))
	}
	if len(got.Legs) != len(want.Legs) {
		*d = append(*d, fmt.Sprintf("%s%d legs, want %d", path, len(got.Legs), len(want.Legs)))
		return
	}
	for i := range want.Legs {
		diffReceiptInto(d, fmt.Sprintf("%sLegs[%d].", path, i), got.Legs[i], want.Legs[i])
	}
}
