// Package sendwindow holds messages to the hours their recipients may get
// them: a Window is a daily span of local time for a class of message to
// a country (promotional SMS to India only from 09:00 to 21:00 IST, as
// TRAI rules), and Rules, the windows of one channel, say when a message
// may go. A send outside its window is not refused: the Notifier
// schedules it on its queue for the window's opening (notify.WithQueue),
// or, without a queue, answers CodeRateLimited with the wait as
// RetryAfter.
//
// Channels take their rules in their Config (sms.Config.Windows, whose
// default is TRAI; chat and e-mail have none unless given) and put them
// on each envelope (notify.Envelope.Window), so the rule lives with the
// channel and the Notifier only asks the time. A message that carries a
// one-time code is never held.
package sendwindow
