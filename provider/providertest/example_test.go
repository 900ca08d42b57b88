package providertest_test

import (
	"fmt"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/provider/providertest"
)

// A harness for memprovider, whose "vendor" is the provider itself. In a
// test, pass it to providertest.Run(t, h). See http_test.go in this
// package for a harness around an httptest.Server.
func ExampleHarness() {
	p := memprovider.New("mem")
	h := providertest.Harness{
		Provider: p,
		Envelope: func(i int) *notify.Envelope {
			return &notify.Envelope{
				Kind:    sms.Kind,
				To:      fmt.Sprintf("98765%05d", i),
				Content: &sms.Message{Route: sms.RouteSMS, Text: "hello"},
			}
		},
		FailNext: func(f providertest.Failure) bool {
			switch f {
			case providertest.Temporary:
				p.FailNext(1, notify.CodeUnavailable)
			case providertest.Permanent:
				p.FailNext(1, notify.CodeRejected)
			default:
				return false // this fake cannot rate-limit, lose answers or answer HTTP: those subtests are skipped
			}
			return true
		},
		SetLatency: p.SetLatency,
		Received:   p.Len,
	}
	fmt.Println(h.Provider.Name(), h.Envelope(7).To)
	// Output: mem 9876500007
}

func ExampleFailure() {
	for _, f := range []providertest.Failure{providertest.Temporary, providertest.Permanent, providertest.RateLimited, providertest.AnswerLost, providertest.VendorErrorOn5xx} {
		fmt.Println(f)
	}
	// Output:
	// temporary
	// permanent
	// rate-limited
	// answer-lost
	// vendor-error-on-5xx
}
