// Package twilio is a notify.Provider for Twilio Programmable Messaging:
// SMS envelopes (sms.MessageOf(env)) to any country Twilio reaches.
//
// Each Send creates one Message resource, with one request,
//
//	POST {BaseURL}/2010-04-01/Accounts/{AccountSID}/Messages.json
//	Authorization: Basic base64(AccountSID:AuthToken)   (or APIKeySID:APIKeySecret)
//	Content-Type: application/x-www-form-urlencoded
//	Accept: application/json
//
//	To=%2B919876543210&From=%2B15005550006&Body=Your+order+has+shipped.
//
// whose form parameters are
//
//	To                    env.To, in E.164 (+ and 7 to 15 digits, as the
//	                      SMS channel normalises numbers); anything else
//	                      is CodeInvalidArgument on "to", and nothing is sent
//	From                  Config.From, when set
//	MessagingServiceSid   Config.MessagingServiceSID, when set
//	Body                  the sms.Message's Text on every route (on the
//	                      otp route the whole OTP text; on the dlt route
//	                      the DLT template's text); empty, or over
//	                      MaxBodyLen (1,600) characters, it is
//	                      CodeInvalidArgument on "message". Twilio picks
//	                      GSM-7 or UCS-2 itself.
//	StatusCallback        Config.StatusCallback, when set, with RefParam
//	                      (notify_ref=notify.MessageRef(account, message ID))
//	                      added to its query, before any fragment
//
// testdata/requests holds each shape as sent (golden_test.go). Twilio
// answers 201 Created with the Message resource, {"sid": "SM...",
// "status": "queued" (or "accepted" through a Messaging Service), "to",
// "from", "body", "num_segments", "error_code": null, ...}; the sid, "SM"
// (or "MM") and 32 hex digits, becomes the Result's ProviderMessageID. The
// message's later statuses come by status callback (Webhook), and only
// with Config.StatusCallback set (or a Messaging Service's own status
// callback URL): without it Twilio sends no status updates, so a message
// stays sent, never delivered or failed by a report, and one whose send's
// answer was lost stays unknown (notify.Notifier.Reconcile settles
// neither: only sends whose holder died).
//
// # What Twilio requires
//
// To is E.164. The sender is From, one of the account's SMS-capable
// numbers, a short code, or an alphanumeric sender ID (1 to 11 of A-Z,
// a-z, 0-9, space, '+', '-', '_' and '&', with at least one letter; not
// all countries take one, the US and Canada none, some only once
// registered, and no one can reply to it), or a Messaging Service
// (MessagingServiceSid), whose sender pool Twilio picks from; with both,
// From must be in the service's pool. Messages to US numbers from a US
// long code (10DLC) need the number registered for A2P 10DLC (a brand and
// a campaign) and toll-free numbers need toll-free verification: Twilio
// takes the message, and its status callback fails it later (30034, and
// carrier filtering 30007). SMS to a country must be enabled in the
// account's Messaging Geographic Permissions (21408). Messages to India
// follow India's DLT rules, which Twilio applies to the text it is given:
// the sender and the template must be registered with Twilio. A trial
// account sends only to verified numbers (21608).
//
// # Errors
//
// Every error says whether Twilio may have the message (notify.OutcomeOf),
// which decides refunds and retries. Twilio's error object,
//
//	{"code": 21211, "message": "The 'To' number ... is not a valid phone number.",
//	 "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}
//
// (a five-digit code and a message) is Twilio's own answer that it created
// no message: a certain refusal whatever the HTTP status, refunded, whose
// cause is an *Error carrying the code, message, more_info and HTTP
// status (errors.As), with the OTP of the message replaced by "[otp]":
//
//	20429                 CodeRateLimited: too many concurrent requests, with
//	                      Retry-After when Twilio sends it
//	21611                 CodeRateLimited: the From number's queue is full
//	20500, 20503          CodeUnavailable: Twilio's internal error or outage,
//	                      retried like one
//	20003                 CodeRejected: the credentials; the message says to
//	                      check Config.AccountSID and AuthToken (or the API
//	                      key), never repeating them
//	10001, 20005, 20008   CodeRejected: the account is not active, or test
//	                      credentials were used
//	20404                 CodeRejected: the account or Messaging Service
//	21211, 21614, 21612   CodeRejected: To is not a valid number, not a
//	                      mobile one, or not reachable from this sender
//	21408                 CodeRejected: the country is not enabled
//	21610                 CodeRejected: the recipient replied STOP
//	21608                 CodeRejected: a trial account's unverified number
//	21606, 21212, 21660   CodeRejected: From is not a sender of the account
//	                      for this destination
//	21602, 21603, 21604,  CodeRejected: a missing body, sender or To, a
//	21617                 body over 1,600 characters
//	other codes           by the HTTP status: 429 CodeRateLimited, 5xx
//	                      CodeUnavailable (Twilio formed the answer and
//	                      created nothing), else CodeRejected
//
// Any other answer is not Twilio's, and is classified by its HTTP status:
//
//	429        CodeRateLimited, with Retry-After: Twilio documents that a
//	           request answered 429 was not processed
//	5xx        CodeOutcomeUnknown: a proxy's 502 or 504 page, an empty,
//	           HTML or cut body, JSON of another shape; Twilio may have
//	           created the message behind it
//	2xx        CodeOutcomeUnknown: a success that cannot be read, or
//	           without a message sid
//	other      CodeRejected (a redirect included: the default client
//	           follows none)
//
// Network failures follow the rule provider/vendorhttp makes for every
// HTTP provider: a failure before the request was written whole (a
// refused dial, DNS, TLS, a context that ended first, which stays visible
// to errors.Is) is CodeUnavailable, certain and retried. Once the request
// may have been written, Twilio may have created the message and a retry
// could send the SMS twice: a timeout, a reset or closed connection, an
// answer cut short, unreadable or over 64 KiB is CodeOutcomeUnknown, whose
// charge stands and which is never retried. The provider retries nothing
// itself.
//
// # Health
//
// CheckHealth, the readiness check that sms.Channel.CheckHealth and the
// gateway's /readyz ask of a provider, fetches the account with the
// credentials Send uses,
//
//	GET {BaseURL}/2010-04-01/Accounts/{AccountSID}.json
//	Authorization: Basic base64(AccountSID:AuthToken)   (or APIKeySID:APIKeySecret)
//
// and is nil when Twilio answers 200 with the Account resource whose
// "status" is "active" (Twilio documents active, suspended and closed). A
// suspended account (its balance reached zero, or its parent's was
// suspended) or a closed one is CodeRejected, saying so. Credentials
// Twilio refuses (20003, or any answer of 401 or 403) are CodeRejected,
// the message saying to check Config.AccountSID and AuthToken (or the API
// key), never repeating them; Twilio may answer a suspended or closed
// account's own credentials so too. Other answers are classified as for a
// send, except that the read sends nothing: a 5xx, a proxy's page, a
// timeout, a lost answer or an ended context is CodeUnavailable, never of
// unknown outcome. The answer holds the account's auth token; nothing of
// it but the status reaches an error.
//
// Only a Main API key, like the auth token, may read the Account resource;
// Twilio refuses a Standard key there with 20003. So, with
// Config.APIKeySID set and that refusal, CheckHealth checks the key on a
// resource every key reads, GET .../Accounts/{AccountSID}/
// IncomingPhoneNumbers.json?PageSize=1, and is nil when Twilio answers it:
// the key works, though the account's status is not known (use a Main key,
// or the auth token, for that).
//
// # Status callbacks
//
// With Config.StatusCallback set, Twilio POSTs each status change of the
// message to that URL (as StatusCallback, with RefParam in its query), a
// form (application/x-www-form-urlencoded) of MessageSid (and SmsSid),
// MessageStatus (and SmsStatus), AccountSid, From or MessagingServiceSid,
// To, ApiVersion, ErrorCode for a failure and, for delivered and
// undelivered, RawDlrDoneDate (the carrier's time, without a zone, so
// not read: a report's time is when it arrives). Webhook takes them:
//
//	delivered                 a delivered report
//	sent                      a sent report (Twilio handed it to the carrier)
//	read                      a read report (channels with read receipts)
//	undelivered, failed       a failed report: VendorCode is ErrorCode
//	                          (such as 30003), or the status without one;
//	                          Error is "twilio: the message was undelivered:
//	                          unreachable destination handset (error 30003)"
//	accepted, scheduled,      nothing final: acknowledged (200), counted
//	queued, sending, others   in Stats().Ignored
//
// Each report names the message by MessageSid and, through RefParam, by
// its account and message ID, so that a callback finds a message whose
// send's answer was lost (an unknown outcome) and settles it.
//
// Twilio signs every callback in X-Twilio-Signature: base64 of the
// HMAC-SHA1, under the account's auth token (even when the Provider uses
// an API key), of the full URL Twilio called, query included, followed by
// each POST parameter's name and value, sorted by name. The receiver
// checks it before acting, in constant time, against the URL it is given
// (WebhookConfig.URL: set it behind a proxy that terminates TLS or
// changes the host or path) or its own, with the request's query, with
// and without the scheme's default port as Twilio's libraries do. A
// callback without a signature of that shape (28 characters of base64) is
// 401 before its body is read; one whose signature does not match, for a
// forged token, URL, query or parameter, is 401 after; so is a signed
// callback of another account than WebhookConfig.AccountSID, when it is
// set (the gateway sets it to NOTIFY_TWILIO_ACCOUNT_SID); none reports
// anything. A method other than POST is 405, a body that is not a form or
// a callback without MessageSid 400, a body over WebhookConfig.MaxBody
// (64 KiB by default) 413. A callback of a message no record has is
// acknowledged (200) and counted (Stats().Unmatched), unless the
// provider has a send in flight, whose SID the record may not have yet
// (a callback that outran the Notifier's move to sent): then, as for a
// callback that cannot be applied now (a store failure, a message still
// being sent), the answer is 503. Whether Twilio calls again after a 503
// depends on the callback's connection settings: Twilio's connection
// overrides, a fragment on StatusCallback such as #rc=3&rp=all (which
// Webhook accepts in WebhookConfig.URL), ask for retries. Reports are
// applied as notify.Notifier.Report applies them: a repeated, late or
// out-of-order report changes nothing.
//
// Twilio bills a message it sent on (sent, delivered, undelivered) and
// not one that failed; the SMS channel keeps the charge of a message a
// report fails unless sms.Config.RefundReportedFailures.
//
// Package twiliotest is a strict fake of the API on httptest (the
// Messages endpoint, and the Account resource with a status a test sets),
// with injected failures, that posts signed status callbacks when a test asks
// (Server.Report, Server.Flush with Config.AutoStatus) and posts forged
// ones (Server.Post, Sign).
package twilio
