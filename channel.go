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
	// returns the provider's Result, or an error whose code says whether a
	// retry may help (see Provider.Send). It must honour ctx.
	Deliver(ctx context.Context, env *Envelope) (*Result, error)
}

// Provider sends envelopes to one vendor. Authors implement it and run
// provider/providertest's conformance suite.
//
// Send is called concurrently and must be safe for that. It makes one
// attempt and does not retry: the Notifier does, with backoff, but only
// when the error says the message was certainly not accepted. Errors are
// classified by code (use Errorf or WithCode; a bare error is treated as
// CodeUnavailable but never retried, since it cannot say whether the
// message was accepted):
//
//   - CodeUnavailable: temporary, not accepted (vendor down, 5xx, network
//     error before the request was sent); retried.
//   - CodeRateLimited: the vendor asks to slow down; retried after
//     Error.RetryAfter when it fits the deadline.
//   - CodeRejected: permanent refusal (bad number, bad template, bad key).
//   - CodeInvalidArgument: the envelope breaks a rule only the provider
//     knows.
//   - context errors: return ctx.Err() (wrapped or not) when ctx ends.
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
