package queued_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/queue"
	"github.com/notifykit/notify/queued"
)

// wantField fails unless err is InvalidArgument naming field alone.
func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument || len(e.Fields) != 1 || e.Fields[0].Field != field {
		t.Errorf("%s: %v, want InvalidArgument naming %s", what, err, field)
	}
}

// TestSenderLimits: the rules a Sender checks before the pipeline, each
// naming its field, with nothing charged.
func TestSenderLimits(t *testing.T) {
	kit := notifytest.New(t)
	s := kit.Queued
	ctx := context.Background()
	req := &sms.Request{Account: kit.Account.ID, To: "9876543210", Message: "hello"}
	before := kit.Balance(t)

	_, err := s.SendAt(ctx, req, time.Time{})
	wantField(t, "SendAt without a time", err, "send_at")
	_, err = s.SendAt(ctx, req, time.Now().Add(queued.MaxSchedule+time.Hour))
	wantField(t, "SendAt beyond MaxSchedule", err, "send_at")
	_, err = s.EnqueueTx(ctx, nil, req)
	wantField(t, "EnqueueTx without a tx", err, "tx")
	_, err = s.EnqueueTxMany(ctx, nil, []notify.Request{req})
	wantField(t, "EnqueueTxMany without a tx", err, "tx")
	_, err = s.EnqueueTxMany(ctx, kit.Queue.Begin(), make([]notify.Request, queued.MaxEnqueueTxMany+1))
	wantField(t, "EnqueueTxMany over MaxEnqueueTxMany", err, "requests")
	steps := make([]queued.Fallback, queued.MaxFallbacks+1)
	for i := range steps {
		steps[i] = queued.Fallback{Request: req, After: time.Minute}
	}
	_, err = s.SendWithFallback(ctx, req, steps...)
	wantField(t, "a chain over MaxFallbacks", err, "fallback")

	if rs, err := s.EnqueueTxMany(ctx, kit.Queue.Begin(), nil); rs != nil || err != nil {
		t.Errorf("EnqueueTxMany of nothing: %v, %v; want nothing", rs, err)
	}
	if got := kit.Balance(t); got != before {
		t.Errorf("balance %v after refusals, want %v", got, before)
	}
	if sent := kit.SMS.Len(); sent != 0 {
		t.Errorf("%d messages sent", sent)
	}
}

// TestSenderWithoutNotifier: a Sender of no Notifier answers Unavailable
// from every method rather than panicking.
func TestSenderWithoutNotifier(t *testing.T) {
	s := queued.New(nil)
	ctx := context.Background()
	req := &sms.Request{Account: "acme", To: "9876543210", Message: "hello"}
	calls := map[string]error{}
	_, calls["Enqueue"] = s.Enqueue(ctx, req)
	_, calls["SendAt"] = s.SendAt(ctx, req, time.Now())
	_, calls["EnqueueTx"] = s.EnqueueTx(ctx, "tx", req)
	_, calls["EnqueueTxMany"] = s.EnqueueTxMany(ctx, "tx", []notify.Request{req})
	_, calls["Cancel"] = s.Cancel(ctx, "acme", "id")
	_, calls["SendWithFallback"] = s.SendWithFallback(ctx, req)
	_, calls["Work"] = s.Work(ctx, queue.Job{Account: "acme", Message: "id"})
	calls["ReconcileTask"] = s.ReconcileTask().Run(ctx)
	for name, err := range calls {
		if notify.CodeOf(err) != notify.CodeUnavailable {
			t.Errorf("%s: %v, want Unavailable", name, err)
		}
	}
}

// TestReconcileTask: the task runs the Notifier's Reconcile every half
// settle threshold.
func TestReconcileTask(t *testing.T) {
	kit := notifytest.New(t, notifytest.WithNotifierOptions(notify.WithSettleAfter(10*time.Minute)))
	task := kit.Queued.ReconcileTask()
	if task.Name != "notify_reconcile" || task.Every != 5*time.Minute {
		t.Fatalf("task %q every %v, want notify_reconcile every 5m0s", task.Name, task.Every)
	}
	if err := task.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}
