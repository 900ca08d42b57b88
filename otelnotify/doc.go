// Package otelnotify traces a notify.Notifier with OpenTelemetry: it
// adapts a trace.TracerProvider to the notify.Tracer hook, so that the
// notify package itself imports no tracing SDK.
//
//	n, err := notify.New(accounts, ledger, otelnotify.WithTracerProvider(tp), ...)
//
// Each send is a span (notify.send) with a child per step (notify.prepare,
// notify.charge, notify.attempt, notify.settle), each delivery report a
// span (notify.report) linked to its send's, each worker's run of a
// queued send a span (notify.work) linked to the enqueue's;
// docs/tracing.md lists them with their attributes. No span carries
// message content, a recipient, a one-time code or a credential, and a
// failure's status holds its notify.Code, never its text. The caller's
// span, when ctx carries one, is the send's parent.
//
// The spans' instrumentation scope is the notify module's path,
// github.com/notifykit/notify, as it was before this adapter moved out of
// the notify package.
package otelnotify
