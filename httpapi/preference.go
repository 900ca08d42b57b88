package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"slices"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/internal/wants"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// WithPreferences serves the recipient preferences of prefs under
// BasePath, beyond the spec, for an app's own settings screen:
//
//	GET  /categories           the account's categories
//	POST /preferences/lookup   {"channel","to"}: what one recipient gets, category by category
//	POST /preferences          {"channel","to","choices":{"marketing":false},"locale":"hi-IN"}: record their choices, their locale, or both
//
// The contract, as docs/api.md states it:
//
//   - prefs must be the preferences the Notifier reads (its ledger's:
//     every store.Ledger is a store.Preferences), or a choice made here
//     stops no send. The routes are authenticated as the others; the API
//     key's account is the one whose categories and choices are read and
//     written, and no request reaches another account's.
//   - The recipient travels in the body, never in the path or the query
//     string, so that the access log never holds an address or a number;
//     it is put in its channel's canonical form by the Notifier
//     (notify.Notifier.Recipient), the form choices are kept and read by,
//     and answered so. A number may be given as a send takes it, in the
//     national form of the account's region ("9876543210"). A channel the Notifier does not send on, or a
//     recipient its channel refuses, is 400 naming channel or to.
//   - Bodies are read as every POST's (one JSON object, strict keys, every
//     bad field at once) and, as the verification routes', a key the
//     endpoint does not take is 400 naming it.
//   - A choice of a category the account does not define is 400 naming
//     choices.<name>, and nothing is recorded; one of a critical category
//     is kept (critical messages go whatever was chosen, and the choice
//     counts if the category stops being critical).
//   - "locale" records the locale the recipient wants the account's
//     messages in (a BCP 47 tag, kept canonical; "" forgets it), which
//     chooses the variant of a templated send whose request names no
//     locale (store.Preferences.SetLocale), on every channel the
//     recipient's canonical form is the same on (a number's serves SMS
//     and chat). A body may give choices, a locale or both; a tag that is
//     not a locale is 400 naming locale. Both answers carry the
//     recipient's "locale", "" for none.
//   - Each category is answered with "allowed", what the Notifier does
//     with its messages to the recipient on the channel (the choice when
//     one was made, else true for an opt-out category and false for an
//     opt-in one; always true for a critical one), and "chosen", whether
//     a choice was made.
//   - A choice is written detached from the client's connection, bounded
//     by WithSendTimeout, as a send is: a client that hangs up does not
//     cut it short.
//
// Without this option the paths are 404, as any unknown path. A nil
// prefs is an error.
func WithPreferences(prefs store.Preferences) Option {
	return func(h *Handler) error {
		if nilness.Is(prefs) {
			return errors.New("WithPreferences: nil preferences")
		}
		h.prefs = prefs
		return nil
	}
}

// preferenceLookupBody is the JSON of POST /preferences/lookup.
type preferenceLookupBody struct {
	Channel value `json:"channel"`
	To      value `json:"to"`
}

// preferenceSetBody is the JSON of POST /preferences. Choices is kept raw
// and read by decodeChoices, which names each bad entry.
type preferenceSetBody struct {
	Channel value           `json:"channel"`
	To      value           `json:"to"`
	Choices json.RawMessage `json:"choices"`
	Locale  value           `json:"locale"`
}

// The keys of the preference bodies, from their structs.
var (
	preferenceLookupKeys = bodyKeys(reflect.TypeFor[preferenceLookupBody]())
	preferenceSetKeys    = bodyKeys(reflect.TypeFor[preferenceSetBody]())
)

// categoriesAnswer is the answer of GET /categories.
type categoriesAnswer struct {
	Success    bool             `json:"success"`
	Categories []wants.Category `json:"categories"`
}

// preferencesAnswer is the answer of both POST /preferences routes.
type preferencesAnswer struct {
	Success    bool               `json:"success"`
	Channel    string             `json:"channel"`
	To         string             `json:"to"`
	Categories []wants.Preference `json:"categories"`
	// Locale is the locale the recipient recorded, "" for none.
	Locale string `json:"locale"`
}

// preferenceStoreError is the error of a store.Preferences call that
// failed: the store is named and its words are kept for the log, as
// every store's are (a store refusal the request could cause is checked
// before the store is asked).
func preferenceStoreError(err error) error {
	var e *notify.Error
	if errors.As(err, &e) {
		return err
	}
	return &notify.Error{Code: notify.CodeOf(err), Err: &notify.StoreError{Store: "preferences", Err: err}}
}

// categories answers GET /categories.
func (h *Handler) categories(x *exchange, r *http.Request, acct *notify.Account) {
	cats, err := h.prefs.Categories(r.Context(), acct.ID)
	if err != nil {
		writeErr(x, r, preferenceStoreError(err), nil)
		return
	}
	writeVerificationJSON(x, r, categoriesAnswer{Success: true, Categories: wants.Categories(cats)}) // a 200 with a JSON body, as a verification's
}

// preferenceRecipient reads a preference body's channel and recipient,
// naming each bad field in fe, and returns the channel and the recipient
// in its canonical form (the Notifier's, by which choices are kept).
//
// A channel's canonical form of a number is E.164, and Recipient knows no
// account; but a send takes a number in the national form of the
// account's region ("9876543210" for an Indian account), and a settings
// screen hands on what the app sends to. So a recipient the channel
// refuses as it is, which reads as a number of the account's region
// (phone.Parse, as a send reads it), is asked again in E.164: one key
// for both spellings, the one the Notifier reads at a send.
func (h *Handler) preferenceRecipient(fe *record.FieldErrors, acct *notify.Account, ch, to *value) (record.Kind, string) {
	channel := ch.str(fe, "channel", false)
	recipient := to.str(fe, "to", true)
	if channel == "" && !fe.Has("channel") {
		fe.Add("channel", "is required: a channel the gateway sends on, such as sms, chat or email")
	}
	if recipient == "" && !fe.Has("to") {
		fe.Add("to", "is required: the recipient whose preferences these are")
	}
	if fe.Has("channel") || fe.Has("to") {
		return "", ""
	}
	key, err := h.n.Recipient(record.Kind(channel), recipient)
	if err != nil && notify.CodeOf(err) == notify.CodeInvalidArgument {
		var e *notify.Error
		if !errors.As(err, &e) || !hasField(e.Fields, "channel") {
			if n, perr := phone.Parse(recipient, acct.Region, nil); perr == nil {
				if k, kerr := h.n.Recipient(record.Kind(channel), n.E164); kerr == nil {
					key, err = k, nil
				}
			}
		}
	}
	if err != nil {
		var e *notify.Error
		if errors.As(err, &e) && len(e.Fields) > 0 {
			*fe = append(*fe, e.Fields...)
		} else {
			fe.Add("to", "is not a recipient of the channel")
		}
		return "", ""
	}
	return record.Kind(channel), key
}

// hasField reports whether fields names field.
func hasField(fields []record.FieldError, field string) bool {
	return slices.ContainsFunc(fields, func(f record.FieldError) bool { return f.Field == field })
}

// lookupPreferences answers POST /preferences/lookup.
func (h *Handler) lookupPreferences(x *exchange, r *http.Request, acct *notify.Account) {
	var w preferenceLookupBody
	if !h.readObject(x, r, &w, preferenceLookupKeys) {
		return
	}
	var fe record.FieldErrors
	kind, to := h.preferenceRecipient(&fe, acct, &w.Channel, &w.To)
	if refuseFields(x, r, fe) {
		return
	}
	h.answerPreferences(r.Context(), x, r, acct.ID, kind, to, nil)
}

// setPreferences answers POST /preferences: it checks every choice
// before it records any, so that a 400 records nothing.
func (h *Handler) setPreferences(x *exchange, r *http.Request, acct *notify.Account) {
	var w preferenceSetBody
	if !h.readObject(x, r, &w, preferenceSetKeys) {
		return
	}
	var fe record.FieldErrors
	kind, to := h.preferenceRecipient(&fe, acct, &w.Channel, &w.To)
	setLocale := w.Locale.kind != 0
	tag := w.Locale.str(&fe, "locale", false)
	if canonical, rule, ok := wants.Locale(tag); ok {
		tag = canonical
	} else if !fe.Has("locale") {
		fe.Add("locale", rule)
	}
	var choices []wants.Choice
	if !setLocale || len(bytes.TrimSpace(w.Choices)) > 0 && string(bytes.TrimSpace(w.Choices)) != "null" {
		choices = decodeChoices(&fe, w.Choices)
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	var cats []store.Category
	if len(choices) > 0 {
		// Read even when the recipient is bad, so that a 400 names every
		// bad field at once, the categories the account lacks among them.
		var err error
		if cats, err = h.prefs.Categories(ctx, acct.ID); err != nil {
			writeErr(x, r, preferenceStoreError(err), nil)
			return
		}
		for _, c := range choices {
			if storeutil.CategoryName(c.Category) && !wants.Defined(cats, c.Category) {
				fe.Add(choiceField(c.Category), wants.Undefined)
			}
		}
	}
	if refuseFields(x, r, fe) {
		return
	}
	var locale *string
	if setLocale {
		locale = &tag
	}
	removed, err := wants.Record(ctx, h.prefs, acct.ID, kind, to, choices, locale)
	switch {
	case removed != "":
		writeErr(x, r, notify.InvalidField(choiceField(removed), wants.Undefined), nil)
		return
	case err != nil:
		writeErr(x, r, preferenceStoreError(err), nil)
		return
	}
	h.answerPreferences(ctx, x, r, acct.ID, kind, to, cats)
}

// answerPreferences answers the recipient to's preferences on channel
// kind, category by category, with the account's categories cats (read
// when nil).
func (h *Handler) answerPreferences(ctx context.Context, x *exchange, r *http.Request, account string, kind record.Kind, to string, cats []store.Category) {
	prefs, tag, err := wants.Read(ctx, h.prefs, account, kind, to, cats)
	if err != nil {
		writeErr(x, r, preferenceStoreError(err), nil)
		return
	}
	writeVerificationJSON(x, r, preferencesAnswer{Success: true, Channel: string(kind), To: to, Categories: prefs, Locale: tag})
}

// choiceField names an entry of "choices" in an error, its name cut short
// as the strict checks cut a key.
func choiceField(name string) string { return "choices." + shortKey([]byte(name)) }

// decodeChoices reads a body's "choices": an object of at least one
// category name, each true (allowed) or false (declined). It returns them
// in order of name, and adds each bad entry to fe (choices.<name>), or
// choices itself when it is not such an object. Names with the rule of a
// category's are returned, even beside bad ones, for the caller to look up
// (so that a 400 names them all); others are errors.
// The strict checks have refused a name given twice.
func decodeChoices(fe *record.FieldErrors, raw json.RawMessage) []wants.Choice {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		fe.Add("choices", wants.LocaleRequired)
		return nil
	}
	var entries map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &entries) != nil {
		fe.Add("choices", `must be an object of category names, each true (allowed) or false (declined), such as {"marketing":false}`)
		return nil
	}
	if len(entries) == 0 {
		fe.Add("choices", "must name at least one category")
		return nil
	}
	names := slices.Sorted(maps.Keys(entries)) // one order of errors and writes for one body
	out := make([]wants.Choice, 0, len(names))
	bad := 0
	for _, name := range names {
		if bad == maxStrictErrors {
			fe.Add("choices", "has more bad entries than these; fix them and send it again")
			return out
		}
		v := string(bytes.TrimSpace(entries[name]))
		ok := true
		if !storeutil.CategoryName(name) {
			fe.Add(choiceField(name), "names no category: a category's name "+storeutil.CategoryRule)
			ok = false
		}
		if v != "true" && v != "false" {
			fe.Add(choiceField(name), "must be true (allowed) or false (declined), not "+jsonWhat([]byte(v)))
			ok = false
		}
		if !ok {
			bad++
			continue
		}
		out = append(out, wants.Choice{Category: name, Allowed: v == "true"})
	}
	return out
}
