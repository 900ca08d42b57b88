package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/errtext"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/verify"
)

// WithVerifications serves the verifications of svc (package verify)
// under BasePath, beyond the spec:
//
//	POST   /verifications              start one: a code by SMS and chat at once, or the channels asked for
//	POST   /verifications/{id}/check   check the code the user typed
//	POST   /verifications/{id}/resend  send the same code again
//	GET    /verifications/{id}         where it stands
//	DELETE /verifications/{id}         cancel it
//
// The contract, as docs/api.md states it:
//
//   - The routes are authenticated as the others; the API key's account
//     is the verification's, and another account's verification is 404,
//     as a missing one is. svc should send through the Handler's
//     Notifier (it is charged, limited and recorded as any send there).
//   - Bodies are read as every POST's (one JSON object, strict keys,
//     all bad fields at once) and, beyond them, a key the endpoint does
//     not take is a 400 naming it: no client of the spec sends these.
//     They take no Idempotency-Key (a 400): a verification is its own
//     key, and a repeated start would be another verification.
//   - The code is never in an answer, an error, or the access log: the
//     log names the verification (verification_id) and the messages a
//     send made (message_id).
//   - A start, resend, check or cancel runs detached from the client's
//     connection, bounded by WithSendTimeout, as a send does.
//   - Errors answer as every error does (StatusOf); a refusal of the
//     fraud guard adds its rule to the error object ("rule":
//     "recipient_velocity"), with Retry-After when it is rate_limited.
//
// Without this option the paths are 404, as any unknown path.
func WithVerifications(svc *verify.Service) Option {
	return func(h *Handler) error {
		if svc == nil {
			return errors.New("WithVerifications: nil service")
		}
		h.verify = svc
		return nil
	}
}

// verifyStartBody is the JSON of POST /verifications.
type verifyStartBody struct {
	To         value       `json:"to"`
	Channels   channelList `json:"channels"`
	Purpose    value       `json:"purpose"`
	Brand      value       `json:"brand"`
	Domain     value       `json:"domain"`
	Length     value       `json:"length"`
	TTLSeconds value       `json:"ttl_seconds"`
	Locale     value       `json:"locale"`
	WebOTPHost value       `json:"webotp_host"`
	AppHash    value       `json:"app_hash"`
	Requester  value       `json:"requester"`
}

// verifyCheckBody is the JSON of POST /verifications/{id}/check.
type verifyCheckBody struct {
	Code      value `json:"code"`
	Requester value `json:"requester"`
}

// verifyResendBody is the JSON of POST /verifications/{id}/resend.
type verifyResendBody struct {
	Channels   channelList `json:"channels"`
	Brand      value       `json:"brand"`
	Domain     value       `json:"domain"`
	Locale     value       `json:"locale"`
	WebOTPHost value       `json:"webotp_host"`
	AppHash    value       `json:"app_hash"`
	Requester  value       `json:"requester"`
}

// The keys of the verification bodies, from their structs.
var (
	verifyStartKeys  = bodyKeys(reflect.TypeFor[verifyStartBody]())
	verifyCheckKeys  = bodyKeys(reflect.TypeFor[verifyCheckBody]())
	verifyResendKeys = bodyKeys(reflect.TypeFor[verifyResendBody]())
)

// maxCheckCode bounds the code a check takes: longer than any code, and
// refused before it is counted as a guess.
const maxCheckCode = 64

// channelList is the "channels" field, decoded leniently as value is:
// what is wrong is kept for the field list.
type channelList struct {
	names []string
	set   bool   // present and not null
	bad   string // what is wrong
	badAt string // where, when it is an element ("channels[1]")
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *channelList) UnmarshalJSON(b []byte) error {
	*c = channelList{}
	if len(b) == 0 || b[0] == 'n' {
		return nil
	}
	c.set = true
	if b[0] != '[' {
		c.bad = `must be an array of channels such as ["sms","chat"], not ` + jsonWhat(b)
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		c.bad = "must be an array of strings"
		return nil
	}
	for i, e := range raw {
		var s string
		if len(e) == 0 || e[0] != '"' || json.Unmarshal(e, &s) != nil {
			c.badAt = "channels[" + strconv.Itoa(i) + "]"
			c.bad = "must be a string, sms, chat or email, not " + jsonWhat(e)
			return nil
		}
		c.names = append(c.names, s)
	}
	return nil
}

// jsonWhat names the kind of a JSON value, for an error.
func jsonWhat(b []byte) string {
	var v value
	_ = v.UnmarshalJSON(b)
	switch v.kind {
	case 's':
		return "a string"
	case 'n', 'f':
		return "a number"
	case 'x':
		return v.what
	}
	return "null"
}

// get returns the channels, or nil with the problem in fe under name.
func (c *channelList) get(fe *record.FieldErrors, name string) []verify.Channel {
	switch {
	case c.bad != "":
		at := name
		if c.badAt != "" {
			at = c.badAt
		}
		fe.Add(at, c.bad)
		return nil
	case c.set && len(c.names) == 0:
		fe.Add(name, "must name at least one channel, sms, chat or email (leave it out for sms and chat)")
		return nil
	}
	var out []verify.Channel
	for _, n := range c.names {
		out = append(out, verify.Channel(n))
	}
	return out
}

// whole returns the field as a whole number, and whether it was given.
// Bad shapes are recorded in fe under name.
func (v *value) whole(fe *record.FieldErrors, name string) (int, bool) {
	switch v.kind {
	case 0:
		return 0, false
	case 'n':
		n, err := strconv.Atoi(v.s)
		if err != nil {
			fe.Add(name, "is too large")
			return 0, false
		}
		return n, true
	case 'f':
		fe.Add(name, "must be a whole number without sign, fraction or exponent")
	case 's':
		fe.Add(name, "must be a whole number, not a string")
	default:
		fe.Add(name, "must be a whole number, not "+v.what)
	}
	return 0, false
}

// decodeVerifyStart decodes the body of POST /verifications into the
// recipient and the options of verify.Service.Start.
func decodeVerifyStart(body []byte, m Header) (string, verify.StartOptions, error) {
	var w verifyStartBody
	if err := unmarshalKeys(body, &w, verifyStartKeys, true); err != nil {
		return "", verify.StartOptions{}, err
	}
	var fe record.FieldErrors
	to := w.To.str(&fe, "to", true)
	opts := verify.StartOptions{
		Channels:   w.Channels.get(&fe, "channels"),
		Purpose:    w.Purpose.str(&fe, "purpose", false),
		Brand:      w.Brand.str(&fe, "brand", false),
		Domain:     w.Domain.str(&fe, "domain", false),
		Locale:     w.Locale.str(&fe, "locale", false),
		WebOTPHost: w.WebOTPHost.str(&fe, "webotp_host", false),
		AppHash:    w.AppHash.str(&fe, "app_hash", false),
		Requester:  w.Requester.str(&fe, "requester", false),
	}
	if opts.Domain == "" {
		opts.Domain = m.Domain
	}
	if n, ok := w.Length.whole(&fe, "length"); ok {
		if n < verify.MinLength || n > verify.MaxLength {
			fe.Addf("length", "must be %d to %d digits, found %d", verify.MinLength, verify.MaxLength, n)
		}
		opts.Length = n
	}
	if n, ok := w.TTLSeconds.whole(&fe, "ttl_seconds"); ok {
		lo, hi := int(verify.MinTTL/time.Second), int(verify.MaxTTL/time.Second)
		if n < lo || n > hi {
			fe.Addf("ttl_seconds", "must be %d to %d seconds, found %d", lo, hi, n)
		}
		opts.TTL = time.Duration(n) * time.Second
	}
	if err := notify.InvalidFields(fe); err != nil {
		return "", verify.StartOptions{}, err
	}
	return to, opts, nil
}

// decodeVerifyCheck decodes the body of POST /verifications/{id}/check:
// the code the user typed. A missing one is refused before it would be
// counted as a wrong guess.
func decodeVerifyCheck(body []byte) (string, verify.CheckOptions, error) {
	var w verifyCheckBody
	if err := unmarshalKeys(body, &w, verifyCheckKeys, true); err != nil {
		return "", verify.CheckOptions{}, err
	}
	var fe record.FieldErrors
	code := w.Code.str(&fe, "code", true)
	switch {
	case fe.Has("code"):
	case code == "":
		fe.Add("code", "is required")
	case len(code) > maxCheckCode:
		fe.Addf("code", "must be at most %d characters", maxCheckCode)
	}
	opts := verify.CheckOptions{Requester: w.Requester.str(&fe, "requester", false)} // its rule is verify's
	if err := notify.InvalidFields(fe); err != nil {
		return "", verify.CheckOptions{}, err
	}
	return code, opts, nil
}

// decodeVerifyResend decodes the body of POST /verifications/{id}/resend,
// which may be empty.
func decodeVerifyResend(body []byte, m Header) (verify.ResendOptions, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return verify.ResendOptions{Domain: m.Domain}, nil
	}
	var w verifyResendBody
	if err := unmarshalKeys(body, &w, verifyResendKeys, true); err != nil {
		return verify.ResendOptions{}, err
	}
	var fe record.FieldErrors
	opts := verify.ResendOptions{
		Channels:   w.Channels.get(&fe, "channels"),
		Brand:      w.Brand.str(&fe, "brand", false),
		Domain:     w.Domain.str(&fe, "domain", false),
		Locale:     w.Locale.str(&fe, "locale", false),
		WebOTPHost: w.WebOTPHost.str(&fe, "webotp_host", false),
		AppHash:    w.AppHash.str(&fe, "app_hash", false),
		Requester:  w.Requester.str(&fe, "requester", false),
	}
	if opts.Domain == "" {
		opts.Domain = m.Domain
	}
	if err := notify.InvalidFields(fe); err != nil {
		return verify.ResendOptions{}, err
	}
	return opts, nil
}

// noIdempotencyKey refuses an Idempotency-Key on a verification route
// (see WithVerifications); it answers the error itself and returns false.
func noIdempotencyKey(x *exchange, r *http.Request) bool {
	if _, ok := r.Header["Idempotency-Key"]; !ok {
		return true
	}
	writeErr(x, r, notify.Errorf(notify.CodeInvalidArgument,
		"the verification endpoints take no Idempotency-Key: a verification is its own key (resend, check or cancel it by its ID), and a repeated start is another verification"), nil)
	return false
}

// verificationOf returns the path's verification ID ({id}), which it
// names in x for the access log, and whether the request carries no
// Idempotency-Key (noIdempotencyKey, which answers one).
func verificationOf(x *exchange, r *http.Request) (id string, ok bool) {
	id = r.PathValue("id")
	x.verification = id
	return id, noIdempotencyKey(x, r)
}

// startVerification answers POST /verifications.
func (h *Handler) startVerification(x *exchange, r *http.Request, acct *notify.Account) {
	if !noIdempotencyKey(x, r) || !h.readBody(x, r) {
		return
	}
	to, opts, err := decodeVerifyStart(x.body, headerMeta(r))
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	v, err := h.verify.Start(ctx, acct.ID, to, opts)
	answerVerification(x, r, v, err)
}

// resendVerification answers POST /verifications/{id}/resend, whose body
// may be left out (no Content-Type, no body).
func (h *Handler) resendVerification(x *exchange, r *http.Request, acct *notify.Account) {
	id, ok := verificationOf(x, r)
	if !ok {
		return
	}
	x.body = x.body[:0]
	noBody := r.Header.Get("Content-Type") == "" && (r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody)
	if !noBody && !h.readBody(x, r) {
		return
	}
	opts, err := decodeVerifyResend(x.body, headerMeta(r))
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	v, err := h.verify.Resend(ctx, acct.ID, id, opts)
	answerVerification(x, r, v, err)
}

// checkVerification answers POST /verifications/{id}/check.
func (h *Handler) checkVerification(x *exchange, r *http.Request, acct *notify.Account) {
	id, ok := verificationOf(x, r)
	if !ok || !h.readBody(x, r) {
		return
	}
	code, opts, err := decodeVerifyCheck(x.body)
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	res, err := h.verify.Check(ctx, acct.ID, id, code, opts)
	if err != nil {
		writeErr(x, r, err, nil)
		return
	}
	out := checkJSON{Success: true, VerificationID: id, Status: string(res.Status), Approved: res.Approved(),
		AttemptsLeft: res.AttemptsLeft}
	writeVerificationJSON(x, r, out)
}

// cancelVerification answers DELETE /verifications/{id}.
func (h *Handler) cancelVerification(x *exchange, r *http.Request, acct *notify.Account) {
	id, ok := verificationOf(x, r)
	if !ok {
		return
	}
	ctx, cancel := h.sendContext(x, r)
	defer cancel()
	v, err := h.verify.Cancel(ctx, acct.ID, id)
	answerVerification(x, r, v, err)
}

// getVerification answers GET /verifications/{id}.
func (h *Handler) getVerification(x *exchange, r *http.Request, acct *notify.Account) {
	id := r.PathValue("id")
	x.verification = id
	v, err := h.verify.Get(r.Context(), acct.ID, id)
	answerVerification(x, r, v, err)
}

// verificationJSON is the wire form of a verification: never its code.
type verificationJSON struct {
	Success        bool      `json:"success"`
	VerificationID string    `json:"verification_id"`
	To             string    `json:"to"`
	Purpose        string    `json:"purpose,omitempty"`
	Status         string    `json:"status"`
	Channels       []string  `json:"channels"`
	AttemptsLeft   int       `json:"attempts_left"`
	SendsLeft      int       `json:"sends_left"`
	CreatedAt      time.Time `json:"created_at"`
	ExpiresAt      time.Time `json:"expires_at"`
	// Cost, CostMinor and Currency are what the legs of this send keep
	// charged, when they were priced.
	Cost      string        `json:"cost,omitempty"`
	CostMinor *int64        `json:"cost_minor,omitempty"`
	Currency  *currencyJSON `json:"currency,omitempty"`
	Legs      []verifyLeg   `json:"legs,omitempty"`
}

// verifyLeg is one message of a verification's send.
type verifyLeg struct {
	Success   bool          `json:"success"`
	Channel   string        `json:"channel"`
	MessageID string        `json:"message_id,omitempty"`
	Status    string        `json:"status"`
	Provider  string        `json:"provider,omitempty"`
	Cost      string        `json:"cost,omitempty"`
	CostMinor *int64        `json:"cost_minor,omitempty"`
	Error     *legErrorJSON `json:"error,omitempty"`
}

type legErrorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// checkJSON is the answer to a check.
type checkJSON struct {
	Success        bool   `json:"success"`
	VerificationID string `json:"verification_id"`
	Status         string `json:"status"`
	Approved       bool   `json:"approved"`
	AttemptsLeft   int    `json:"attempts_left"`
}

// notifyCodes are the codes a leg's error text may carry.
var notifyCodes = [...]notify.Code{notify.CodeInvalidArgument, notify.CodeUnauthenticated, notify.CodePermissionDenied,
	notify.CodeNotFound, notify.CodeInsufficientFunds, notify.CodeRateLimited, notify.CodeConflict,
	notify.CodeUnavailable, notify.CodeRejected, notify.CodeOutcomeUnknown, notify.CodeDeadlineExceeded,
	notify.CodeCanceled, notify.CodeInternal}

// legCode reads the code of a leg's error text ("op: provider p: code:
// cause"); a leg keeps its text only.
func legCode(l *verify.Leg) notify.Code {
	_, cause := errtext.SplitText("", l.Error)
	head, _, _ := strings.Cut(cause, ": ")
	for _, c := range notifyCodes {
		if head == string(c) {
			return c
		}
	}
	if l.Status == record.StateUnknown {
		return notify.CodeOutcomeUnknown
	}
	return notify.CodeInternal
}

// legsJSON returns the wire form of legs, and what the log is to get of
// their errors that the answer does not show.
func legsJSON(legs []verify.Leg, id string) ([]verifyLeg, string) {
	var out []verifyLeg
	var detail []string
	for i := range legs {
		l := &legs[i]
		w := verifyLeg{Success: l.Status == record.StateSent, Channel: string(l.Channel), MessageID: l.MessageID,
			Status: string(l.Status), Provider: l.Provider}
		if l.Cost.Currency.Code != "" {
			w.Cost, w.CostMinor = l.Cost.Decimal(), &l.Cost.Minor
		}
		if l.Error != "" {
			code := legCode(l)
			w.Error = &legErrorJSON{Code: string(code), Message: legMessage(code, l.Error, id)}
			if _, ok := errtext.ShownText(code, l.Error); !ok {
				detail = append(detail, "leg "+string(l.Channel)+": "+l.Error)
			}
		}
		out = append(out, w)
	}
	return out, strings.Join(detail, "; ")
}

// toVerificationJSON returns the wire form of v; id is the request's.
func toVerificationJSON(v *verify.Verification, id string) (verificationJSON, string) {
	out := verificationJSON{Success: true, VerificationID: v.ID, To: specNumber(v.To), Purpose: v.Purpose,
		Status: string(v.Status), Channels: make([]string, len(v.Channels)),
		AttemptsLeft: v.AttemptsLeft, SendsLeft: v.SendsLeft,
		CreatedAt: v.CreatedAt.UTC(), ExpiresAt: v.ExpiresAt.UTC()}
	for i, c := range v.Channels {
		out.Channels[i] = string(c)
	}
	var detail string
	out.Legs, detail = legsJSON(v.Legs, id)
	var cost notify.Money
	for _, l := range v.Legs {
		if l.Cost.Currency.Code != "" {
			cost.Currency = l.Cost.Currency
			cost.Minor += l.Cost.Minor
		}
	}
	if cost.Currency.Code != "" {
		minor := cost.Minor
		out.Cost, out.CostMinor = cost.Decimal(), &minor
		out.Currency = &currencyJSON{Code: cost.Currency.Code, Symbol: cost.Currency.Symbol, Exponent: cost.Currency.Exponent}
	}
	return out, detail
}

// answerVerification answers a verification, or err: with the
// verification's ID, status and legs when a send failed after it was
// made.
func answerVerification(x *exchange, r *http.Request, v *verify.Verification, err error) {
	if v != nil {
		x.verification = v.ID
		var ids []string
		for _, l := range v.Legs {
			if l.MessageID != "" {
				ids = append(ids, l.MessageID)
			}
		}
		x.message = strings.Join(ids, ",")
	}
	switch {
	case err != nil && v == nil:
		writeErr(x, r, err, nil)
	case err != nil:
		writeVerificationErr(x, err, v)
	default:
		out, detail := toVerificationJSON(v, x.id)
		x.detail = detail
		writeVerificationJSON(x, r, out)
	}
}

// writeVerificationJSON answers 200 with body.
func writeVerificationJSON(x *exchange, r *http.Request, body any) {
	b, err := json.Marshal(body)
	if err != nil { // strings, numbers and times only: cannot fail
		writeErr(x, r, notify.WithCode(notify.CodeInternal, err), nil)
		return
	}
	x.out = append(append(x.out[:0], b...), '\n')
	writeJSON(x, http.StatusOK, x.out)
}

// writeVerificationErr answers err of a start or resend whose send
// failed: the error body with the verification's ID, status and legs.
func writeVerificationErr(x *exchange, err error, v *verify.Verification) {
	code := notify.CodeOf(err)
	out, legDetail := toVerificationJSON(v, x.id)
	x.code = code
	var detail []string
	if !shown(err) {
		detail = append(detail, err.Error())
	}
	if legDetail != "" {
		detail = append(detail, legDetail)
	}
	if x.detail == "" {
		x.detail = strings.Join(detail, "; ")
	}
	b := append(x.out[:0], `{"success":false`...)
	b = appendField(b, "verification_id", v.ID)
	b = appendField(b, "status", string(v.Status))
	if len(out.Legs) > 0 {
		legs, jerr := json.Marshal(out.Legs)
		if jerr == nil {
			b = appendKey(b, "legs")
			b = append(b, legs...)
		}
	}
	b = appendErrorObject(b, err, x.id)
	b = append(b, '}', '\n')
	setRetryAfter(x, err, code)
	writeJSON(x, StatusOf(code), b)
	x.out = b
}
