// Package memprovider is a notify.Provider that captures envelopes in
// memory instead of sending them, for development and tests, in the
// manner of gocloud.dev's mempubsub.
//
// A test wires a Provider into a channel, sends through the Notifier and
// asserts on Sent. It can also make the provider misbehave: FailNext
// fails the next sends with a chosen code (before acceptance, so the
// Notifier may retry), SetLatency slows every send down, and SetHandler
// takes over the outcome of each send for anything else (panics, failures
// after acceptance, per-recipient behaviour). Wait blocks until a number
// of envelopes have been captured, so tests never sleep.
//
// The capture buffer is unbounded: it is meant for tests, not for
// long-running programs. Reset empties it and frees what it held.
package memprovider
