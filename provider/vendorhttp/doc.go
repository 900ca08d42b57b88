// Package vendorhttp is the kit every HTTP provider of notify is built on,
// and that a provider written outside this module can use the same way: the
// one request a provider sends to its vendor, the classification of what
// can go wrong on the way, and the receiving end of the vendor's signed or
// token-authenticated delivery reports. With it a provider is its wire
// format and nothing else. Package vendorhttptest holds the fake-server
// skeleton for a provider's <name>test package.
//
// # Sending: the outcome of a request
//
// What matters to the Notifier is the outcome (notify.OutcomeOf): whether
// the vendor may have the message. Do classifies every failure one way for
// every provider:
//
//   - Before any I/O (a context that has already ended, a URL that cannot
//     be built from the provider's configuration or that net/http
//     cannot send to, a header name or value HTTP forbids) the vendor
//     certainly has nothing: CodeUnavailable for the
//     ended context (errors.Is still sees it), CodeRejected naming the
//     configuration for the others.
//   - The request was certainly not written whole (the dial was refused,
//     DNS or TLS failed, the context ended before a connection was had or
//     while the request was still being written): CodeUnavailable, a
//     certain and temporary refusal, which the Notifier retries.
//   - The request may have been written whole and no complete answer came
//     back (a timeout, a reset or a closed connection after it, an answer
//     cut short, unreadable or over Request.Limit): CodeOutcomeUnknown.
//     The vendor may have accepted the message, so the charge stands and
//     it is never retried. An ended context stays visible to errors.Is.
//
// Whether the request was written is learned from net/http's client trace
// (httptrace GetConn, GotConn and WroteRequest), which http.Transport
// reports: the request was certainly not written when the
// transport asked for a connection and every attempt that got one
// reported that its writing failed. WroteRequest comes from the
// transport's writer and may arrive after the client has returned (a
// large body is written through to the socket before it is reported), so
// Do waits a moment for it; without it, or from a transport that reports
// nothing, there is no proof that the request was not written, and the
// outcome is unknown.
//
// What the answer means is for the provider to say, by the rule of the
// notify.Provider contract: an answer in the vendor's own error format is
// a certain refusal whatever its HTTP status. Providers pass anything that
// is not the vendor's own to Foreign (a 429 is a rate limit with
// RetryAfter; a 5xx or an unreadable 2xx is unknown; the rest a refusal),
// or to Unknownf; RefusalCode is the code of a refusal in the vendor's
// format whose error code the provider does not know. ReadOnly turns an
// unknown outcome into CodeUnavailable for a request that sends nothing,
// such as a balance query.
//
// A provider holds a Conn: the HTTP client its Config gave, or NewClient's
// (bounded, kept alive, never following a redirect), which its Close
// releases. CheckSecret and CheckBaseURL check a Config's credential and
// address (msg91, smsgateway and twilio use them; cloudchat, qrchat and
// gateway still check theirs by their own, older rules); TrimEndpoint takes a copied
// endpoint path off a base URL, and MaxBatch reads a Config's batch size.
// A provider whose vendor takes one message to many recipients in a
// request checks the batch with a Batch (size, one message, no recipient
// twice) and answers with its Results.
//
// Messages never contain the request's URL (it may carry credentials) or
// headers; CleanText, Cause and Clip keep vendor text fit for an error
// message.
//
// # Receiving: delivery reports
//
// A receiver is reachable by anyone, and a forged request must cost it as
// little as possible. Receiver.Read refuses on the request's headers alone
// (a missing or malformed signature, a content type or a declared length
// it will not take) before it reads a byte of the body, and the refusal
// closes the connection, so that net/http does not read the body either
// to keep the connection alive. A WebhookBody says what a receiver
// requires: the vendor's HMAC Signature under a secret, JSON, a bound
// (the vendor's documented maximum, or MaxWebhookBody), and a Budget of
// bytes of bodies not yet authenticated (NewUnverifiedBudget), so that a
// flood of forgeries does not slow sends. A source (an IP address) that
// is refused more than HoldAfter times in a second has its further
// refusals answered after DefaultHoldFor, so that clients posting
// forgeries as fast as they are answered get a handful answered a second
// per connection; genuine reports are never held (BenchmarkWebhookFlood's
// 16-connections row). CheckSignedReceiver checks the
// configuration of such a receiver. A vendor that signs nothing is
// authenticated by a secret token in the callback URL (CheckTokenReceiver,
// Receiver.AdmitToken); TokenWebhook is the whole receiver for one, given
// the vendor's wire format.
//
// Loose report bodies are read into Entries (EntryShape.ReadEntries):
// flat maps of a report's fields, whatever the vendor's JSON or form
// shape. Receiver.Deliver hands the reports to a notify.Reporter and
// answers the vendor with the status that tells it whether to send again;
// ReportTime reads the times vendors write.
package vendorhttp
