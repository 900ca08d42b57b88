package httpapi

import (
	"context"

	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// sendScope is what a send's context (Handler.sendContext) carries of the
// request it serves: its ID (RequestID) and the account its API key found
// (RequestAccounts). One value, so that a send's context costs one
// allocation for both.
type sendScope struct {
	requestID string
	account   *record.Account
}

// sendScopeKey is the context key of a send's sendScope.
type sendScopeKey struct{}

// RequestAccounts returns a store.Accounts that answers Account from the
// request a Handler is serving: asked, under the context the Handler gives
// that request's send, for the account whose API key authenticated the
// request, it answers the account AccountByKey read at the request's
// start, and reads nothing; every other call goes to a. Give it to the Notifier the Handler serves,
// notify.New(httpapi.RequestAccounts(a), ...), with a also given to New,
// and a send through the API reads its account once where it read it
// twice (the key's lookup, then the Notifier's): one round trip less per
// send with a database, which reads accounts uncached so that a disabled
// account stops at once.
//
// The account answered is the one the key found earlier in the same
// request, so a disabled account is refused as before. Work the Notifier
// does outside a request (a queued send's worker, the reconciler) reads
// a. The answer is the pointer AccountByKey returned, shared with the
// Handler for the request's life; the Notifier does not change it. It is
// safe for concurrent use if a is.
func RequestAccounts(a store.Accounts) store.Accounts { return requestAccounts{a} }

type requestAccounts struct{ store.Accounts }

func (r requestAccounts) Account(ctx context.Context, id string) (*record.Account, error) {
	if s, ok := ctx.Value(sendScopeKey{}).(*sendScope); ok && s.account != nil && s.account.ID == id {
		return s.account, nil
	}
	return r.Accounts.Account(ctx, id)
}
