// Package notify sends SMS, dual-channel OTPs, e-mail, chat messages and
// push notifications from inside a Go program, charging each message to a
// prepaid wallet.
//
// # The pieces
//
// A Notifier runs every send through one pipeline, a step a file of
// this package (send.go runs them in order):
//
//  1. Prepare (prepare.go): the Channel for the request's Kind validates
//     and normalises it, renders its template and picks a Provider, and
//     the Pricer prices the Envelope. Bad input stops here with
//     CodeInvalidArgument, naming every bad field; nothing is charged and
//     no limit counts it.
//  2. Admit (admit.go): the account's suppression list (CodeSuppressed),
//     the recipient's preferences for a request that names a category
//     (preferences.go, CodeDeclined), the send window (a send outside it waits on the queue for its
//     opening), then the optional per-account rate limit and
//     per-recipient OTP throttle (WithRateLimit, WithOTPThrottle, over a
//     store.Limiter) take their share; idempotent replays never count.
//  3. Charge and record (charge.go): the ledger writes the message's durable record
//     and debits its price, with the message ID as reference, in one step
//     (an unmetered send has a zero charge). The record opens
//     StateAttempting (its history pending, then attempting), for the
//     vendor call follows at once. A short wallet is
//     CodeInsufficientFunds and no provider is called.
//  4. Deliver (deliver.go): the Channel hands the Envelope to its Provider under a
//     per-attempt timeout. The answer is one of three outcomes (record.State):
//     accepted (sent, charged); certainly not accepted (temporary refusals
//     are retried with capped, jittered backoff inside the caller's
//     deadline, the record pending while it waits, then the charge is
//     refunded exactly once); or unknown, the
//     vendor may have it (never retried, the charge stands, StateUnknown
//     and CodeOutcomeUnknown). A context that ends before the vendor call
//     cancels the send and refunds it; once the call is in flight, its
//     outcome decides. A channel that offers several providers
//     (Envelope.Providers, the SMS channel's routing rules) has a certain,
//     temporary refusal go on to the next at once, never an unknown
//     outcome; WithBreaker rests a provider that keeps failing.
//  5. Settle (settle.go): the record moves to sent, failed (refunded in the same
//     step) or unknown; the Receipt goes to the caller and to Observers.
//     Notifier.Message reads the record, which a receipt derives from.
//
// The root package holds the concept: the Notifier, the Request,
// Envelope, Receipt and errors, and the four contracts Channel, Provider,
// WalletStore and TemplateRenderer. Channels,
// with their requests and vocabulary, providers and stores live in
// sub-packages and are wired explicitly, as database/sql is with its
// drivers; a package of your own can add any of them without an edit
// here:
//
//   - channel/...: the SMS, e-mail and chat channels, each with its
//     Request and content types; channel/otp, the dual-channel OTP, a
//     Composite request of an SMS and a chat part;
//   - provider/...: vendors (smsgateway, cloudchat, qrchat, smtp, gateway)
//     and development providers (logprovider, memprovider), with the
//     conformance suite providertest;
//   - template: the stock template catalogue and renderer;
//   - wallet: price lists and currency formatting;
//   - record: the values everyone shares (a message's record and its
//     states, Money, Currency, Balance, Account, Kind), of the standard
//     library alone; the root names three of them (Kind, Account,
//     Money);
//   - store: the contract every store implements (the Ledger of money and
//     records, with the suppression list, Accounts, Keys, Limiter,
//     Templates, Admin), with its conformance kit store/storetest; notify
//     imports it as database/sql imports database/sql/driver;
//   - memstore: in-memory stores for development and tests; pgstore:
//     PostgreSQL stores for several instances sharing one wallet;
//   - queued: the queue side of a Notifier (queued.New(n)): Enqueue,
//     EnqueueTx, EnqueueTxMany, SendAt, Cancel, SendWithFallback, and
//     the worker a queue (queue/memqueue, pgstore/pgqueue) runs;
//   - httpapi: the JSON-over-HTTP API as an http.Handler;
//   - otelnotify: OpenTelemetry traces through the Tracer hook;
//   - notifytest: a one-call test kit for applications.
//
// Send is the one entry point. It takes any Request: one message
// (sms.Request, chat.Request, email.Request, push.Request, or your own
// channel's), a
// Composite of several at once (otp.Request), or a Bulk of one content to
// many recipients (sms.BulkRequest: each its own charged record, in one
// vendor call per batch where the provider is an sms.BatchSender). A Channel
// joins a Notifier with WithChannel, for any Kind; examples/pushchannel
// is a channel of its own built on the public API alone. The content of a
// prepared Envelope is its Content, in the channel's own type
// (sms.MessageOf(env) reads an SMS). Report takes the vendors' delivery
// reports, which move a record on after the send (delivered, read, or
// failed, and refunded unless its channel keeps the charge: ReportHandler).
//
// # Money
//
// Money is an int64 count of minor units (paise) and a record.Currency; no float
// is used anywhere. The ledger identity holds under any concurrency and any
// failure: opening balance - charges + refunds + top-ups = balance, and the
// balance never goes below zero.
//
// # Errors
//
// Every error the Notifier returns is an *Error with a Code; CodeOf reads
// it through wrapping. Context errors keep errors.Is(err, context.Canceled)
// and errors.Is(err, context.DeadlineExceeded) true.
//
// # Crashes
//
// A process that dies mid-send leaves its records pending or attempting.
// Notifier.Reconcile, run at start and periodically, settles those older
// than the settle threshold (WithSettleAfter): pending ones are refunded
// and failed (the vendor was never called, or certainly refused every call), attempting ones become
// unknown and keep their charge (the vendor may have the message), each
// exactly once however many instances reconcile one store. A record of a
// certain refusal whose move into failed (its refund) the store failed at
// the time is no such record: that move is retried in the background for
// up to the threshold, so it is refunded once the store answers again.
//
// # Idempotency
//
// A request with an IdempotencyKey that repeats while the store.Keys
// remembers the key returns the first Receipt without sending or charging
// again, whether it was sent or its outcome is unknown (then with the same
// CodeOutcomeUnknown error); only a send that certainly went nowhere frees
// the key. A send holds its key for the store.Keys' lease, not its
// retention: after the lease a repeat settles what a dead holder left and
// answers with it (for a Composite or Bulk request, the whole request's
// receipt, from the request record written before its first part; see
// store.Ledger.OpenRequest). The fingerprint is taken after
// normalisation, so two spellings of one number are one request; the same
// key with a different request is CodeConflict.
package notify
