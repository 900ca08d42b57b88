// Package metrics counts what a notify.Notifier does, for Prometheus:
// sends by kind, provider and outcome, delivery latency, money charged and
// refunded, delivery reports, and refusals by the rate limit and the OTP
// throttle.
//
// An Observer is a notify.Observer: build it with New, on a
// prometheus.Registerer of the application's own, and register it with
// notify.WithObserver. It needs nothing from the HTTP gateway; serve the
// registry with promhttp where the application serves its metrics.
//
//	reg := prometheus.NewRegistry()
//	obs, err := metrics.New(reg)
//	...
//	n, err := notify.New(accounts, ledger, notify.WithObserver(obs), ...)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
//	notify_sends_total{kind,provider,outcome}        counter
//	notify_delivery_latency_seconds{kind,provider}   histogram
//	notify_charged_minor_total{currency}             counter
//	notify_refunded_minor_total{currency}            counter
//	notify_webhook_reports_total{provider,status}    counter
//	notify_refusals_total{kind,reason}               counter
//	notify_provider_calls_total{provider,outcome}    counter
//	notify_provider_breaker_open{provider}           gauge
//
// notify_provider_calls_total counts each provider call of a message that
// had several providers to try (notify.Receipt.Tried: a failover from a
// refusing vendor counts a failed call of it and a call of the next);
// messages with one provider count only in notify_sends_total.
// notify_provider_breaker_open is 1 while a provider's circuit breaker
// (notify.WithBreaker) is open, when the Observer's BreakerChanged is the
// policy's OnChange.
//
// notify_sends_total counts each message the pipeline settled, once, by
// its outcome: sent (a provider accepted it), failed (certainly not
// accepted; refunded) or unknown (the vendor may have it; charged). kind
// is the message's channel (sms, chat, email): the two legs of a dual OTP
// count as one sms and one chat message, and its combined receipt is not
// counted again. provider is the provider that accepted or last tried
// the message, "none" when the message failed before one was called. A
// request refused before its charge (bad input, no funds) made no
// message and is not counted. A
// delivery report that later settles an unknown message does not count
// here again: it counts in notify_webhook_reports_total.
//
// notify_delivery_latency_seconds observes, for each message a delivery
// report says was delivered, the time from the message's creation
// (Receipt.CreatedAt) to the delivery as the report dates it
// (DeliveryReport.At, or the time of the report when the vendor gave
// none). A message reported read without ever being reported delivered
// is not observed.
//
// notify_charged_minor_total and notify_refunded_minor_total count money
// in minor units of the currency (paise for INR): charged is the price
// debited when a message was accepted for sending (record.StatePending),
// refunded what events later credited back (notify.Event.Refund: a failed
// send, a failover through a cheaper gateway, a failure report the
// refund policy refunds, an abandoned send the reconciler settled). What
// messages cost net is charged less refunded. A float64 counter holds
// minor units exactly up to 2^53.
//
// notify_webhook_reports_total counts delivery reports that moved a
// message (Notifier.Report's events), by the provider that reported and
// the state reported: sent, delivered, read or failed. Repeated,
// outrun and unmatched reports move nothing and are not counted; each
// webhook receiver's Stats counts those.
//
// notify_refusals_total counts sends a limit refused before anything was
// charged (notify.StateRefused), by the request's kind (sms, chat, email,
// otp for a dual OTP) and reason: rate_limited (the account's rate limit,
// notify.ErrRateLimited) or otp_throttled (the per-recipient OTP
// throttle, notify.ErrOTPThrottled).
//
// Every label value comes from a small fixed set or from the
// application's configuration (provider names, currencies): no label
// carries a recipient, an account or a message ID, so the number of
// series stays bounded.
//
// A series appears at its first event, unless WithKnown names the
// channels' providers and the currencies: New then creates their series
// at zero, so that a scrape shows them from the start.
//
// Observe runs on the sending goroutine: after the first event of each
// label combination it takes a read lock and increments, without
// allocating.
package metrics
