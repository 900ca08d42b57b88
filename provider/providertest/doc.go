// Package providertest is the conformance suite every notify.Provider
// runs, in the manner of gocloud.dev's drivertest packages: the author of
// a provider wires it to a fake of its vendor (an httptest.Server speaking
// the vendor's wire format, an in-process SMTP server, ...) in a Harness,
// and calls Run from a test, usually conformance_test.go:
//
//	func TestConformance(t *testing.T) {
//		vendor := newFakeVendor(t) // stopped by t.Cleanup
//		providertest.Run(t, providertest.Harness{
//			Provider: mustNew(t, vendor.URL, "test-key"),
//			Envelope: func(i int) *notify.Envelope { return validSMS(i) },
//			Secrets:  []string{"test-key", "482915"},
//			FailNext: vendor.failNext,
//			SetLatency: vendor.setLatency,
//			Received: vendor.received,
//		})
//	}
//
// The suite checks, through the notify.Provider interface only:
//
//   - Name is non-empty and stable;
//   - a successful Send returns a non-empty ProviderMessageID;
//   - a context that has already ended gives an error satisfying
//     errors.Is with context.Canceled or context.DeadlineExceeded, and the
//     vendor receives nothing;
//   - a context that ends while the vendor is slow makes Send return
//     promptly with the context's error;
//   - an injected vendor failure (Harness.FailNext) gives the outcome
//     that money and retries follow (notify.OutcomeOf): a temporary
//     failure is retryable (notify.IsRetryable), a rate limit is
//     CodeRateLimited and a permanent one CodeRejected or
//     CodeInvalidArgument, all certainly not accepted and with nothing
//     received by the vendor; a lost answer (AnswerLost: the vendor took
//     the message, then the connection broke) is an unknown outcome,
//     never retryable, with the message received exactly once; the
//     vendor's own error answer on an HTTP 5xx, with a code the provider
//     need not know (VendorErrorOn5xx), is a certain refusal, never an
//     unknown outcome; and the vendor works again for the next send;
//   - an envelope without content (Content nil) makes Send
//     fail with CodeInvalidArgument or CodeRejected, or succeed with a
//     ProviderMessageID (capture and log providers), never panic;
//   - 32 goroutines sending at once all succeed, with distinct
//     ProviderMessageIDs (run the tests with -race);
//   - no error text and no Result field contains a secret the harness
//     declares.
//
// A fake HTTP vendor simulates AnswerLost by taking the message and then
// hijacking the connection and closing it (http.Hijacker), as a vendor
// that crashes or a network that breaks after the request does.
//
// Hooks a fake vendor cannot provide are left nil; the subtests that need
// them are skipped with the reason. The suite takes well under a second
// against a prompt fake. This package's http_test.go holds a reference
// harness: a small HTTP provider and its fake vendor on an httptest.Server
// with every hook.
package providertest
