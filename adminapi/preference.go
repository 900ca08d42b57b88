package adminapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/nilness"
	"github.com/notifykit/notify/internal/wants"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/store/storeutil"
)

// Recipient preferences (store.Preferences), per account:
//
//	GET    /accounts/{id}/categories                 the account's categories, by name
//	PUT    /accounts/{id}/categories/{name}          {"description", "opt_in", "critical"}: define or replace one
//	DELETE /accounts/{id}/categories/{name}          remove one and every choice of it (404 when absent)
//	POST   /accounts/{id}/preferences/lookup         {"channel", "to"}: what one recipient gets, category by category
//	POST   /accounts/{id}/preferences                {"channel", "to", "choices": {"marketing": false}, "locale": "hi-IN"}: record their choices, locale, or both
//
// As on the suppression endpoints, the recipient travels in bodies,
// never in a path or query string, so that access logs do not collect
// addresses and numbers, and is put in its channel's canonical form by
// the Notifier before the store is asked. Answers name the recipient in
// full (the admin asked about them); the change log (category.put,
// category.delete, preference.set) names the category, the channel and
// the choices, never a recipient.

// WithPreferences serves the preference endpoints over prefs, the
// preferences the Notifier reads (its ledger's: every store.Ledger is a
// store.Preferences), with each recipient an admin names put in its
// channel's canonical form by recipients, the Notifier (a channel it has
// no channel for is refused with 400). Without it the endpoints are not
// routed (404): the store is given, never guessed from the Store's type.
// A nil prefs or recipients is an error.
func WithPreferences(prefs store.Preferences, recipients Recipients) Option {
	return func(h *Handler) error {
		if nilness.Is(prefs) || nilness.Is(recipients) {
			return errors.New("adminapi: WithPreferences needs the Notifier's preferences and its recipients")
		}
		h.preferences, h.preferenceRecipients = prefs, recipients
		return nil
	}
}

// preferenceRoutes are the routes of the preference endpoints, or none
// without a store.
func (h *Handler) preferenceRoutes() []route {
	if h.preferences == nil {
		return nil
	}
	const acct = BasePath + "/accounts/{id}"
	return []route{
		{acct + "/categories", map[string]func(*request){"GET": (*request).listCategories}},
		{acct + "/categories/{name}", map[string]func(*request){"PUT": (*request).putCategory, "DELETE": (*request).deleteCategory}},
		{acct + "/preferences/lookup", map[string]func(*request){"POST": (*request).lookupPreferences}},
		{acct + "/preferences", map[string]func(*request){"POST": (*request).setPreferences}},
	}
}

type categoryIn struct {
	Description string `json:"description"`
	OptIn       bool   `json:"opt_in"`
	Critical    bool   `json:"critical"`
}

type categoriesJSON struct {
	Account    string           `json:"account"`
	Categories []wants.Category `json:"categories"`
}

// lookupIn is the body of a lookup: a recipient of a channel.
type lookupIn struct {
	Channel string `json:"channel"`
	To      string `json:"to"`
}

// choicesIn is the body of POST /preferences.
type choicesIn struct {
	Channel string `json:"channel"`
	To      string `json:"to"`
	// Choices is read raw and each entry checked by setPreferences, so
	// that a bad one is named choices.<name> whichever Go release decodes
	// the body: encoding/json names a map's entry in its errors only from
	// Go 1.27 on, and the module builds with Go 1.26.
	Choices map[string]json.RawMessage `json:"choices"`
	Locale  *string                    `json:"locale"` // nil: not given
}

type preferencesJSON struct {
	Account    string             `json:"account"`
	Channel    string             `json:"channel"`
	To         string             `json:"to"`
	Categories []wants.Preference `json:"categories"`
	Locale     string             `json:"locale"` // "" for none
}

// categoryName returns the path's category name ({name}), or answers 400
// naming it with storeutil's rule and returns false.
func (q *request) categoryName() (string, bool) {
	name := q.r.PathValue("name")
	if !storeutil.CategoryName(name) {
		q.fail(notify.InvalidField("name", storeutil.CategoryRule), "")
		return "", false
	}
	return name, true
}

// categories reads the path's account and its categories, or answers
// the failure and returns false.
func (q *request) categories() (*notify.Account, []store.Category, bool) {
	a, ok := q.account()
	if !ok {
		return nil, nil, false
	}
	cats, err := q.h.preferences.Categories(q.ctx(), a.ID)
	if err != nil {
		q.fail(err, "")
		return nil, nil, false
	}
	return a, cats, true
}

// listCategories: GET /accounts/{id}/categories.
func (q *request) listCategories() {
	a, cats, ok := q.categories()
	if !ok {
		return
	}
	writeOK(q.w, http.StatusOK, categoriesJSON{Account: a.ID, Categories: wants.Categories(cats)})
}

// putCategory: PUT /accounts/{id}/categories/{name}. It answers the
// category as kept, 201 when the account had none of that name, 200 when
// it replaced one (recipients' choices of it stay).
func (q *request) putCategory() {
	name, ok := q.categoryName()
	if !ok {
		return
	}
	var in categoryIn
	if !q.decode(&in) {
		return
	}
	c := store.Category{Account: q.r.PathValue("id"), Name: name, Description: in.Description, OptIn: in.OptIn, Critical: in.Critical}
	if err := storeutil.CheckCategory(c); err != nil {
		q.fail(renameField(err, "category", "name"), "")
		return
	}
	a, cats, ok := q.categories()
	if !ok {
		return
	}
	replaced := wants.Defined(cats, name)
	kept, err := q.h.preferences.PutCategory(q.ctx(), c)
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("category.put", a.ID, "category", name, "opt_in", kept.OptIn, "critical", kept.Critical, "replaced", replaced)
	status := http.StatusCreated
	if replaced {
		status = http.StatusOK
	}
	writeOK(q.w, status, wants.Shown(kept))
}

// renameField returns err's field errors (a store's ErrInvalid, as
// storeutil words them) with the field from named to, as an
// InvalidArgument error; any other err as it is. The store names a
// category "category"; this endpoint takes it as the path's {name}.
func renameField(err error, from, to string) error {
	var fe record.FieldErrors
	if !errors.As(err, &fe) {
		return err
	}
	out := slices.Clone(fe)
	for i := range out {
		if out[i].Field == from {
			out[i].Field = to
		}
	}
	return notify.InvalidFields(out)
}

// deleteCategory: DELETE /accounts/{id}/categories/{name}. Every
// recipient's choice of the category goes with it.
func (q *request) deleteCategory() {
	name, ok := q.categoryName()
	if !ok {
		return
	}
	a, ok := q.account()
	if !ok {
		return
	}
	err := q.h.preferences.RemoveCategory(q.ctx(), a.ID, name)
	if notify.CodeOf(err) == notify.CodeNotFound {
		writeError(q.w, notify.CodeNotFound, "the account has no category "+name, nil)
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("category.delete", a.ID, "category", name)
	writeOK(q.w, http.StatusOK, map[string]string{"account": a.ID, "removed": name})
}

// lookupPreferences: POST /accounts/{id}/preferences/lookup.
func (q *request) lookupPreferences() {
	var in lookupIn
	if !q.decode(&in) {
		return
	}
	// The channel and recipient are checked as the suppression list's.
	to, err := (&suppressionIn{Channel: in.Channel, To: in.To}).check(q.h.preferenceRecipients, false)
	if err != nil {
		q.fail(err, "")
		return
	}
	a, ok := q.account()
	if !ok {
		return
	}
	q.writePreferences(a.ID, record.Kind(in.Channel), to, nil)
}

// setPreferences: POST /accounts/{id}/preferences. Every choice is
// checked before any is recorded, so that a 400 records nothing.
func (q *request) setPreferences() {
	var in choicesIn
	if !q.decode(&in) {
		return
	}
	to, err := (&suppressionIn{Channel: in.Channel, To: in.To}).check(q.h.preferenceRecipients, false)
	fe := fieldsOf(err)
	names := slices.Sorted(maps.Keys(in.Choices)) // one order of errors and writes for one body
	var tag string
	if in.Locale != nil {
		var rule string
		var ok bool
		if tag, rule, ok = wants.Locale(*in.Locale); !ok {
			fe = append(fe, record.FieldError{Field: "locale", Message: rule})
		}
	}
	switch {
	case in.Choices == nil && in.Locale != nil: // the locale alone
	case in.Choices == nil:
		fe = append(fe, record.FieldError{Field: "choices", Message: wants.LocaleRequired})
	case len(in.Choices) == 0:
		fe = append(fe, record.FieldError{Field: "choices", Message: "must name at least one category"})
	}
	allowed := make(map[string]bool, len(names))
	for _, name := range names {
		if !storeutil.CategoryName(name) {
			fe = append(fe, record.FieldError{Field: choiceField(name), Message: "names no category: a category's name " + storeutil.CategoryRule})
			continue
		}
		switch v := string(bytes.TrimSpace(in.Choices[name])); v {
		case "true", "false":
			allowed[name] = v == "true"
		default:
			fe = append(fe, record.FieldError{Field: choiceField(name), Message: "must be a JSON boolean"})
		}
	}
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	a, cats, ok := q.categories() // read even for a locale alone: the account must exist
	if !ok {
		return
	}
	choices := make([]wants.Choice, 0, len(names))
	for _, name := range names {
		if !wants.Defined(cats, name) {
			fe = append(fe, record.FieldError{Field: choiceField(name), Message: wants.Undefined})
		}
		choices = append(choices, wants.Choice{Category: name, Allowed: allowed[name]})
	}
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	var locale *string
	if in.Locale != nil {
		locale = &tag
	}
	kind := record.Kind(in.Channel)
	removed, err := wants.Record(q.ctx(), q.h.preferences, a.ID, kind, to, choices, locale)
	switch {
	case removed != "":
		q.fail(notify.InvalidField(choiceField(removed), wants.Undefined), "")
		return
	case err != nil:
		q.fail(err, "")
		return
	}
	q.changed("preference.set", a.ID, "channel", in.Channel, "choices", allowed, "locale", in.Locale != nil)
	q.writePreferences(a.ID, kind, to, cats)
}

// maxShownName bounds how much of a choice's name an error repeats: a
// body may hold a name of any length.
const maxShownName = 64

// choiceField names an entry of "choices" in an error, its name cut to
// maxShownName bytes on a rune boundary.
func choiceField(name string) string {
	if len(name) > maxShownName {
		n := maxShownName
		for n > 0 && !utf8.RuneStart(name[n]) {
			n--
		}
		name = name[:n] + "..."
	}
	return "choices." + name
}

// writePreferences answers the recipient to's preferences on channel
// kind, category by category, with the account's categories cats (read
// when nil).
func (q *request) writePreferences(account string, kind record.Kind, to string, cats []store.Category) {
	prefs, tag, err := wants.Read(q.ctx(), q.h.preferences, account, kind, to, cats)
	if err != nil {
		q.fail(err, "")
		return
	}
	writeOK(q.w, http.StatusOK, preferencesJSON{Account: account, Channel: string(kind), To: to, Categories: prefs, Locale: tag})
}
