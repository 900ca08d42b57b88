package sms

import (
	"context"
	"fmt"
	"hash"
	"strconv"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/internal/fingerprint"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/record"
)

// Kind is the kind of the SMS channel and its requests.
const Kind notify.Kind = "sms"

// BatchSender is an optional interface of SMS providers that send one
// message to several recipients in one vendor call, such as a vendor that
// takes a comma-separated list of numbers; the channel then implements
// notify.BatchDeliverer through it.
//
// SendBatch sends envs, which differ only in To and ID, in one call, and
// makes one attempt (the Notifier retries). Its outcome is one for all of
// them: on success one Result per envelope, in order, each with the
// vendor's ID (which several may share: reports tell them apart by
// number); an error is the outcome of every envelope, classified as for
// Send. MaxBatch is the most envelopes SendBatch takes at once, at least
// 1. Both must be safe for concurrent use.
type BatchSender interface {
	MaxBatch() int
	SendBatch(ctx context.Context, envs []*notify.Envelope) ([]*notify.Result, error)
}

// Request asks for one SMS. Send it with notify.Notifier.Send.
type Request struct {
	// Account is the ID of the sending account. Required.
	Account string `json:"-"`
	// To is the recipient: a number in international form (+1 415 555
	// 0100), or in the national form of the account's region (India's
	// by default: 10 digits starting 6-9, with 91 or 0 before them or
	// not); spaces and dashes are removed. It becomes E.164 form
	// (+919876543210). It must be of a country the account may send to
	// (notify.Account.Countries), and a mobile number: fixed lines,
	// premium-rate and shared-cost numbers are refused. Numbers outside
	// India need a numbering plan (phone/world's, registered when it is
	// imported, or Config.Numbers). Required. Its rule is the
	// normalisation itself, in code: checking it apart would parse every
	// number twice.
	To string `json:"to"`
	// Message is the text, or the numeric code on the otp route. Required
	// unless TemplateSlug is set (on the otp route the code may then come
	// from Variables["OTP"]).
	Message string `json:"message"`
	// SenderID is the sender header; default the account's
	// Settings.SenderID.
	SenderID string `json:"sender_id"`
	// Route is sms (default), otp or dlt.
	Route Route `json:"route" validate:"omitempty,oneof=sms otp dlt"`
	// DLTTemplateID and DLTEntityID identify the operator-registered
	// template on the dlt route (DLTTemplateID is required there). A
	// template the account has registered is checked against the text
	// and its entity ID is used when DLTEntityID is empty; see the
	// package documentation for one the account has not registered.
	DLTTemplateID string `json:"dlt_template_id" validate:"omitempty,max=64,text"`
	DLTEntityID   string `json:"dlt_entity_id" validate:"omitempty,max=64,text"`
	// Brand is the brand named in the OTP text of the otp route; the dual OTP
	// (package channel/otp) sets it from its BrandName. At most 30 characters, the
	// length of a DLT variable.
	Brand string `json:"brand" validate:"omitempty,max=30,text"`
	// TemplateSlug renders a stock or custom SMS template with Variables
	// instead of Message.
	TemplateSlug string      `json:"template_slug"`
	Variables    record.Vars `json:"variables"`
	// Domain is the calling application's domain, recorded with the
	// message: at most 253 characters of text.
	Domain string `json:"domain" validate:"omitempty,domain"`
	// Category names a category of the account's (store.Category: "order",
	// "marketing"): the message goes only to a recipient whose preferences
	// take it on this channel (notify.CodeDeclined otherwise). Empty: none.
	Category string `json:"category" validate:"omitempty,category"`
	// Locale picks the template's variant (a BCP 47 tag: "hi", "hi-IN"),
	// through the chain the tag, its language, the account's default
	// (notify.Account.Locale), the template's base. Empty: the recipient's
	// stored locale (store.Preferences.SetLocale), else the account's
	// default. It matters only with TemplateSlug.
	Locale string `json:"locale" validate:"omitempty,locale"`
	// WebOTPHost, when set, ends the text with the WebOTP line
	// "@host #code", which lets a browser on the phone fill the code in
	// on the site at host (no scheme, no port: "example.com"). AppHash,
	// when set, adds the 11-character hash of an Android app, which
	// lets that app read the code through the SMS Retriever API. Both
	// need a code: the otp route's, or a template's OTP variable. The
	// lines are part of the text: they add to its segments and, on the
	// dlt route, must match the registered template like the rest.
	WebOTPHost string `json:"webotp_host" validate:"omitempty,hostname_rfc1123,max=253"`
	AppHash    string `json:"app_hash"`
	// IdempotencyKey, when set, makes a repeat within the retention window
	// return the first receipt without sending or charging again (see
	// notify.Request.Key).
	IdempotencyKey string `json:"-"`
}

// Kind implements notify.Request.
func (*Request) Kind() notify.Kind { return Kind }

// AccountID implements notify.Request.
func (r *Request) AccountID() string { return r.Account }

// Key implements notify.Request.
func (r *Request) Key() string { return r.IdempotencyKey }

// Fingerprint implements notify.Request.
func (r *Request) Fingerprint(h hash.Hash) {
	fingerprint.Fields(h, "sms", fingerprint.Mobile(r.To), r.Message, r.SenderID, string(r.Route), r.DLTTemplateID, r.DLTEntityID,
		r.Brand, r.TemplateSlug, r.Domain, r.WebOTPHost, r.AppHash)
	fingerprint.Vars(h, r.Variables)
	fingerprint.Optional(h, "category", r.Category)
	fingerprint.Optional(h, "locale", r.Locale)
}

// BulkRequest sends one SMS to many recipients (a notify.Bulk request):
// every recipient is charged and recorded as its own message, in as few
// vendor calls as the provider allows (BatchSender). queued.Sender.Enqueue and
// SendAt queue or schedule each recipient as its own message instead.
type BulkRequest struct {
	// Message is what every recipient gets: a Request whose To is empty.
	// Its Account and IdempotencyKey are the bulk request's. The otp
	// route, and a template filled with an OTP, are refused: a one-time
	// code goes to one recipient.
	Message Request
	// To are the recipients, 1 to notify.MaxBulkRecipients, in the forms
	// Request.To takes. A number given twice (once normalised) is refused.
	To []string
}

// Kind implements notify.Request.
func (*BulkRequest) Kind() notify.Kind { return Kind }

// AccountID implements notify.Request.
func (r *BulkRequest) AccountID() string { return r.Message.Account }

// Key implements notify.Request.
func (r *BulkRequest) Key() string { return r.Message.IdempotencyKey }

// Fingerprint implements notify.Request.
func (r *BulkRequest) Fingerprint(h hash.Hash) {
	fingerprint.Fields(h, "sms-bulk", strconv.Itoa(len(r.To)))
	for _, to := range r.To {
		fingerprint.Fields(h, fingerprint.Mobile(to))
	}
	r.Message.Fingerprint(h)
}

// Recipients implements notify.Bulk: one Request per number of To.
func (r *BulkRequest) Recipients() ([]notify.Request, error) {
	switch {
	case r.Message.To != "":
		return nil, notify.InvalidField("message.to", "must be empty: the recipients are in to")
	case r.Message.Route == RouteOTP:
		return nil, notify.InvalidField("route", "a one-time code goes to one recipient; send it alone")
	case len(r.To) > notify.MaxBulkRecipients:
		return nil, notify.InvalidField("to", fmt.Sprintf("at most %d recipients, got %d", notify.MaxBulkRecipients, len(r.To)))
	}
	reqs := make([]notify.Request, len(r.To))
	for i, to := range r.To {
		msg := r.Message
		msg.To = to
		reqs[i] = &msg
	}
	return reqs, nil
}

// Route is the route an SMS takes (the "route" field).
type Route string

// The SMS routes. The zero value means RouteSMS.
const (
	// RouteSMS is the default, non-DLT route: the message text is sent as is.
	RouteSMS Route = "sms"
	// RouteOTP sends a numeric code of 4-8 digits in the provider's OTP text.
	RouteOTP Route = "otp"
	// RouteDLT sends operator-registered (DLT) template text with its
	// template and entity IDs and a 6-character sender header.
	RouteDLT Route = "dlt"
)

// Encoding is the character set an SMS travels in.
type Encoding string

// The SMS encodings.
const (
	// GSM7 is the GSM 03.38 7-bit alphabet: 160 characters in one segment,
	// 153 per segment when concatenated.
	GSM7 Encoding = "gsm7"
	// UCS2 is used as soon as one character is outside GSM 03.38: 70
	// characters in one segment, 67 per segment when concatenated.
	UCS2 Encoding = "ucs2"
)

// Message is the content of an SMS envelope (notify.Envelope.Content):
// what the SMS providers send.
type Message struct {
	Route Route
	// Text is the text as it will be delivered. On the otp route it is the
	// rendered OTP text; providers with an OTP API may send OTP instead.
	Text string
	// OTP is the numeric code on the otp route.
	OTP string
	// SenderID is the sender header.
	SenderID string
	// DLTTemplateID and DLTEntityID are set on the dlt route.
	DLTTemplateID string
	DLTEntityID   string
	// DLTValues are the values of the DLT template's {#var#} slots, in order.
	DLTValues []string
	// DLTMessageIDs are the registered template's IDs in the vendors' DLT
	// managers, by provider name (DLTTemplate.MessageIDs), and
	// DLTMessageID its one ID for every provider, of a template
	// registered before those (DLTTemplate.MessageID). A provider reads
	// its own with DLTMessageIDFor, and may send it with DLTValues
	// instead of Text.
	DLTMessageIDs map[string]string
	DLTMessageID  string
	Encoding      Encoding
	Segments      int
	// NumberType is the recipient's type of line, as far as the numbering
	// plan tells (phone.FixedLineOrMobile for most NANP numbers): vendors
	// price by it, and so may a price list (wallet.PriceList.SMSByNumberType).
	NumberType phone.Type
}

// DLTMessageIDFor returns the template's ID in the DLT manager of the
// provider named provider (notify.Provider.Name): its entry in
// DLTMessageIDs, else DLTMessageID; "" when it has none. A provider must
// never send an ID it was not given by its own name: each vendor numbers
// its templates its own way.
func (m *Message) DLTMessageIDFor(provider string) string {
	if m.DLTMessageIDs != nil {
		return m.DLTMessageIDs[provider]
	}
	return m.DLTMessageID
}

// DLTByIDSender is implemented by a provider that sends a DLT template
// only by its ID in its vendor's DLT manager (Message.DLTMessageIDFor),
// never by its text, such as provider/msg91. On the dlt route the
// channel offers such a provider only the messages whose template has
// its ID: it is skipped (the message goes to the next provider, or is
// refused before anything is charged when none is left), never sent
// another vendor's ID.
type DLTByIDSender interface {
	notify.Provider
	// SendsDLTByIDOnly marks the provider; it does nothing.
	SendsDLTByIDOnly()
}

// MessageOf returns the content of an envelope of this channel, or nil
// when env is nil or carries another channel's content.
func MessageOf(env *notify.Envelope) *Message {
	if env == nil {
		return nil
	}
	m, _ := env.Content.(*Message)
	return m
}
