// Package vendorhttptest is the skeleton of a fake vendor, the part every
// <name>test package of an HTTP provider shares, so that each fake is the
// vendor's wire format and nothing else:
//
//   - Faults, embedded in a fake's Server, gives it the faults every
//     vendor's network path has: a proxy's error page before the vendor
//     sees a request (FailNextHTTP) or after it accepted one
//     (FailNextHTTPAfterAccept), a connection dropped after an accept
//     (BreakNext), and latency (SetLatency). The fake's handler asks
//     Wait, Proxied and AfterAccept at the points of its flow where a real
//     path would fail.
//   - Post delivers a delivery report to a receiver as a vendor does, and
//     CallbackError is the receiver's refusal.
//   - ReplyJSON, ProxyError and Drop answer as a vendor, a proxy and a
//     broken connection do.
//   - Body is a request body that counts what was read of it, to show
//     that a receiver refused a forgery without reading it.
//
// It imports net/http/httptest's world only through the fakes that use
// it: a provider's own package never imports this one.
package vendorhttptest
