// Package sms is the SMS channel of notify: it validates and normalises
// SMS requests, renders their templates, checks DLT text, counts segments,
// picks the providers of each message by its rules and hands the prepared
// envelope to the first.
//
// # Routes
//
//   - sms (the default): the text is sent as it is, non-DLT.
//   - otp: Message is the numeric code, 4 to 8 digits. The delivered text
//     is Config.OTPText of the code and the brand (Request.Brand, else
//     the account's name); the Message's OTP carries the code, for vendors
//     with an OTP API of their own.
//   - dlt (India's scheme, for +91 numbers only): the text must be the content of a DLT template registered on
//     the account (Settings.DLTTemplates) with its {#var#} slots
//     filled (see package template/dlt); the values go to the Message's
//     DLTValues. dlt_template_id is required; dlt_entity_id
//     may be left out, and then comes from the registered template. The
//     sender header must be 6 letters. A template ID the account has not
//     registered is refused, because its text cannot be checked before the
//     message is charged, unless Config.AllowUnregisteredDLT is set. A
//     registered template's IDs in the vendors' DLT managers
//     (DLTTemplate.MessageIDs, by provider name) go to the Message's
//     DLTMessageIDs, so that a provider may send its own ID
//     (Message.DLTMessageIDFor) and the values instead of the text. A
//     provider that sends by its ID only (DLTByIDSender: MSG91) is
//     skipped for a template without its ID, on failover too: no vendor
//     is ever sent another's ID.
//
// # Autofill
//
// A message that carries a code (the otp route, or a template's OTP
// variable) may end with the lines that let the phone fill the code in:
// Request.AppHash adds an Android app's SMS Retriever hash, and
// Request.WebOTPHost the WebOTP line "@host #code" (always last), which
// a browser reads for the site at host. They are part of the text: they
// count towards its segments, and on the dlt route the registered
// template must contain them too.
//
// # Common rules
//
// The recipient is a mobile number, in international form or in the
// national form of the account's region (India's by default: 10 digits
// starting 6-9, with +91, 91 or 0 prefixes); spaces, dashes, dots and
// brackets are removed and the envelope's To is its E.164 form, its
// Country the number's. Numbers of other countries than India need a
// numbering plan: the one phone/world registers when a program imports
// it, or Config.Numbers. A number of a country the account
// may not send to (notify.Account.Countries), or that cannot take an SMS
// (a fixed line, premium-rate, shared-cost, toll-free, of no known type),
// is refused. sender_id defaults to
// the account's Settings.SenderID; an account that lists its sender
// headers (Settings.SenderIDs) may use only those, in any letter case, so
// that one account cannot send under another's header. A text longer than Config.MaxSegments segments
// (default 10) is refused; see Segments for how they are counted.
// Envelope.Units is the number of segments, so the price is per segment.
// With template_slug the body is rendered by Config.Renderer from the
// template's SMS form. Envelope.Class is the rendered template's class, or
// Transactional; price lists tell routes apart by Envelope.Route, which
// is the Message's Route.
//
// The prepared Envelope's Content is a *Message; providers read it with
// MessageOf(env).
//
// # Providers, routing and failover
//
// Config.Providers lists the channel's providers with their rules
// (ProviderRule: countries, E.164 prefixes, routes, accounts), in order;
// Config.Provider, when set, comes last and takes every message. A
// message goes to the first provider whose rule it matches, and the
// envelope's Providers lists every provider it matches, for the Notifier
// to offer it to the next after a certain, temporary refusal (never after
// an unknown outcome, which could send it twice). A message no rule
// matches is refused on "to". Deliver sends to the provider the envelope
// names. notify.WithBreaker rests a provider that keeps failing.
//
// # Account settings
//
// An account's SMS settings (Settings: its sender ID, the sender headers
// it may use, its DLT templates) are JSON under the "sms" kind of
// notify.Account.Settings, which every store keeps without knowing what
// they say. SetSettings writes them and SettingsOf reads them:
//
//	acct := &notify.Account{ID: "acme", Currency: record.INR()}
//	_ = sms.SetSettings(acct, sms.Settings{SenderID: "ACMEIN", SenderIDs: []string{"ACMEIN"}})
//
// The channel decodes an account's settings once and again only when they
// change; settings that do not decode fail its sends with CodeInternal.
//
// # Bulk sends
//
// The Channel implements notify.BatchDeliverer: when its providers are
// BatchSenders (provider/smsgateway and provider/msg91 are), a
// BulkRequest sends one text to many numbers in one vendor call per batch
// of MaxBatch, each batch to its messages' first provider, without
// failover; with any other provider it sends them one by one.
//
// Prepare reports every bad field at once, as a notify.CodeInvalidArgument
// *notify.Error with the HTTP API's JSON field names (docs/api.md); nothing is charged then.
package sms
