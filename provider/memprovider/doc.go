// Package memprovider is a notify.Provider that captures envelopes in
// memory instead of sending them, for development and tests, in the
// manner of gocloud.dev's mempubsub.
//
// A test wires a Provider into a channel, sends through the Notifier and
// asserts on Sent. It can also make the provider misbehave: FailNext
// fails the next sends with a chosen code, SetLatency slows every send
// down, and SetHandler takes over the outcome of each send for anything
// else (panics, per-recipient behaviour). Wait blocks until a number of
// envelopes have been captured, so tests never sleep.
//
// A captured envelope is a message the vendor accepted. The outcomes of a
// send (see notify.Provider) are:
//
//	what happened                              captured  error code        outcome
//	-----------------------------------------  --------  ----------------  ------------
//	default, or a handler's Result             yes       (Result mem-<n>)  accepted
//	ctx ended before the call or during the    no        Unavailable,      not accepted
//	  latency                                            wraps ctx.Err()
//	nil envelope                               no        InvalidArgument   not accepted
//	FailNext(n, code), code not OutcomeUnknown no        code              per code
//	FailNext(n, CodeOutcomeUnknown)            yes       OutcomeUnknown    unknown
//	handler: Result and error                  yes       the handler's     the handler's
//	handler: error alone                       no        the handler's     the handler's
//	handler: neither                           no        Rejected          not accepted
//
// The capture buffer is unbounded: it is meant for tests, not for
// long-running programs. Reset empties it and frees what it held.
package memprovider
