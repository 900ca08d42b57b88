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

func prepare(t *testing.T, r *rig, acct *notify.Account, req *notify.ChatRequest) *notify.Envelope {
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
		primary   notify.ChatGateway
		requested notify.ChatGateway
		req       func() *notify.ChatRequest
		failCloud notify.Code // injected into the next send of each provider
		failQR    notify.Code
		gateway   notify.ChatGateway // delivered by; "" = Deliver fails
		code      notify.Code        // Deliver's code when it fails
		note      string
	}{
		{name: "temporary on cloud falls over to qr", primary: notify.GatewayCloud, req: shapeOTP,
			failCloud: notify.CodeUnavailable, gateway: notify.GatewayQR, note: "the cloud gateway failed first"},
		{name: "rate limit on qr falls over to cloud", primary: notify.GatewayQR, req: shapeOTP,
			failQR: notify.CodeRateLimited, gateway: notify.GatewayCloud, note: "the qr gateway failed first"},
		{name: "cloud template falls over as text", primary: notify.GatewayCloud, req: shapeTemplate,
			failCloud: notify.CodeUnavailable, gateway: notify.GatewayQR},
		{name: "permanent failure does not fall over", primary: notify.GatewayCloud, req: shapeOTP,
			failCloud: notify.CodeRejected, code: notify.CodeRejected},
		{name: "explicit gateway does not fall over", primary: notify.GatewayCloud, requested: notify.GatewayCloud, req: shapeOTP,
			failCloud: notify.CodeUnavailable, code: notify.CodeUnavailable},
		{name: "template_name cannot go to qr", primary: notify.GatewayQR, req: func() *notify.ChatRequest {
			r := shapeCloud()
			r.Gateway = ""
			return r
		}, failCloud: notify.CodeUnavailable, code: notify.CodeUnavailable},
		{name: "both fail", primary: notify.GatewayCloud, req: shapeMedia,
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
			before := *env.Chat
			res, err := r.ch.Deliver(context.Background(), env)
			if *env.Chat != before {
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
			if tt.gateway == notify.GatewayQR {
				prov = r.qr
			}
			if res.Gateway != tt.gateway || res.Provider != prov.Name() || prov.Len() != 1 || !strings.Contains(res.Note, tt.note) {
				t.Fatalf("result %+v (sent %d), want gateway %s and note %q", res, prov.Len(), tt.gateway, tt.note)
			}
			got := prov.Sent()[0]
			if got.Chat.Gateway != tt.gateway || got.Provider != prov.Name() {
				t.Errorf("the failover envelope says %s/%s", got.Chat.Gateway, got.Provider)
			}
			if tt.gateway == notify.GatewayQR && got.Chat.Template != nil {
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
	env := prepare(t, r, account(notify.GatewayCloud), shapeOTP())
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
	env := prepare(t, r, account(notify.GatewayCloud), shapeOTP())
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
	explicit.Gateway = notify.GatewayCloud
	for _, tt := range []struct {
		name string
		r    *rig
		req  *notify.ChatRequest
		want bool
	}{
		{"auto with both gateways", both, shapeMedia(), true},
		{"auto with the cloud gateway alone", cloudOnly, shapeMedia(), false},
		{"a gateway chosen by the request", both, explicit, false},
		{"a cloud template without text", both, func() *notify.ChatRequest { r := shapeCloud(); r.Gateway = ""; return r }(), false},
	} {
		if got := prepare(t, tt.r, account(notify.GatewayCloud), tt.req).Chat.Fallback; got != tt.want {
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
	if env := prepare(t, r, account(notify.GatewayQR), shapeMedia()); env.Chat.Gateway != notify.GatewayCloud {
		t.Fatalf("media under auto: %s", env.Chat.Gateway)
	}
	if env := prepare(t, r, account(notify.GatewayQR), &notify.ChatRequest{To: "9876543210", Message: "hi"}); env.Chat.Gateway != notify.GatewayQR {
		t.Fatalf("text under auto: %s", env.Chat.Gateway)
	}
	req := shapeMedia()
	req.Gateway = notify.GatewayQR
	if env := prepare(t, r, account(notify.GatewayQR), req); env.Chat.Gateway != notify.GatewayQR {
		t.Fatalf("explicit qr: %s", env.Chat.Gateway)
	}
}
