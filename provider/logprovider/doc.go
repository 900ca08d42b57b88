// Package logprovider is a notify.Provider that writes each message to a
// *slog.Logger instead of sending it, for development: wire it where a
// real provider would go and watch what the application would send.
//
// Each send is one Info record with the message's kind, masked recipient
// ("98xxxxxx10", "r***@example.com"), route, purpose or gateway, IDs,
// lengths and, for SMS and chat, the text; for e-mail, the subject; for a
// push, its title and text, TTL, urgency, link without its query and the
// number of its data's keys (never a subscription's keys). A
// declared OTP never reaches the log: the message's declared code
// (sms.Message.OTP, chat.Message.OTP, email.Message.OTP, which may be of
// up to 10 digits) is replaced by "******" wherever it occurs, e-mail
// subjects included, and in a message that may carry a code it did not
// declare (one that carries a code, an SMS on the dlt route, a chat
// template, OTP e-mail) every run of 4 to 8 digits is masked too, in
// every field of the message alike: its text, template values, header
// and buttons. A code written into the free text of a plain SMS or chat
// message without being declared cannot be told from other numbers and
// is logged as is, as are the order numbers of such messages; an e-mail
// code longer than 8 digits is hidden only when declared (email.Request's
// OTP). E-mail bodies are logged by length only. API keys never reach a
// provider, so they cannot reach the log either.
//
// # The masking rule
//
// One rule decides what of a message any log may show, here and in the
// logs of a host that uses this package's helpers:
//
//   - secrets and one-time codes: always masked (Mask), in every mode;
//   - recipients: partly (MaskRecipient keeps the ends of a number and the
//     domain of an address);
//   - message text (SMS and chat text, e-mail subjects, template values):
//     as sent, codes masked (Redact), in Dev mode; never in Production
//     mode, where only its length is logged and the text is Withheld.
//
// A Provider follows it in the Mode given by WithMode (default Dev).
// Mode.ReplaceAttr applies the same rule to the records of any slog
// handler (slog.HandlerOptions.ReplaceAttr), so that a host in Production
// mode withholds content whoever logs it. A host is in Production mode
// when any message can reach a real recipient.
//
// The log stands for the vendor, so the outcomes of a send (see
// notify.Provider) are:
//
//	what happened                          error code                  outcome
//	-------------------------------------  --------------------------  ------------
//	handed to the logger (even if a level  (Result log-<n>)            accepted
//	  or handler drops it)
//	ctx ended before the call              Unavailable, wraps ctx.Err  not accepted
//	nil envelope                           InvalidArgument             not accepted
//
// Nothing can fail once the message is handed to the logger, so a send is
// never of unknown outcome.
package logprovider
