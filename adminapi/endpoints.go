package adminapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/internal/locale"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/wallet"
)

// Limits of the fields the API stores.
const (
	maxIDLen     = 64
	maxTextLen   = 200
	maxRefLen    = 128
	maxSenderIDs = 100
	maxDLTs      = 1000
	// maxVendorIDs bounds a DLT template's message_ids: one per provider.
	maxVendorIDs  = 20
	maxDLTContent = 2000
)

// validID reports whether s is 1 to max of letters, digits, '.', '_' and
// '-', starting with a letter or digit.
func validID(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

const idRule = "must be 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit"

// account loads the path's account; false when the answer is written.
func (q *request) account() (*notify.Account, bool) {
	id := q.r.PathValue("id")
	a, err := q.h.store.Account(q.ctx(), id)
	if notify.CodeOf(err) == notify.CodeNotFound {
		q.noAccount(id)
		return nil, false
	}
	if err != nil {
		q.fail(err, "")
		return nil, false
	}
	return a, true
}

// writeAccount answers a on the wire with status, with the wallet's
// balance when the wallet answers; settings of a that do not decode are
// answered as a store failure.
func (q *request) writeAccount(status int, a *notify.Account) {
	out, err := accountOf(a)
	if err != nil {
		q.fail(err, "")
		return
	}
	if b, err := q.h.store.Balance(q.ctx(), a.ID); err == nil {
		d, m := b.Available.Decimal(), b.Available.Minor
		out.Balance, out.BalanceMinor = &d, &m
	}
	writeOK(q.w, status, out)
}

// writeDLTs answers a's DLT templates with status; settings of a that do
// not decode are answered as a store failure.
func (q *request) writeDLTs(status int, a *notify.Account) {
	out, err := dltPageOf(a)
	if err != nil {
		q.fail(err, "")
		return
	}
	writeOK(q.w, status, out)
}

type dltIn struct {
	ID         string            `json:"id"`
	EntityID   string            `json:"entity_id"`
	Content    string            `json:"content"`
	MessageID  string            `json:"message_id"`
	MessageIDs map[string]string `json:"message_ids"`
	Slug       string            `json:"slug"`
}

// checkDLT validates a DLT template; field is the JSON path before the
// field names ("" or "dlt_templates[0].").
func checkDLT(t dltIn, field string, fe *record.FieldErrors) {
	if !validID(t.ID, maxIDLen) {
		fe.Add(field+"id", idRule)
	}
	if len(t.EntityID) > maxIDLen || t.EntityID != "" && !validKey(t.EntityID) {
		fe.Addf(field+"entity_id", "must be at most %d bytes of valid UTF-8 without control characters", maxIDLen)
	}
	if len(t.MessageID) > maxIDLen || t.MessageID != "" && !validKey(t.MessageID) {
		fe.Addf(field+"message_id", "must be at most %d bytes of valid UTF-8 without control characters", maxIDLen)
	}
	if len(t.MessageIDs) > maxVendorIDs {
		fe.Addf(field+"message_ids", "must have at most %d entries", maxVendorIDs)
	}
	for _, provider := range slices.Sorted(maps.Keys(t.MessageIDs)) {
		id := t.MessageIDs[provider]
		switch {
		case !validID(provider, maxIDLen):
			fe.Add(field+"message_ids", "has a key that is not a provider name: a key "+strings.TrimPrefix(idRule, "must "))
		case id == "" || len(id) > maxIDLen || !validKey(id):
			fe.Addf(field+"message_ids."+provider, "must be 1 to %d bytes of valid UTF-8 without control characters", maxIDLen)
		}
	}
	if t.Slug != "" && (len(t.Slug) > 64 || strings.Trim(t.Slug, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "") {
		fe.Add(field+"slug", "must be a template slug: at most 64 lower-case letters, digits, '-' and '_'")
	}
	switch {
	case strings.TrimSpace(t.Content) == "":
		fe.Add(field+"content", "is required")
	case !validText(t.Content):
		fe.Add(field+"content", "must be valid UTF-8 without NUL characters")
	case utf8.RuneCountInString(t.Content) > maxDLTContent:
		fe.Addf(field+"content", "must be at most %d characters", maxDLTContent)
	}
}

// money reads an amount given as a decimal string or in minor units,
// exactly one of them.
func money(decimal string, minor *int64, field string, c record.Currency, required bool, fe *record.FieldErrors) notify.Money {
	switch {
	case decimal != "" && minor != nil:
		fe.Add(field, "give "+field+" or "+field+"_minor, not both")
	case decimal != "":
		m, err := record.ParseMoney(decimal, c)
		if err != nil {
			fe.Addf(field, "must be a plain decimal with at most %d decimal places, such as \"100.50\"", c.Exponent)
		}
		return m
	case minor != nil:
		return notify.Money{Minor: *minor, Currency: c}
	case required:
		fe.Add(field, "is required (or "+field+"_minor)")
	}
	return notify.Money{Currency: c}
}

type createIn struct {
	ID                  string   `json:"id"`
	Name                string   `json:"name"`
	VendorID            string   `json:"vendor_id"`
	Currency            string   `json:"currency"`
	PrimaryGateway      string   `json:"primary_gateway"`
	PricePlan           string   `json:"price_plan"`
	SenderIDs           []string `json:"sender_ids"`
	DLTTemplates        []dltIn  `json:"dlt_templates"`
	Disabled            bool     `json:"disabled"`
	Region              string   `json:"region"`
	Countries           []string `json:"countries"`
	Locale              string   `json:"locale"`
	OpeningBalance      string   `json:"opening_balance"`
	OpeningBalanceMinor *int64   `json:"opening_balance_minor"`
}

// currency reads the currency of a new account: an ISO 4217 code, INR
// when left out, among WithCurrencies' when it was given.
func (h *Handler) currency(code string, fe *record.FieldErrors) record.Currency {
	if code == "" {
		code = record.INR().Code
	}
	cur, err := wallet.CurrencyOf(code)
	if err != nil {
		fe.Addf("currency", "must be an ISO 4217 code in capitals, such as USD (or left out: INR)")
		return record.INR() // to read the opening balance by, for its own errors
	}
	if h.currencies != nil && !slices.Contains(h.currencies, code) {
		fe.Addf("currency", "must be one of %s, the currencies this server has prices in", strings.Join(h.currencies, ", "))
	}
	return cur
}

// createAccount: POST /accounts.
func (q *request) createAccount() {
	var in createIn
	if !q.decode(&in) {
		return
	}
	var fe record.FieldErrors
	if !validID(in.ID, maxIDLen) {
		fe.Add("id", idRule)
	}
	if in.Name == "" {
		in.Name = in.ID
	}
	for _, f := range []struct{ name, v string }{{"name", in.Name}, {"vendor_id", in.VendorID}, {"price_plan", in.PricePlan}} {
		if len(f.v) > maxTextLen || !validText(f.v) {
			fe.Addf(f.name, "must be valid UTF-8 without NUL characters, of at most %d bytes", maxTextLen)
		}
	}
	cur := q.h.currency(in.Currency, &fe)
	switch chat.Gateway(in.PrimaryGateway) {
	case "", chat.GatewayCloud, chat.GatewayQR:
	default:
		fe.Add("primary_gateway", "must be cloud or qr (or left out: cloud)")
	}
	if len(in.SenderIDs) > maxSenderIDs {
		fe.Addf("sender_ids", "must have at most %d entries", maxSenderIDs)
	}
	for i, s := range in.SenderIDs {
		if len(s) > maxIDLen || !validKey(s) {
			fe.Addf(fmt.Sprintf("sender_ids[%d]", i), "must be 1 to %d bytes of valid UTF-8 without control characters", maxIDLen)
		}
	}
	checkPlaces(in.Region, in.Countries, &fe)
	in.Locale = checkLocale(in.Locale, &fe)
	if len(in.DLTTemplates) > maxDLTs {
		fe.Addf("dlt_templates", "must have at most %d entries", maxDLTs)
	}
	for i, t := range in.DLTTemplates {
		checkDLT(t, fmt.Sprintf("dlt_templates[%d].", i), &fe)
		if slices.ContainsFunc(in.DLTTemplates[:i], func(d dltIn) bool { return d.ID == t.ID }) {
			fe.Addf(fmt.Sprintf("dlt_templates[%d].id", i), "is given twice")
		}
	}
	opening := money(in.OpeningBalance, in.OpeningBalanceMinor, "opening_balance", cur, false, &fe)
	if opening.Minor < 0 {
		fe.Add("opening_balance", "must not be negative")
	}
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	acct, err := in.account(cur)
	if err != nil {
		q.fail(err, "")
		return
	}
	key := newAPIKey()
	err = q.h.store.CreateAccount(q.ctx(), acct, key, opening)
	if notify.CodeOf(err) == notify.CodeConflict {
		q.fail(err, fmt.Sprintf("account %q exists already", in.ID))
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("account.create", acct.ID, "opening_minor", opening.Minor, "disabled", acct.Disabled)
	out, err := accountOf(acct)
	if err != nil {
		q.fail(err, "")
		return
	}
	d := opening.Decimal()
	out.Balance, out.BalanceMinor, out.APIKey = &d, &opening.Minor, key
	q.w.Header().Set("Location", BasePath+"/accounts/"+acct.ID)
	writeOK(q.w, http.StatusCreated, out)
}

type accountsPage struct {
	Accounts []accountJSON `json:"accounts"`
	Next     string        `json:"next,omitempty"`
}

// listAccounts: GET /accounts.
func (q *request) listAccounts() {
	limit, after, ok := pageQuery(q, accountCursor)
	if !ok {
		return
	}
	as, err := q.h.store.Accounts(q.ctx(), after, limit+1)
	if err != nil {
		q.fail(err, "")
		return
	}
	out := accountsPage{Accounts: []accountJSON{}}
	as, out.Next = onePage(as, limit, func(a *notify.Account) string { return encodeCursor(a.ID) })
	for _, a := range as {
		acct, err := accountOf(a)
		if err != nil {
			q.fail(err, "")
			return
		}
		out.Accounts = append(out.Accounts, acct)
	}
	writeOK(q.w, http.StatusOK, out)
}

// getAccount: GET /accounts/{id}.
func (q *request) getAccount() {
	a, ok := q.account()
	if !ok {
		return
	}
	q.writeAccount(http.StatusOK, a)
}

func (q *request) disable() { q.setDisabled(true) }
func (q *request) enable()  { q.setDisabled(false) }

// setDisabled: POST /accounts/{id}/disable and /enable. Repeating one is
// harmless.
func (q *request) setDisabled(disabled bool) {
	action := "account.enable"
	if disabled {
		action = "account.disable"
	}
	q.updateAccount(action, func(a *notify.Account) []any {
		a.Disabled = disabled
		return nil
	})
}

// updateAccount changes the account of the path's {id} with change,
// which returns the attributes of the change's log line, logs it as
// action and answers the account: 404 when there is none, the store's
// failure as fail answers it.
func (q *request) updateAccount(action string, change func(*notify.Account) []any) {
	id := q.r.PathValue("id")
	var attrs []any
	a, err := q.h.store.UpdateAccount(q.ctx(), id, func(a *notify.Account) error {
		attrs = change(a)
		return nil
	})
	if notify.CodeOf(err) == notify.CodeNotFound {
		q.noAccount(id)
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed(action, id, attrs...)
	q.writeAccount(http.StatusOK, a)
}

// placesIn is the body of PUT /accounts/{id}/countries.
type placesIn struct {
	Region    string   `json:"region"`
	Countries []string `json:"countries"`
}

// putCountries: PUT /accounts/{id}/countries sets where the account
// sends: its region (left out: as it was) and the countries it may send
// to (empty: its region only). Sending abroad is turned on here, on
// purpose: SMS pumping lives on accounts that may send anywhere.
func (q *request) putCountries() {
	var in placesIn
	if !q.decode(&in) {
		return
	}
	var fe record.FieldErrors
	checkPlaces(in.Region, in.Countries, &fe)
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	q.updateAccount("account.countries", func(a *notify.Account) []any {
		if in.Region != "" {
			a.Region = in.Region
		}
		a.Countries = in.Countries
		region, countries := places(a)
		return []any{"region", region, "countries", countries}
	})
}

// localeIn is the body of PUT /accounts/{id}/locale.
type localeIn struct {
	Locale string `json:"locale"`
}

// putLocale: PUT /accounts/{id}/locale sets the account's default locale,
// the BCP 47 tag whose template variants its sends render when a request
// names none ("" for the templates' base).
func (q *request) putLocale() {
	var in localeIn
	if !q.decode(&in) {
		return
	}
	var fe record.FieldErrors
	tag := checkLocale(in.Locale, &fe)
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	q.updateAccount("account.locale", func(a *notify.Account) []any {
		a.Locale = tag
		return []any{"locale", tag}
	})
}

// checkLocale returns a locale in canonical form ("hi-IN"), adding to fe
// when it is no BCP 47 tag; "" stays "".
func checkLocale(tag string, fe *record.FieldErrors) string {
	if tag == "" {
		return ""
	}
	c, ok := locale.Canonical(tag)
	if !ok {
		fe.Add("locale", locale.Rule)
	}
	return c
}

// maxCountries bounds an account's allow list: there are 249 ISO 3166-1
// countries.
const maxCountries = 250

// checkPlaces adds to fe what is wrong with a region and an allow list:
// each an ISO 3166-1 alpha-2 code in capitals (the list may hold "*",
// every country), none twice.
func checkPlaces(region string, countries []string, fe *record.FieldErrors) {
	if region != "" && !phone.IsRegion(region) {
		fe.Add("region", "must be an ISO 3166-1 alpha-2 code in capitals, such as IN or US")
	}
	if len(countries) > maxCountries {
		fe.Addf("countries", "must have at most %d entries", maxCountries)
		return
	}
	for i, c := range countries {
		field := fmt.Sprintf("countries[%d]", i)
		switch {
		case c != phone.AnyCountry && !phone.IsRegion(c):
			fe.Add(field, `must be an ISO 3166-1 alpha-2 code in capitals, such as US, or "*" for every country`)
		case slices.Contains(countries[:i], c):
			fe.Add(field, "is given twice")
		}
	}
}

type rotateOut struct {
	Account string `json:"account"`
	APIKey  string `json:"api_key"`
}

// rotateKey: POST /accounts/{id}/rotate-key. The new key is in this
// answer only; every earlier key of the account stops working.
func (q *request) rotateKey() {
	id := q.r.PathValue("id")
	key := newAPIKey()
	err := q.h.store.ReplaceAPIKeys(q.ctx(), id, key)
	if notify.CodeOf(err) == notify.CodeNotFound {
		q.noAccount(id)
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("account.rotate_key", id)
	writeOK(q.w, http.StatusOK, rotateOut{Account: id, APIKey: key})
}

type topUpIn struct {
	Amount      string `json:"amount"`
	AmountMinor *int64 `json:"amount_minor"`
	Reference   string `json:"reference"`
}

// topUp: POST /accounts/{id}/topups. The reference makes it idempotent.
func (q *request) topUp() {
	var in topUpIn
	if !q.decode(&in) {
		return
	}
	id := q.r.PathValue("id")
	bal, err := q.h.store.Balance(q.ctx(), id)
	if notify.CodeOf(err) == notify.CodeNotFound {
		q.noAccount(id)
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	cur := bal.Available.Currency
	var fe record.FieldErrors
	amount := money(in.Amount, in.AmountMinor, "amount", cur, true, &fe)
	if !fe.Has("amount") && amount.Minor <= 0 {
		fe.Add("amount", "must be more than zero")
	}
	if !validRef(in.Reference) {
		fe.Addf("reference", "must be 1 to %d printable ASCII characters without spaces", maxRefLen)
	}
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	b, err := q.h.store.Credit(q.ctx(), id, amount, TopUpRefPrefix+in.Reference)
	switch notify.CodeOf(err) {
	case "":
	case notify.CodeConflict:
		q.fail(err, fmt.Sprintf("reference %q was used for another top-up amount", in.Reference))
		return
	case notify.CodeNotFound:
		q.noAccount(id)
		return
	default:
		q.fail(err, "")
		return
	}
	q.changed("wallet.topup", id, "reference", in.Reference, "amount_minor", amount.Minor,
		"balance_minor", b.Available.Minor)
	writeOK(q.w, http.StatusOK, topUpJSON{
		balanceJSON: balanceJSON{Account: id, Balance: b.Available.Decimal(), BalanceMinor: b.Available.Minor,
			Currency: currencyOf(b.Available.Currency)},
		Reference: in.Reference, Amount: amount.Decimal(), AmountMinor: amount.Minor})
}

func validRef(s string) bool {
	if s == "" || len(s) > maxRefLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// ledger: GET /accounts/{id}/ledger, oldest first.
func (q *request) ledger() {
	a, entries, next, ok := accountPage(q, ledgerCursor, q.h.store.Statement, func(e record.LedgerEntry) string {
		return encodeCursor(strconv.FormatInt(e.Seq, 10))
	})
	if !ok {
		return
	}
	out := ledgerJSON{Account: a.ID, Entries: []ledgerEntryJSON{}, Next: next}
	for _, e := range entries {
		kind, amount := "credit", e.Amount
		if amount.Minor < 0 {
			kind, amount.Minor = "debit", -amount.Minor
		}
		if out.Currency == nil {
			c := currencyOf(e.Amount.Currency)
			out.Currency = &c
		}
		out.Entries = append(out.Entries, ledgerEntryJSON{Seq: e.Seq, Kind: kind, Ref: e.Ref,
			Amount: amount.Decimal(), AmountMinor: amount.Minor, Balance: e.Balance.Decimal(),
			BalanceMinor: e.Balance.Minor, At: timeText(e.At)})
	}
	writeOK(q.w, http.StatusOK, out)
}

type messagesPage struct {
	Account  string            `json:"account"`
	Messages []json.RawMessage `json:"messages"`
	Next     string            `json:"next,omitempty"`
}

// messages: GET /accounts/{id}/messages, newest first.
func (q *request) messages() {
	a, ms, next, ok := accountPage(q, messageCursor, q.h.store.AccountMessages, nextMessageCursor)
	if !ok {
		return
	}
	out := messagesPage{Account: a.ID, Messages: []json.RawMessage{}, Next: next}
	for _, m := range ms {
		out.Messages = append(out.Messages, httpapi.EncodeMessage(m))
	}
	writeOK(q.w, http.StatusOK, out)
}

// listDLT: GET /accounts/{id}/dlt-templates.
func (q *request) listDLT() {
	a, ok := q.account()
	if !ok {
		return
	}
	q.writeDLTs(http.StatusOK, a)
}

type dltBody struct {
	EntityID   string            `json:"entity_id"`
	Content    string            `json:"content"`
	MessageID  string            `json:"message_id"`
	MessageIDs map[string]string `json:"message_ids"`
	Slug       string            `json:"slug"`
}

// putDLT: PUT /accounts/{id}/dlt-templates/{template}: add, or replace
// the template with that ID.
func (q *request) putDLT() {
	var in dltBody
	if !q.decode(&in) {
		return
	}
	t := dltIn{ID: q.r.PathValue("template"), EntityID: in.EntityID, Content: in.Content, MessageID: in.MessageID,
		MessageIDs: in.MessageIDs, Slug: in.Slug}
	var fe record.FieldErrors
	checkDLT(t, "", &fe)
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	id := q.r.PathValue("id")
	replaced := false
	a, err := q.h.store.UpdateAccount(q.ctx(), id, func(a *notify.Account) error {
		return updateSMS(a, func(s *sms.Settings) error {
			i := slices.IndexFunc(s.DLTTemplates, func(d sms.DLTTemplate) bool { return d.ID == t.ID })
			if replaced = i >= 0; replaced {
				s.DLTTemplates[i] = t.template()
				return nil
			}
			if len(s.DLTTemplates) >= maxDLTs {
				return notify.InvalidField("id", fmt.Sprintf("the account has %d DLT templates, the most it may have", maxDLTs))
			}
			s.DLTTemplates = append(s.DLTTemplates, t.template())
			return nil
		})
	})
	if notify.CodeOf(err) == notify.CodeNotFound {
		q.noAccount(id)
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("dlt_template.put", id, "template", t.ID, "replaced", replaced)
	status := http.StatusCreated
	if replaced {
		status = http.StatusOK
	}
	q.writeDLTs(status, a)
}

// errNoTemplate is update's error when the DLT template is missing.
var errNoTemplate = errors.New("no such DLT template")

// deleteDLT: DELETE /accounts/{id}/dlt-templates/{template}.
func (q *request) deleteDLT() {
	id, tid := q.r.PathValue("id"), q.r.PathValue("template")
	a, err := q.h.store.UpdateAccount(q.ctx(), id, func(a *notify.Account) error {
		return updateSMS(a, func(s *sms.Settings) error {
			i := slices.IndexFunc(s.DLTTemplates, func(d sms.DLTTemplate) bool { return d.ID == tid })
			if i < 0 {
				return errNoTemplate
			}
			s.DLTTemplates = slices.Delete(s.DLTTemplates, i, i+1)
			return nil
		})
	})
	switch {
	case errors.Is(err, errNoTemplate):
		writeError(q.w, notify.CodeNotFound, fmt.Sprintf("account %q has no DLT template %q", id, tid), nil)
		return
	case notify.CodeOf(err) == notify.CodeNotFound:
		q.noAccount(id)
		return
	case err != nil:
		q.fail(err, "")
		return
	}
	q.changed("dlt_template.delete", id, "template", tid)
	q.writeDLTs(http.StatusOK, a)
}

type templatesPage struct {
	Account   string         `json:"account"`
	Templates []templateJSON `json:"templates"`
}

// listTemplates: GET /accounts/{id}/templates.
func (q *request) listTemplates() {
	a, ok := q.account()
	if !ok {
		return
	}
	ts, err := q.h.store.Templates(q.ctx(), a.ID)
	if err != nil {
		q.fail(err, "")
		return
	}
	out := templatesPage{Account: a.ID, Templates: []templateJSON{}}
	for _, t := range ts {
		out.Templates = append(out.Templates, templateOf(t))
	}
	writeOK(q.w, http.StatusOK, out)
}

// putTemplate: PUT /accounts/{id}/templates/{slug}: create or replace a
// custom template, which must compile (template.Check).
func (q *request) putTemplate() {
	var in templateIn
	if !q.decode(&in) {
		return
	}
	t := in.template(q.r.PathValue("slug"))
	var fe record.FieldErrors
	if !validText(in.Class) {
		fe.Add("class", "must be valid UTF-8 without NUL characters")
	}
	for i, v := range in.parts() {
		if !validText(*v) {
			fe.Add(templateParts[i].field, "must be valid UTF-8 without NUL characters")
		}
	}
	for i, v := range in.Variables {
		if !validText(v) {
			fe.Add(fmt.Sprintf("variables[%d]", i), "must be valid UTF-8 without NUL characters")
		}
	}
	in.checkLocales(&fe)
	if err := notify.InvalidFields(fe); err != nil {
		q.fail(err, "")
		return
	}
	if field, rule := checkTemplate(t); field != "" {
		q.fail(notify.InvalidField(field, rule), "")
		return
	}
	canonicalLocales(t)
	a, ok := q.account()
	if !ok {
		return
	}
	old, err := q.h.store.Template(q.ctx(), a.ID, t.Slug)
	replaced := err == nil
	if err != nil && notify.CodeOf(err) != notify.CodeNotFound {
		q.fail(err, "")
		return
	}
	var kept []string
	if replaced {
		// The request cannot name the bodies of kinds the wire has no
		// fields for: they stay, which only the log tells.
		if kept = keepOtherKinds(t, old); len(kept) > 0 {
			if field, rule := checkTemplate(t); field != "" {
				q.fail(notify.InvalidField("body", fmt.Sprintf("the template's bodies of %s, which a PUT keeps, do not compile with it: %s",
					strings.Join(kept, ", "), rule)), "")
				return
			}
		}
	}
	if err := q.h.store.PutTemplate(q.ctx(), a.ID, t); err != nil {
		q.fail(err, "")
		return
	}
	attrs := []any{"template", t.Slug, "replaced", replaced}
	if len(kept) > 0 {
		attrs = append(attrs, "kept_kinds", kept)
	}
	q.changed("template.put", a.ID, attrs...)
	status := http.StatusCreated
	if replaced {
		status = http.StatusOK
	}
	writeOK(q.w, status, templateOf(t))
}

// deleteTemplate: DELETE /accounts/{id}/templates/{slug}.
func (q *request) deleteTemplate() {
	a, ok := q.account()
	if !ok {
		return
	}
	slug := q.r.PathValue("slug")
	err := q.h.store.DeleteTemplate(q.ctx(), a.ID, slug)
	if notify.CodeOf(err) == notify.CodeNotFound {
		writeError(q.w, notify.CodeNotFound, fmt.Sprintf("account %q has no template %q", a.ID, slug), nil)
		return
	}
	if err != nil {
		q.fail(err, "")
		return
	}
	q.changed("template.delete", a.ID, "template", slug)
	writeOK(q.w, http.StatusOK, map[string]string{"account": a.ID, "deleted": slug})
}
