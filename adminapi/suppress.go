package adminapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// Suppression lists (store.Suppressions), per account and channel:
//
//	GET  /accounts/{id}/suppressions[?channel=&limit=&after=]  a page, by channel then recipient
//	POST /accounts/{id}/suppressions          {"channel", "to", "reason"}: add (idempotent)
//	POST /accounts/{id}/suppressions/remove   {"channel", "to"}: remove (404 when absent)
//
// The recipient travels in bodies, never in a path or query string
// (removal is a POST, not a DELETE of a URL naming it), so that access
// logs do not collect addresses and numbers. Answers name recipients in
// full: the admin who manages the list must see what is on it. The
// change log names the channel and reason only.

// Recipients puts a recipient of a channel in that channel's canonical
// form, the one key the suppression list keeps it by
// (notify.Channel.Recipient). *notify.Notifier is one
// (notify.Notifier.Recipient): give the admin API the Notifier whose
// ledger keeps the list, so that an entry an admin writes is found by the
// sends it must stop.
type Recipients interface {
	Recipient(kind notify.Kind, to string) (string, error)
}

// WithSuppressions serves the suppression endpoints over list, the list
// the Notifier enforces (its ledger's: every store.Ledger is a
// store.Suppressions), with each recipient an admin names put in its
// channel's canonical form by recipients, the Notifier (a channel it has
// no channel for is refused with 400). Without it the endpoints are not
// routed (404): the list is given, never guessed from the Store's type.
// A nil list or recipients is an error.
func WithSuppressions(list store.Suppressions, recipients Recipients) Option {
	return func(h *Handler) error {
		if list == nil || nilness.Is(recipients) {
			return errors.New("adminapi: WithSuppressions needs a suppression list and the Notifier's recipients")
		}
		h.suppressions, h.recipients = list, recipients
		return nil
	}
}

// suppressionRoutes are the routes of the suppression endpoints, or none
// without a list.
func (h *Handler) suppressionRoutes() []route {
	if h.suppressions == nil {
		return nil
	}
	const base = BasePath + "/accounts/{id}/suppressions"
	return []route{
		{base, map[string]func(*request){"GET": (*request).listSuppressions, "POST": (*request).addSuppression}},
		{base + "/remove", map[string]func(*request){"POST": (*request).removeSuppression}},
	}
}

type suppressionIn struct {
	Channel string `json:"channel"`
	To      string `json:"to"`
	Reason  string `json:"reason"`
}

type suppressionJSON struct {
	Channel string    `json:"channel"`
	To      string    `json:"to"`
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

type suppressionsPage struct {
	Account      string            `json:"account"`
	Suppressions []suppressionJSON `json:"suppressions"`
	Next         string            `json:"next,omitempty"`
}

func suppressionOf(e store.Suppression) suppressionJSON {
	return suppressionJSON{Channel: string(e.Kind), To: e.To, Reason: string(e.Reason), At: e.At.UTC()}
}

// check checks in's channel and recipient (and its reason, when
// withReason), naming each bad field, and returns the recipient in its
// channel's canonical form.
func (in *suppressionIn) check(recipients Recipients, withReason bool) (string, error) {
	var fe record.FieldErrors
	var to string
	switch kind := record.Kind(in.Channel); {
	case in.Channel == "":
		fe.Add("channel", "is required: a channel name such as sms, chat or email")
	case !store.SuppressibleKind(kind):
		fe.Add("channel", "must be a channel name such as sms, chat or email")
	case in.To == "":
		fe.Add("to", "is required")
	default:
		n, err := recipients.Recipient(kind, in.To)
		var e *notify.Error
		switch {
		case err == nil:
			to = n
		case errors.As(err, &e) && len(e.Fields) > 0:
			fe = append(fe, e.Fields...)
		default:
			fe.Add("to", "is not a valid recipient")
		}
	}
	if withReason && !storeutil.ValidReason(store.SuppressionReason(in.Reason)) {
		fe.Add("reason", "must be unsubscribed, hard_bounce, complaint or manual")
	}
	return to, notify.InvalidFields(fe)
}

// listSuppressions: GET /accounts/{id}/suppressions.
func (q *request) listSuppressions() {
	var fe record.FieldErrors
	kind := record.Kind(q.r.URL.Query().Get("channel"))
	if kind != "" && !store.SuppressibleKind(kind) {
		fe.Add("channel", "must be a channel name such as sms, chat or email")
	}
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	// accountPage asks for one over the page, to learn whether another
	// follows; MaxLimit+1 is within store.MaxSuppressionPage.
	list := func(ctx context.Context, account string, after store.Suppression, limit int) ([]store.Suppression, error) {
		return q.h.suppressions.ListSuppressions(ctx, account, store.SuppressionQuery{Kind: kind,
			AfterKind: after.Kind, AfterTo: after.To, Limit: limit})
	}
	a, l, next, ok := accountPage(q, suppressionCursor, list, func(e store.Suppression) string {
		return encodeCursor(string(e.Kind) + " " + e.To)
	})
	if !ok {
		return
	}
	out := suppressionsPage{Account: a.ID, Suppressions: []suppressionJSON{}, Next: next}
	for _, e := range l {
		out.Suppressions = append(out.Suppressions, suppressionOf(e))
	}
	writeOK(q.w, http.StatusOK, out)
}

// suppressionCursor reads ?after= of a suppression list: a channel and a
// recipient.
func suppressionCursor(raw string, fe *record.FieldErrors) store.Suppression {
	kind, to, ok := strings.Cut(raw, " ")
	if !ok || !store.SuppressibleKind(record.Kind(kind)) || to == "" {
		fe.Add("after", notACursor)
		return store.Suppression{}
	}
	return store.Suppression{Kind: record.Kind(kind), To: to}
}

// suppressionInput reads the body of an add (withReason) or a removal,
// which must not name a reason, checks it, and finds the account: the
// body, its recipient in its channel's form and the account, or false once the
// answer is written.
func (q *request) suppressionInput(withReason bool) (suppressionIn, string, *notify.Account, bool) {
	var in suppressionIn
	if !q.decode(&in) {
		return in, "", nil, false
	}
	if !withReason && in.Reason != "" {
		q.fail(notify.InvalidField("reason", "must be absent: a removal takes the entry off whatever its reason"), "")
		return in, "", nil, false
	}
	to, err := in.check(q.h.recipients, withReason)
	if err != nil {
		q.fail(err, "")
		return in, "", nil, false
	}
	a, ok := q.account()
	return in, to, a, ok
}

// addSuppression: POST /accounts/{id}/suppressions. It answers 200 with
// the entry as the list then holds it: a recipient already listed keeps
// its entry unless the new reason outranks it (store.Suppressions).
func (q *request) addSuppression() {
	in, to, a, ok := q.suppressionInput(true)
	if !ok {
		return
	}
	e, err := q.h.suppressions.AddSuppression(q.ctx(), store.Suppression{Account: a.ID, Kind: record.Kind(in.Channel),
		To: to, Reason: store.SuppressionReason(in.Reason), At: time.Now()})
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("suppression.add", a.ID, "channel", in.Channel, "reason", string(e.Reason))
	writeOK(q.w, http.StatusOK, suppressionOf(e))
}

// removeSuppression: POST /accounts/{id}/suppressions/remove.
func (q *request) removeSuppression() {
	in, to, a, ok := q.suppressionInput(false)
	if !ok {
		return
	}
	err := q.h.suppressions.RemoveSuppression(q.ctx(), a.ID, record.Kind(in.Channel), to)
	if notify.CodeOf(err) == notify.CodeNotFound {
		writeError(q.w, notify.CodeNotFound, "the recipient is not on the account's "+in.Channel+" suppression list", nil)
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("suppression.remove", a.ID, "channel", in.Channel)
	writeOK(q.w, http.StatusOK, map[string]string{"account": a.ID, "channel": in.Channel, "removed": to})
}
