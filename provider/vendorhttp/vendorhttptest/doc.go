// Package vendorhttptest is the skeleton of a fake vendor, the part every
// <name>test package of an HTTP provider shares, so that each fake is the
// vendor's wire format and nothing else. A provider's own package never
// imports it (it brings net/http/httptest and testing).
//
// The fake's server:
//
//   - Loopback starts the fake's handler on a loopback httptest server and
//     gives the fake its Close and Client.
//   - Faults, embedded in the fake's Server, gives it the faults every
//     vendor's network path has: a proxy's error page before the vendor
//     sees a request (FailNextHTTP) or after it accepted one
//     (FailNextHTTPAfterAccept), a connection dropped after an accept
//     (BreakNext), and latency (SetLatency). The fake's handler asks Wait,
//     Proxied (or TakeProxyError) and AfterAccept at the points of its flow
//     where a real path would fail.
//   - ReplyJSON and ReplyJSONAs answer as a vendor, ProxyError as a proxy
//     in front of it, Drop as a broken connection.
//   - Log keeps what the fake took (its getters are one line), IDs makes
//     fresh message IDs in the vendor's style, and Locked and WithLock are
//     the bodies of getters and setters of state the handler writes.
//
// The fake's reports:
//
//   - Queue holds the reports the fake owes a receiver until the test
//     flushes it, so that the test decides when they arrive and needs no
//     sleeps; Post delivers one as the vendor does, and CallbackError is
//     the receiver's refusal. IsHTTPURL checks a callback URL.
//
// The tests:
//
//   - Exchange and Do send a fake or a receiver a raw request (a forgery,
//     an oversized body, a wrong method) and read the answer; Body is a
//     request body that counts what was read of it, to show that a
//     receiver refused a forgery without reading it.
//   - CheckError holds a provider's decoding of an answer (its
//     FuzzDecodeAnswer) to the rules of the outcome: a vendor's own
//     refusal is certain, an answer the caller says leaves the outcome
//     open (such as a proxy's 5xx) unknown, no secret in the text.
//   - Paths serves a handler that reports the paths it was asked for, and
//     ClosedAddr is an address nothing listens on, for the base-URL and
//     transport tests.
package vendorhttptest
