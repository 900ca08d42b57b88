package notify

import "context"

// Channel turns requests of one kind into envelopes and delivers them
// through its providers. The SMS, e-mail and chat channels live in the
// channel/ packages; the Notifier holds at most one Channel per Kind.
//
// Implementations must be safe for concurrent use.
type Channel interface {
	// Kind is the kind of requests the channel handles: KindSMS, KindEmail
	// or KindChat.
	Kind() Kind

	// Prepare validates and normalises req, renders its template and picks
	// a provider, without side effects. It returns an Envelope with Kind,
	// To, Provider, Units, Class and the content set; the Notifier fills the
	// rest. A bad request is an InvalidArgument *Error naming every bad
	// field. Prepare must not retain req.
	Prepare(ctx context.Context, acct *Account, req Request) (*Envelope, error)

	// Deliver hands env to a provider, once: the Notifier retries. It
	// returns the provider's Result, or an error classified as for
	// Provider.Send: a certain refusal by its code, anything else is an
	// unknown outcome. A channel that tries a second provider (a chat
	// failover) does so only after a certain, temporary refusal
	// (IsRetryable). It must honour ctx.
	Deliver(ctx context.Context, env *Envelope) (*Result, error)
}

// Provider sends envelopes to one vendor. Authors implement it and run
// provider/providertest's conformance suite.
//
// Send is called concurrently and must be safe for that. It makes one
// attempt and does not retry: the Notifier does. Every answer is one of
// three outcomes (see Outcome and OutcomeOf), and money and retries follow
// it:
//
//   - accepted: a Result with the vendor's message ID; the charge stands.
//   - not accepted, for certain: an *Error with a code that says why
//     (use Errorf or WithCode). The charge is refunded.
//     CodeUnavailable: temporary (vendor down before taking the message,
//     a 5xx whose body proves refusal, a network error before the request
//     was written); retried. CodeRateLimited: the vendor asks to slow down;
//     retried after Error.RetryAfter when it fits the deadline.
//     CodeRejected: permanent refusal (bad number, bad template, bad key).
//     CodeInvalidArgument: the envelope breaks a rule only the provider
//     knows.
//   - unknown: the request may have reached the vendor: its answer was
//     lost or unreadable, the call timed out or was reset after the
//     request was written, a 5xx or proxy error does not prove refusal.
//     Return the error as it is (a bare error, a context error) or with
//     CodeOutcomeUnknown. The charge stands and nothing retries it.
//
// When ctx ends mid-call, return an error that says which of the last two
// it was: a bare ctx.Err() is taken as unknown, so a provider that knows
// the request was never written wraps it as CodeUnavailable.
//
// Send may retain env (it is never changed after Deliver starts). It must
// not put secrets (keys, OTP codes, passwords) in errors. A successful
// Result carries a non-empty ProviderMessageID.
type Provider interface {
	// Name identifies the provider in receipts and timeouts, such as
	// "smsgateway".
	Name() string
	Send(ctx context.Context, env *Envelope) (*Result, error)
}

// HealthChecker is an optional interface of providers (and channels) that
// can tell whether their vendor is reachable. The Notifier does not call
// it; hosts and the HTTP adapter may, for readiness checks. A provider
// without it is assumed healthy.
type HealthChecker interface {
	CheckHealth(ctx context.Context) error
}
