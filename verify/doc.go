// Package verify runs verifications: it makes a one-time code, sends it
// by SMS, chat, both at the same moment, or e-mail through a
// notify.Notifier, and checks what the user types, a bounded number of
// times, until the code expires. A fraud guard refuses, before anything
// is charged, the sends that SMS pumping and resend storms are made of,
// and names the rule that refused.
//
//	svc, err := verify.New(verify.Config{Notifier: n, Accounts: accounts,
//		Store: memstore.NewVerifications(), Secret: secret})
//	v, err := svc.Start(ctx, "acme", "9876543210", verify.StartOptions{Purpose: "login"})
//	// ... the user types the code ...
//	res, err := svc.Check(ctx, "acme", v.ID, typed)
//	if err == nil && res.Approved() { /* the number is theirs */ }
//
// # Codes
//
// A code is 4 to 10 digits (default 6; the SMS and chat channels carry
// at most 8). It is derived from Config.Secret and the verification
// (its ID, recipient and purpose) by HMAC-SHA256, so it is unpredictable
// without the secret, and a resend sends the same code again, derived
// anew, instead of a second one to guess. The store keeps no code: only
// a second HMAC of it, bound to the verification, the recipient and the
// purpose, so a copy of the database reveals none, and a code approves
// nothing but its own verification. A check compares in constant time.
// Codes never appear in an answer, an error, a log line or a metric;
// the messages that carry them are masked wherever the Notifier keeps
// or shows a text.
//
// # Limits
//
// As Twilio Verify: a code is good for 10 minutes (Config.TTL or
// StartOptions.TTL, 30 seconds to 24 hours), takes 5 checks and 5 sends.
// The store counts checks and sends in one atomic step each, so however
// many instances check one verification at once, no more checks are
// weighed than allowed. A resend waits Config.Cooldown (30 seconds)
// after the last send and may go by other channels (an escalation).
// Sends are charged as any send of the Notifier; a check never is.
//
// # State
//
// Verifications live in a verifystore.Verifications: memstore's for one
// process and its tests, pgstore's to survive a restart and be shared by
// several instances (any of them checks a code another sent). Expiry is
// read off the times, so a verification ends on time without a sweep;
// Service.Sweep marks the ended ones in the store now and then.
//
// # Autofill
//
// StartOptions.WebOTPHost ends the SMS with the WebOTP line
// ("@example.com #482913") that lets a browser fill the code in, and
// StartOptions.AppHash adds an Android app's SMS Retriever hash. The
// chat leg goes through the cloud gateway's authentication template
// (chat.Config.CloudOTPTemplate), whose button copies or fills the code;
// its expiry note (code_expiration_minutes) is fixed when the template is
// registered with the vendor, so register it with the TTL you use.
//
// # The fraud guard
//
// A Guard (Config.Guard) weighs each send before it is priced into the
// wallet, in this order, and the first rule that refuses is the error,
// with a *Refusal naming it as the cause:
//
//   - requester_velocity: verifications asked for by one requester (an
//     IP or user the app passes as StartOptions.Requester);
//   - recipient_velocity: sends to one recipient, counted per requester
//     when the app names them, so that an attacker cannot spend a
//     victim's budget and lock them out;
//   - prefix_velocity: sends to one range (the number without its last
//     3 digits);
//   - prefix_conversion and country_conversion: ranges and countries
//     where almost no code sent is ever entered, the mark of pumping;
//   - spend_cap: what an account's verification sends may cost in an
//     hour, held against the cap at their quoted price before they go.
//
// Velocity and spend refusals are notify.CodeRateLimited with a
// RetryAfter; conversion blocks are notify.CodePermissionDenied. The
// GuardConfig.SafeList skips every rule for the app's own numbers. The
// guard's counts live in a verifystore.Counters (memstore's or pgstore's,
// shared by instances); a guard that cannot read them refuses.
package verify
