// Package outbox is a development outbox: it keeps the latest messages a
// notify.Notifier sent, in memory, and shows them on a web page, as
// Mailpit or letter_opener do for e-mail, for every channel.
//
// An Outbox is a notify.Observer: register it with notify.WithObserver and
// it records each message as it is accepted, with its content as the
// channel prepared it, then follows its status (sent, failed, unknown,
// delivered, read) and cost. An SMTP server that receives the mail (the
// in-process smtptest server, say) may hand each message over with
// AddMail: the outbox then shows the e-mail as its recipient would see it,
// with the headers and attachments as received.
//
// The Outbox is also an http.Handler, meant for the path its BasePath
// names (default /outbox):
//
//	GET /outbox                the page: messages, newest first; ?to= filters
//	                           by recipient (a substring), ?kind= by sms,
//	                           email, chat or push, ?id= opens one message
//	GET /outbox/list           the list alone, as an HTML fragment
//	GET /outbox/events         server-sent events: "change" on every change
//	GET /outbox/mail/{id}      an e-mail's HTML part, for the page's
//	                           sandboxed iframe
//	GET /outbox/assets/...     the page's stylesheet and script (embedded)
//
// A push notification shows as its device would show it (title, body,
// image and the link it opens) with its data, TTL and urgency, and its
// recipient: the Web Push subscription's endpoint or the FCM token, which
// the list shortens. A subscription's keys are not kept.
//
// The page is rendered on the server with html/template and updates itself
// through the event stream; it needs no build step and loads nothing from
// elsewhere. E-mail HTML is shown in an iframe sandboxed without scripts,
// served with a Content-Security-Policy that forbids them too. One-time
// codes of messages sent through development providers
// (WithDevelopmentProviders: a log, memory, an in-process SMTP server)
// are masked on the page until clicked, and in an e-mail's HTML until the
// reveal button reloads it. A real vendor's codes are masked on the
// server and never reach the page, which says so: its readers need not
// see live codes of real people.
//
// The outbox holds message content, one-time codes included: it is a
// development tool. Serve it only to the people who may read every
// message, behind authentication when real recipients are involved (the
// gateway asks for the admin key then). It keeps the latest messages up to
// a count and a byte budget (WithCapacity, WithMaxBytes) and forgets older
// ones. All methods are safe for concurrent use; Observe is quick and
// never blocks on a slow page.
package outbox
