package notify

import (
	"hash"
)

// Request is a send request. Any package may define one: the channel
// packages define sms.Request, chat.Request and email.Request, and a
// channel of your own defines its own. The Notifier hands a request to the
// Channel registered for its Kind (WithChannel), which type-asserts it to
// its own type.
//
// A request declares its per-field rules the way its channel checks them;
// the channels of this module use `validate` struct tags
// (github.com/go-playground/validator/v10) and json tags naming the HTTP
// API's fields, which errors name.
type Request interface {
	// Kind is the kind of channel the request is for.
	Kind() Kind
	// AccountID is the ID of the sending account. Required.
	AccountID() string
	// Key is the request's idempotency key, or empty. With a key, a repeat
	// within the retention window returns the first receipt without
	// sending or charging again; it needs WithIdempotency (without it a
	// request with a key is refused, InvalidArgument on idempotency_key).
	Key() string
	// Fingerprint writes the request's content into h: every field but the
	// account and the key, with the recipient normalised (so that "+91
	// 98765 43210" and "9876543210" are the same request). A reused key
	// with another request is told apart by it. It must not fail or
	// depend on anything but the request itself: a repeat is answered
	// from the idempotency store before Prepare runs, so that it gets the
	// first receipt even when preparing it again would now fail or differ.
	Fingerprint(h hash.Hash)
}

// Composite is a request sent as several parts at once under one key and
// one admission, such as the dual-channel OTP (package channel/otp): the
// Notifier prepares every part first, counts the request once against
// the limits, sends the parts concurrently, and answers one receipt of
// Kind() whose Legs are the parts' receipts, in order. A part whose
// channel is not configured (CodeUnavailable from Prepare) is skipped
// while another part can go.
type Composite interface {
	Request
	// Parts returns the parts, each a request of its own channel with
	// the composite's account and key.
	Parts() []Request
	// PartField names, in the composite's own words, the field that
	// part i's errors call field (the SMS part's "message" is the OTP's
	// "otp", say); field itself when the names agree.
	PartField(part int, field string) string
}

// Bulk is a request of one content to many recipients, such as
// sms.BulkRequest: one key, one admission, one receipt whose Legs are the
// recipients' receipts, in order. Its channel may deliver several
// recipients in one vendor call (BatchDeliverer).
type Bulk interface {
	Request
	// Recipients returns one request per recipient, in order, or an
	// InvalidArgument error when the bulk request itself is malformed
	// (no recipients, a rule of its own). At most MaxBulkRecipients.
	Recipients() ([]Request, error)
}
