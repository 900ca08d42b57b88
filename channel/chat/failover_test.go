package chat_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/provider/memprovider"
)

func prepare(t *testing.T, r *rig, acct *notify.Account, req *chat.Request) *notify.Envelope {
	t.Helper()
	env, err := r.ch.Prepare(context.Background(), acct, req)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	env.Account = acct
	return env
}

func TestFailover(t *testing.T) {
	tests := []struct {
		name      string
		primary   chat.Gateway
		requested chat.Gateway
		req       func() *chat.Request
		failCloud notify.Code // injected into the next send of each provider
		failQR    notify.Code
		gateway   chat.Gateway // delivered by; "" = Deliver fails
		code      notify.Code  // Deliver's code when it fails
		note      string
	}{
		{name: "temporary on cloud falls over to qr", primary: chat.GatewayCloud, req: shapeOTP,
			failCloud: notify.CodeUnavailable, gateway: chat.GatewayQR, note: "the cloud gateway failed first"},
		{name: "rate limit on qr falls over to cloud", primary: chat.GatewayQR, req: shapeOTP,
			failQR: notify.CodeRateLimited, gateway: chat.GatewayCloud, note: "the qr gateway failed first"},
		{name: "cloud template falls over as text", primary: chat.GatewayCloud, req: shapeTemplate,
			failCloud: notify.CodeUnavailable, gateway: chat.GatewayQR},
		{name: "permanent failure does not fall over", primary: chat.GatewayCloud, req: shapeOTP,
			failCloud: notify.CodeRejected, code: notify.CodeRejected},
		{name: "explicit gateway does not fall over", primary: chat.GatewayCloud, requested: chat.GatewayCloud, req: shapeOTP,
			failCloud: notify.CodeUnavailable, code: notify.CodeUnavailable},
		{name: "template_name cannot go to qr", primary: chat.GatewayQR, req: func() *chat.Request {
			r := shapeCloud()
			r.Gateway = ""
			return r
		}, failCloud: notify.CodeUnavailable, code: notify.CodeUnavailable},
		{name: "both fail", primary: chat.GatewayCloud, req: shapeMedia,
			failCloud: notify.CodeUnavailable, failQR: notify.CodeRejected, code: notify.CodeRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			if tt.failCloud != "" {
				r.cloud.FailNext(1, tt.failCloud)
			}
			if tt.failQR != "" {
				r.qr.FailNext(1, tt.failQR)
			}
			req := tt.req()
			if tt.requested != "" {
				req.Gateway = tt.requested
			}
			acct := account(tt.primary)
			env := prepare(t, r, acct, req)
			before := *chat.MessageOf(env)
			res, err := r.ch.Deliver(context.Background(), env)
			if *chat.MessageOf(env) != before {
				t.Error("Deliver modified the envelope")
			}
			if tt.gateway == "" {
				if notify.CodeOf(err) != tt.code {
					t.Fatalf("Deliver = %v, %v; want code %s", res, err, tt.code)
				}
				if r.cloud.Len()+r.qr.Len() != 0 {
					t.Fatal("a failed delivery was captured")
				}
				return
			}
			if err != nil {
				t.Fatalf("Deliver: %v", err)
			}
			prov := r.cloud
			if tt.gateway == chat.GatewayQR {
				prov = r.qr
			}
			if res.Route != string(tt.gateway) || res.Provider != prov.Name() || prov.Len() != 1 || !strings.Contains(res.Note, tt.note) {
				t.Fatalf("result %+v (sent %d), want gateway %s and note %q", res, prov.Len(), tt.gateway, tt.note)
			}
			got := prov.Sent()[0]
			if chat.MessageOf(got).Gateway != tt.gateway || got.Provider != prov.Name() {
				t.Errorf("the failover envelope says %s/%s", chat.MessageOf(got).Gateway, got.Provider)
			}
			if tt.gateway == chat.GatewayQR && chat.MessageOf(got).Template != nil {
				t.Error("the QR gateway got a cloud template")
			}
		})
	}
}

// TestFailoverErrorNamesBoth: when both gateways fail, the error has the
// second failure's code and says what happened to the first.
func TestFailoverErrorNamesBoth(t *testing.T) {
	r := newRig(t, nil)
	r.cloud.FailNext(1, notify.CodeUnavailable)
	r.qr.FailNext(1, notify.CodeRateLimited)
	env := prepare(t, r, account(chat.GatewayCloud), shapeOTP())
	_, err := r.ch.Deliver(context.Background(), env)
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeRateLimited || e.Provider != "qr-mem" ||
		!strings.Contains(err.Error(), "after the cloud gateway") {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "482915") {
		t.Fatal("the error holds the OTP")
	}
}

// TestNoFailoverWhenContextEnds: a send abandoned by the caller is not
// repeated on the other gateway.
func TestNoFailoverWhenContextEnds(t *testing.T) {
	r := newRig(t, nil)
	r.cloud.SetLatency(time.Second)
	env := prepare(t, r, account(chat.GatewayCloud), shapeOTP())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := r.ch.Deliver(ctx, env)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
	if r.qr.Len() != 0 {
		t.Fatal("fell over after the context ended")
	}
}

// TestFallbackMark: Prepare marks the messages whose other gateway is
// configured and can carry them, for which the Notifier keeps what a late
// failover needs.
func TestFallbackMark(t *testing.T) {
	both := newRig(t, nil)
	cloudOnly := newRig(t, func(c *chat.Config) { c.QR = nil })
	explicit := shapeMedia()
	explicit.Gateway = chat.GatewayCloud
	for _, tt := range []struct {
		name string
		r    *rig
		req  *chat.Request
		want bool
	}{
		{"auto with both gateways", both, shapeMedia(), true},
		{"auto with the cloud gateway alone", cloudOnly, shapeMedia(), false},
		{"a gateway chosen by the request", both, explicit, false},
		{"a cloud template without text", both, func() *chat.Request { r := shapeCloud(); r.Gateway = ""; return r }(), false},
	} {
		if got := chat.MessageOf(prepare(t, tt.r, account(chat.GatewayCloud), tt.req)).Fallback; got != tt.want {
			t.Errorf("%s: Fallback = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// coreQR is a QR provider that cannot attach files, as qrchat on WAHA
// Core reports with SupportsMedia.
type coreQR struct{ *memprovider.Provider }

func (coreQR) SupportsMedia() bool { return false }

// TestMediaAvoidsACoreQRGateway: under auto, a file for an account whose
// primary is a QR gateway that cannot attach files goes by the cloud
// gateway; text still goes by QR, and an explicit qr is left to the
// provider's own choice (refuse or link).
func TestMediaAvoidsACoreQRGateway(t *testing.T) {
	r := newRig(t, func(c *chat.Config) { c.QR = coreQR{memprovider.New("qr-core")} })
	if env := prepare(t, r, account(chat.GatewayQR), shapeMedia()); chat.MessageOf(env).Gateway != chat.GatewayCloud {
		t.Fatalf("media under auto: %s", chat.MessageOf(env).Gateway)
	}
	if env := prepare(t, r, account(chat.GatewayQR), &chat.Request{To: "9876543210", Message: "hi"}); chat.MessageOf(env).Gateway != chat.GatewayQR {
		t.Fatalf("text under auto: %s", chat.MessageOf(env).Gateway)
	}
	req := shapeMedia()
	req.Gateway = chat.GatewayQR
	if env := prepare(t, r, account(chat.GatewayQR), req); chat.MessageOf(env).Gateway != chat.GatewayQR {
		t.Fatalf("explicit qr: %s", chat.MessageOf(env).Gateway)
	}
}
