// Package gateway is a notify.Provider that sends through a remote
// notification gateway speaking the HTTP API of docs/api.md: the hosted
// service, or another instance of this module's examples/gateway. A host
// application can then keep its own Notifier, wallet and channels and use
// a remote gateway as the provider of every channel:
//
//	p, err := gateway.New(gateway.Config{
//		BaseURL: "https://gateway.example.com/api/v1",
//		APIKey:  os.Getenv("GATEWAY_KEY"),
//	})
//	smsCh, err := sms.New(sms.Config{Provider: p})
//
// # Mapping
//
// Each envelope becomes one request, authenticated with
// "Authorization: Bearer <APIKey>" and carrying Idempotency-Key: env.ID:
//
//   - SMS: POST /sms with to, route, sender_id and domain; message is the
//     rendered text on the sms and dlt routes (with dlt_template_id and
//     dlt_entity_id), and the code on the otp route, where the remote
//     renders its own OTP text.
//   - Chat: POST /messenger/send with to, gateway (the one the local
//     channel chose), type and domain, and the content as prepared: a
//     template as template_name, language, positional variables and
//     header_url; a file as media_url, file_name and message (the
//     caption); else message.
//   - E-mail: POST /email/send with to, subject, message (the HTML body, or
//     the text when there is none; the remote builds the text
//     alternative), from_name, reply_to, purpose and domain.
//
// The remote's message_id becomes Result.ProviderMessageID, and its gateway
// and note are passed on.
//
// The Notifier never retries a send whose outcome is unknown, so the
// Idempotency-Key is a second line of defence: if the same message does
// reach the remote twice (a retry after a certain refusal, a repeat by
// hand), a remote that keeps idempotency keys (ours does when it has a
// store.Keys) answers with the first receipt instead of sending
// again. The request carries no GetBody, so that net/http's Transport,
// which takes a POST with an Idempotency-Key for idempotent, never writes
// it again on its own after a connection failed mid-request; a failure
// before anything was written is retried by the Notifier instead.
//
// # Errors
//
// Every answer maps to one of notify.Provider's three outcomes. Only a
// 200 with success true and a message_id is accepted. A failure is a
// certain non-acceptance only when nothing reached the remote, when the
// remote's JSON error body (the format of httpapi) carries a code that
// proves it did not take the message (then the status is only checked to
// be 400 or more), or when a 4xx other than 409 comes without that body:
// a proxy or a wrong BaseURL refused the request before it got anywhere. Every other answer, whatever its status, is
// CodeOutcomeUnknown: the remote, or the vendor behind it, may have the
// message, so the charge stands and nothing retries it.
//
//	remote answer                        body error.code          outcome         local code
//	-----------------------------------  -----------------------  --------------  ------------------------------
//	200, success true, message_id        -                        accepted        Result (ProviderMessageID)
//	400 (any status >= 400)              invalid_argument         not accepted    InvalidArgument, with fields
//	401, 403                             unauthenticated,         not accepted    Rejected (check Config.APIKey)
//	                                     permission_denied
//	402                                  insufficient_funds       not accepted    Rejected (remote wallet top-up)
//	404, 405, 415                        not_found,               not accepted    Rejected (check Config.BaseURL)
//	                                     method_not_allowed,
//	                                     unsupported_media_type
//	413                                  request_too_large        not accepted    Rejected
//	431                                  request_headers_too_large not accepted   Rejected
//	429                                  rate_limited             not accepted    RateLimited, RetryAfter from
//	                                                                              Retry-After or retry_after_seconds
//	502                                  rejected                 not accepted    Rejected
//	503                                  unavailable              not accepted    Unavailable (retried)
//	202, status "unknown"                outcome_unknown          unknown         OutcomeUnknown, naming the
//	                                                                              remote message_id
//	409                                  conflict                 unknown         OutcomeUnknown (the key may be
//	                                                                              held by this very message)
//	500, 503, 504                        internal, canceled,      unknown         OutcomeUnknown
//	                                     deadline_exceeded
//	any status                           any other code, none     unknown         OutcomeUnknown
//	4xx but 409 and 429                  not the API's JSON       not accepted    Rejected (something in front of
//	                                     (a proxy's page)                         the gateway; check Config.BaseURL)
//	429                                  not the API's JSON       not accepted    RateLimited (a proxy's limit)
//	any other status                     no body, unreadable or   unknown         OutcomeUnknown
//	                                     not the API's JSON
//	                                     (a proxy's page)
//	2xx/3xx other than the above         any                      unknown         OutcomeUnknown
//	no answer: DNS, connect, TLS, or     -                        not accepted    Unavailable (retried)
//	  the request certainly not written
//	no answer after the request was      -                        unknown         OutcomeUnknown
//	  written (reset, timeout)
//	ctx ended before the request was     -                        not accepted    Unavailable, wraps ctx.Err()
//	  written (or before Send)
//	ctx ended after it was written       -                        unknown         OutcomeUnknown, wraps ctx.Err()
//	bad envelope, before any I/O         -                        not accepted    InvalidArgument
//	request cannot be built              -                        not accepted    Rejected (check Config.BaseURL)
//
// A request counts as written once the HTTP transport had a connection
// for it, unless writing it failed; so an error leans towards unknown,
// never towards a second send. Balance and CheckHealth read and change
// nothing: the proving codes map as above, anything else is Unavailable.
// Errors never contain the API key.
package gateway
