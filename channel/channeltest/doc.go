// Package channeltest is the conformance kit every notify.Channel runs, as
// provider/providertest is the providers' and store/storetest the stores':
// the author of a channel fills a Harness that declares what the channel
// can do (the channel, an account, requests it must take and requests it
// must refuse, the fakes it delivers through, and the optional abilities
// it has) and calls Run from a test, usually conformance_test.go:
//
//	func TestConformance(t *testing.T) {
//		p := memprovider.New("push")
//		ch := pushchannel.New(p)
//		channeltest.Run(t, channeltest.Harness{
//			Channel:   ch,
//			Account:   &notify.Account{ID: "acme", Currency: record.INR()},
//			Valid:     []notify.Request{&pushchannel.Request{Account: "acme", Token: token, Body: "Hi"}},
//			Invalid:   []channeltest.Invalid{{Name: "no body", Request: noBody, Fields: []string{"body"}}},
//			Providers: []channeltest.Fake{p},
//			Codec:     ch, // the channel's notify.RequestCodec, declared
//		})
//	}
//
// The kit discovers nothing: an ability the harness does not declare
// (Codec, Reports, Batch) is not checked, and one it declares is checked
// through the value given, whatever the channel's own type implements.
//
// Run checks what the contracts of package notify promise, and nothing
// more (each check names the rule it enforces when it fails):
//
//   - Kind: Channel.Kind is not empty, and every request of the harness is
//     of that kind (notify.Channel.Kind) and, as a harness rule, of
//     Harness.Account.
//   - Fingerprint: a request's Fingerprint writes the same bytes each time
//     (notify.Request.Fingerprint must depend on the request alone).
//   - Prepare, on each valid request: it succeeds with an Envelope whose
//     header the channel fills (notify.Channel.Prepare): Kind the channel's,
//     To set, Provider one of Harness.Providers, Providers nil or starting
//     with Provider and naming only Harness.Providers (notify.Envelope),
//     Units at least 1, Class record.Transactional or record.Promotional,
//     Content set; Resend holds none of Harness.Secrets (notify.Envelope.Resend).
//     Prepare is deterministic (twice, and from several goroutines at
//     once, the same Envelope) and has no side effects: no fake is called,
//     and neither the request (its Fingerprint) nor the account changes.
//   - Prepare, on each invalid request: a CodeInvalidArgument *notify.Error
//     whose Fields name exactly the fields the harness lists, each with a
//     rule (a non-empty Message), the same each time, holding none of
//     Harness.Secrets (notify.Error), with no fake called.
//   - Deliver, on each valid request's envelope, for env.Provider and each
//     other provider env.Providers names (the Notifier delivers a copy
//     naming the next): exactly that fake takes the message, once; the
//     Result has a ProviderMessageID and names that provider or leaves
//     Provider empty (notify.Result); the envelope is not changed
//     (notify.Envelope). With an ended context nothing is taken and Deliver
//     fails (notify.Channel.Deliver: it must honour ctx). When the fake
//     refuses for good (CodeRejected) the error is a certain, permanent
//     refusal and no other fake is called; when its answer is lost
//     (CodeOutcomeUnknown) the error is an unknown outcome and no other fake
//     is called; when it refuses for now (CodeUnavailable) the error is a
//     certain refusal, or another fake took the message and the Result
//     names it (a channel tries a second provider only after a certain,
//     temporary refusal). No error holds a secret.
//   - Codec (Harness.Codec, notify.RequestCodec), on each valid request:
//     EncodeRequest succeeds without changing the request, and
//     DecodeRequest gives back a request of the same Kind, AccountID, Key
//     and Fingerprint, which Prepare turns into the same Envelope (the
//     codec is lossless); each of Harness.Stored, bytes an earlier
//     version of the codec wrote, decodes the same way to its request
//     (Decode must accept whatever Encode wrote in earlier versions).
//   - Reports (Harness.Reports, notify.ReportHandler), on a record made
//     from each valid request's envelope and a failed report: Refund gives
//     one answer however often and from however many goroutines it is
//     asked, for a record sent or of unknown outcome; when the envelope
//     has a Resend, Failed reads it without error, and the request it
//     returns, if any, has the key it was given and is the same request
//     each time it is asked.
//   - Batch (Harness.Batch, notify.BatchDeliverer): MaxBatch is at least 1;
//     DeliverBatch of up to MaxBatch envelopes of Harness.BatchRequests
//     (which differ only in To and ID) answers one Result per envelope, in
//     order, each with a ProviderMessageID and naming their provider or
//     none, the fake of their provider taking each message once, and with
//     an ended context takes nothing and fails.
//
// What no kit can see is left to the channel's own tests: that Prepare
// does not retain the request, the channel's own rules and wording, its
// routing, its template rendering. A harness should still pass requests
// that exercise each route and each optional part of the content, so that
// the codec and the envelope checks see them.
//
// Run's subtests run one after another, since they count the fakes'
// messages: nothing else may use the fakes meanwhile. The kit makes no
// network call of its own and never sleeps; against in-memory fakes it
// takes milliseconds. This package's channeltest_test.go holds a
// reference harness around a small channel, and the broken channels the
// kit must catch.
package channeltest
