// Package record holds the values that the notify package, its stores
// and its channels share: a message's durable record (Message) with its
// states (State and the one state machine, CanMove), the money it cost
// (Money, Currency, Balance), the account that sent it (Account), the
// kind of channel (Kind), the values of a template's placeholders (Vars)
// and the rules a request's fields break (FieldError, FieldErrors).
//
// It imports only the standard library, as river's rivertype does, so
// that a store or a channel can name these values without importing the
// Notifier's machinery: package store (the stores' contract) and package
// notify both import it, never the other way round. The notify package
// names the three values nearly every caller meets as aliases
// (notify.Kind, notify.Account, notify.Money); the rest are named here
// alone.
//
// Money never touches a float: an amount is an int64 count of the
// currency's minor units.
package record
