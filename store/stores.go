package store

import (
	"context"
	"time"

	"github.com/notifykit/notify/record"
)

// Accounts finds accounts. Implementations are safe for concurrent use
// and return accounts that callers must not modify.
type Accounts interface {
	// Account returns the account with the given ID, or ErrNotFound.
	Account(ctx context.Context, id string) (*record.Account, error)

	// AccountByKey returns the account that owns the API key, or
	// ErrUnauthenticated. Implementations keep only a hash of each key and
	// compare without revealing, through timing, how much of a key matched.
	AccountByKey(ctx context.Context, apiKey string) (*record.Account, error)
}

// Keys remembers, per account and key, the receipt of a send (encoded
// by the Notifier: a store keeps its bytes as they are),
// so that a repeat returns it instead of sending again. Methods are safe
// for concurrent use.
//
// An entry lives in two phases. A reservation (a send in flight) holds the
// key for the store's lease, a bound on how long one send may take, so a
// holder that dies frees its key soon; a completed entry keeps its receipt
// for the retention window (hours), so repeats within it get that receipt.
//
// The Notifier calls Reserve before it prepares the request; then
// Complete when the message went out or may have (sent or unknown: a
// repeat gets that receipt, and the unknown error again), or Release when
// it certainly went nowhere (failed, or refused before the charge), so
// the client may try again with the same key.
type Keys interface {
	// Reserve claims key for one send. The caller holds the key when the
	// answer's Receipt is nil: the key was free, or a reservation of the
	// same fingerprint had its lease run out (Abandoned then says when
	// that reservation was made).
	// A completed send with the key and the same fingerprint answers its
	// receipt. ErrConflict when the fingerprint differs or another send with
	// the key is still within its lease.
	Reserve(ctx context.Context, account, key, fingerprint string) (Reservation, error)
	// Complete stores the receipt (not retained: the store copies it) of the send that reserved key (sent or
	// unknown), even after the reservation's lease ran out: the Notifier's
	// reconciler completes the keys of sends whose holder died. A key with
	// no entry is ErrNotFound; one completed already is ErrConflict.
	Complete(ctx context.Context, account, key string, receipt []byte) error
	// Release frees key after a send that certainly went nowhere;
	// releasing a completed or missing key does nothing.
	Release(ctx context.Context, account, key string) error
}

// Reservation is what Keys.Reserve answers.
type Reservation struct {
	// Receipt is the receipt of a completed send with the key and the
	// same fingerprint: the caller returns it and sends nothing. Nil when
	// the caller now holds the key.
	Receipt []byte
	// Abandoned is set when the caller holds the key because an earlier
	// reservation's lease ran out before it was completed or released: the
	// time that reservation was made. Its send may have gone out, so the
	// Notifier looks for its message records (Ledger.ByKey) and settles
	// them before it sends anything.
	Abandoned time.Time
}

// Template is an account's custom template: a request's template_slug
// may name one as well as a stock template. It has a body for each
// channel kind it serves (a kind without one is a channel the template
// does not serve), in the placeholder syntax of the template package.
type Template struct {
	Slug string
	// Variables lists the variables the template requires.
	Variables []string
	Class     record.PriceClass
	// Bodies are the template's forms, by channel kind: "sms" and "chat"
	// use Text; "email" Subject, HTML and Text; another channel the parts
	// it documents. They are its base: the wording of a locale it has no
	// variant for.
	Bodies map[record.Kind]Body
	// Locales are the template's variants, by BCP 47 tag ("hi",
	// "hi-IN"), each bodies as Bodies are, of kinds Bodies serves and in
	// the base's variables: a render picks one by its locale's fallback
	// chain (notify.TemplateRenderer), and a kind a variant lacks is the
	// next link's. Nil: the base alone.
	Locales map[string]map[record.Kind]Body
}

// Body is one channel's form of a Template. The template package checks
// and renders each part: Subject as one line, HTML with every value
// escaped, Text as it is.
type Body struct {
	Subject string
	Text    string
	HTML    string
}

// Templates keeps per-account custom templates. Methods are safe for
// concurrent use; returned templates must not be modified.
type Templates interface {
	// Template returns the account's template with the slug, or ErrNotFound.
	Template(ctx context.Context, account, slug string) (*Template, error)
	// PutTemplate creates or replaces the account's template t.Slug.
	PutTemplate(ctx context.Context, account string, t *Template) error
	// DeleteTemplate removes it; a missing one is ErrNotFound.
	DeleteTemplate(ctx context.Context, account, slug string) error
	// Templates lists the account's templates, by slug.
	Templates(ctx context.Context, account string) ([]*Template, error)
}

// Limiter keeps a budget of sends per key, shared by every Notifier that
// uses the same Limiter: memstore's for one process, pgstore's for
// instances that share a database. The Notifier uses one for the
// per-account rate limit (notify.WithRateLimit; key: the account ID) and one for
// the per-recipient OTP throttle (notify.WithOTPThrottle; key: the account ID, a
// NUL byte and the normalised recipient). It takes a unit only for a valid
// request that is about to be charged and sent, never for an idempotent
// replay, and gives it back when the send certainly did not go out.
//
// Methods are safe for concurrent use.
type Limiter interface {
	// Take spends one unit of key's budget at now. When none is left it
	// spends nothing and returns a *LimitError whose RetryAfter (> 0) says
	// when a unit frees up and whose Rule states the limit ("at most 5
	// per 15m0s"); any other error means the store failed.
	Take(ctx context.Context, key string, now time.Time) error
	// Undo gives back the unit that Take spent for key at the same now.
	// Undoing a unit that has expired meanwhile changes nothing. A store
	// may not tell one unit from another: an Undo without its Take can
	// give back a unit a later Take spent (memstore's RateLimit does), so
	// callers undo only what they took.
	Undo(ctx context.Context, key string, at time.Time) error
}
