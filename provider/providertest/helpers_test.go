package providertest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/providertest"
)

// TestReports: Reports keeps what it is given, answers what Fail set, and
// forgets what Take returned.
func TestReports(t *testing.T) {
	var r providertest.Reports
	ctx := context.Background()
	if res, err := r.Report(ctx, &notify.DeliveryReport{ProviderMessageID: "a"}); err != nil || res == nil {
		t.Fatalf("Report = %v, %v; want a result", res, err)
	}
	down := errors.New("down")
	r.Fail(down)
	if _, err := r.Report(ctx, &notify.DeliveryReport{ProviderMessageID: "b"}); err != down {
		t.Fatalf("Report after Fail: %v", err)
	}
	r.Fail(nil)
	if _, err := r.Report(ctx, &notify.DeliveryReport{ProviderMessageID: "c"}); err != nil {
		t.Fatalf("Report after Fail(nil): %v", err)
	}
	if got := r.Got(); len(got) != 3 || got[0].ProviderMessageID != "a" || got[2].ProviderMessageID != "c" {
		t.Fatalf("Got = %+v", got)
	}
	if got := r.Take(); len(got) != 3 {
		t.Fatalf("Take = %+v", got)
	}
	if got := r.Got(); len(got) != 0 {
		t.Fatalf("Got after Take = %+v", got)
	}
}

// TestInjectors: Inject runs the failure's injector once and reports
// whether there is one.
func TestInjectors(t *testing.T) {
	var temporary, lost int
	in := providertest.Injectors{
		providertest.Temporary:  func() { temporary++ },
		providertest.AnswerLost: func() { lost++ },
	}
	if !in.Inject(providertest.Temporary) || temporary != 1 || lost != 0 {
		t.Fatalf("Inject(Temporary): temporary %d, lost %d", temporary, lost)
	}
	if in.Inject(providertest.Permanent) || temporary != 1 || lost != 0 {
		t.Fatalf("Inject(Permanent) reported an injector, or ran one")
	}
}
