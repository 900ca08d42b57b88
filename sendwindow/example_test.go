package sendwindow_test

import (
	"fmt"
	"time"

	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/sendwindow"
)

// An SMS channel that keeps TRAI's hours and, for every other
// promotional message, quiet hours from 21:00 to 08:00 UTC.
func Example() {
	rules := sendwindow.Rules{
		sendwindow.TRAI(),
		{Name: "quiet hours", Class: record.Promotional, Open: 8 * time.Hour, Close: 21 * time.Hour},
	}
	if _, err := sms.New(sms.Config{Provider: memprovider.New("mem"), Windows: rules}); err != nil {
		fmt.Println(err)
		return
	}
	at := time.Date(2026, 11, 26, 16, 30, 0, 0, time.UTC) // 22:00 in India
	fmt.Println(rules.For(record.Promotional, "IN", "+919876543210")(at).UTC())
	// Output: 2026-11-27 03:30:00 +0000 UTC
}
