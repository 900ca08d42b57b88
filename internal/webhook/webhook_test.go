package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/notifykit/notify"
)

type reporterFunc func(context.Context, *notify.DeliveryReport) (*notify.ReportResult, error)

func (f reporterFunc) Report(ctx context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
	return f(ctx, r)
}

// TestDeliverOutlivesTheVendorsHangUp: a vendor that hangs up while its
// reports are being applied does not cut them short.
func TestDeliverOutlivesTheVendorsHangUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var got []error
	rep := reporterFunc(func(ctx context.Context, _ *notify.DeliveryReport) (*notify.ReportResult, error) {
		cancel() // the vendor hangs up during the first report
		got = append(got, ctx.Err())
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the reports run without a bound")
		}
		return &notify.ReportResult{}, nil
	})
	var c Counter
	rec := httptest.NewRecorder()
	c.Deliver(ctx, rec, rep, []*notify.DeliveryReport{{}, {}})
	if rec.Code != http.StatusOK || len(got) != 2 || got[0] != nil || got[1] != nil {
		t.Fatalf("answer %d, report contexts %v: want both reports run with a live context", rec.Code, got)
	}
}
