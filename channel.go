package notify

import (
	"context"
)

// Channel turns requests of one kind into envelopes and delivers them
// through its providers. The SMS, e-mail and chat channels live in the
// channel/ packages, and any package may define another (see
// examples/pushchannel); the Notifier holds at most one Channel per Kind.
// A channel may also implement BatchDeliverer and ReportHandler, and,
// as a provider may, CheckHealth (see Provider).
//
// Implementations must be safe for concurrent use.
type Channel interface {
	// Kind is the kind of requests the channel handles, such as "sms" (sms.Kind);
	// requests whose Kind() is this go to this channel. Not empty.
	Kind() Kind

	// Prepare validates and normalises req, renders its template and picks
	// a provider, without side effects. It returns an Envelope with Kind,
	// To, Provider, Units, Class and the content set; the Notifier fills the
	// rest. A bad request is an InvalidArgument *Error naming every bad
	// field. Prepare must not retain req; it may set Envelope.Localized
	// (with a copy of req) so that the recipient's stored locale chooses a
	// templated message's variant.
	Prepare(ctx context.Context, acct *Account, req Request) (*Envelope, error)

	// Deliver hands env to a provider, once: the Notifier retries. It
	// returns the provider's Result, or an error classified as for
	// Provider.Send: a certain refusal by its code, anything else is an
	// unknown outcome. A channel that tries a second provider (a chat
	// failover) does so only after a certain, temporary refusal
	// (IsRetryable). It must honour ctx.
	Deliver(ctx context.Context, env *Envelope) (*Result, error)

	// Recipient returns to in the channel's canonical form: the one key
	// of a recipient in every list kept by recipient (the suppression
	// list), whoever reads or writes it: the Notifier before a send and
	// after a bounce, the admin API, an unsubscribe link
	// (Notifier.Recipient). Two spellings of one recipient must give one
	// form ("Ann@Example.com" and "ann@example.com"; "+91 98765 43210"
	// and "+919876543210"), and the form given again must come back as
	// it is. It depends on to alone (no account), has no side effects,
	// and answers a to that cannot be one of its recipients with an
	// InvalidArgument *Error naming "to". A list's store compares the
	// forms byte for byte.
	Recipient(to string) (string, error)
}

// Provider sends envelopes to one vendor. Authors implement it and run
// provider/providertest's conformance suite.
//
// Send is called concurrently and must be safe for that. It makes one
// attempt and does not retry: the Notifier does. Every answer is one of
// three outcomes (see record.State and OutcomeOf), and money and retries follow
// it:
//
//   - accepted: a Result with the vendor's message ID; the charge stands.
//   - not accepted, for certain: an *Error with a code that says why
//     (use Errorf or WithCode). The charge is refunded.
//     CodeUnavailable: temporary (the vendor down or shedding load, a
//     network error before the request was written); retried.
//     CodeRateLimited: the vendor asks to slow down; retried after
//     Error.RetryAfter when it fits the deadline. CodeRejected: permanent
//     refusal (bad number, bad template, bad key). CodeInvalidArgument:
//     the envelope breaks a rule only the provider knows; use
//     InvalidField, whose field and rule the HTTP adapter shows the
//     sender, so they name no host or vendor account.
//   - unknown: the request may have reached the vendor and no answer of
//     its own came back: the answer was lost, late or cut short, the call
//     timed out or was reset after the request was written, or the answer
//     is not the vendor's (below). Return the error as it is (a bare
//     error, a context error) or with CodeOutcomeUnknown. The charge
//     stands and nothing retries it.
//
// A vendor's own error answer is a certain refusal whatever its HTTP
// status: an answer the vendor formed itself, in its documented error
// format (an error body such as {"return": false, "status_code": 503,
// "message": "busy"}, an error object, an SMTP reply of 4xx or 5xx to
// MAIL, RCPT or the end of DATA), says that it did not take the message,
// even on a 5xx and even with a code the provider does not know. Classify
// it by its code; a code the provider does not know is CodeUnavailable on
// a 5xx, CodeRateLimited on a 429, else CodeRejected. Only an answer that
// is not the vendor's own (a proxy's error page, an empty, cut or
// unreadable body, JSON of another shape) leaves the outcome unknown, and
// so does one in which the vendor says that it does not know whether the
// message left: a relay reporting an engine that failed mid-send, or a
// remote gateway's outcome_unknown (its error format carries such codes
// too, so there only the codes of a refusal are certain, and one the
// provider does not know is not). provider/providertest checks the rule
// (its failure VendorErrorOn5xx).
//
// When ctx ends mid-call, return an error that says which of the last
// two outcomes it was: a bare ctx.Err() is taken as unknown, so a provider
// that knows the request was never written wraps it as CodeUnavailable.
//
// Send may retain env (it is never changed after Deliver starts). It must
// not put secrets (keys, OTP codes, passwords) in errors. A successful
// Result carries a non-empty ProviderMessageID.
//
// A provider that can tell whether its vendor is reachable has a method
// CheckHealth(ctx context.Context) error, nil when it is. The Notifier
// never calls it: readiness checks do (the gateway's /readyz, and
// sms.Channel.CheckHealth for the SMS providers), each declaring the
// method it asks for. A provider without it is taken as healthy.
type Provider interface {
	// Name identifies the provider in receipts and timeouts, such as
	// "smsgateway".
	Name() string
	Send(ctx context.Context, env *Envelope) (*Result, error)
}
