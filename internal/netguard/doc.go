// Package netguard keeps user-supplied URLs from reaching private networks
// (server-side request forgery).
//
// Two layers work together:
//
//   - CheckURL validates a URL before it is accepted: https only, no
//     userinfo, no IP literal in any spelling (dotted, integer, octal, hex,
//     bracketed IPv6), no local-only names (localhost, *.local, single
//     labels), and every address the name resolves to must be public.
//   - Client and Open fetch through an http.Client that checks every
//     address again at dial time, and dials only the addresses it checked,
//     so a name that resolves to a public address when CheckURL runs and to
//     a private one a moment later (DNS rebinding) is still refused. The
//     client uses no proxy, re-checks every redirect, limits redirects,
//     bounds the body size and has timeouts.
//
// "Public" means outside every special-purpose range of the IANA IPv4 and
// IPv6 registries: loopback, private (RFC 1918, fc00::/7), link-local,
// shared address space (CGNAT, 100.64.0.0/10), unspecified, "this network"
// (0.0.0.0/8), multicast, broadcast and other reserved space,
// documentation and benchmarking ranges, and IPv4 addresses embedded in
// IPv6 (IPv4-mapped, NAT64) whose IPv4 part is not public.
//
// A refusal (*Error) says which rule refused the URL, such as "host
// \"intra.example.com\" resolves to a private address", and never the
// address the host resolved to: the message goes back to whoever sent the
// URL, and repeating the address would let them map names of the internal
// network through the server's resolver. A lookup that fails because the
// resolver failed (a timeout, SERVFAIL) says nothing about the URL, so it
// is not a refusal but a temporary error, notify.CodeUnavailable; only a
// name that does not exist (NXDOMAIN, no address) is refused.
//
// The zero Config blocks all of that. Config.Allow exists for tests that
// must fetch from a server on loopback; production code leaves it nil.
package netguard
