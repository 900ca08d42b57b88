package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/fcm"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/provider/webpush"
)

// pushPlan is the push channel and what the gateway serves beside it.
type pushPlan struct {
	ch *push.Channel
	// providers are the channel's providers, Web Push's first: the
	// metrics' known series, and /readyz (FCM's CheckHealth gets a token).
	providers []notify.Provider
	// vapidKey is the Web Push provider's public key, which
	// GET /api/v1/push/vapid-public-key serves; "" without Web Push (the
	// logging stand-in has no key).
	vapidKey string
	// close releases the providers' connections.
	close func()
}

// pushChannel returns the push channel: Web Push (NOTIFY_WEBPUSH_*) and
// FCM (NOTIFY_FCM_*) as configured, or, with neither, logging stand-ins
// for both (webpush-log, fcm-log), whose pushes the outbox shows. Once
// either is a real vendor, the other is a vendor or absent, as in chat: a
// log would take real people's pushes and charge for them. d's
// webPushClient, a test's, sends Web Push's requests.
func pushChannel(cfg *config, logger *slog.Logger, d deps) (*pushPlan, error) {
	plan := &pushPlan{close: func() {}}
	var wp, fc notify.Provider
	if cfg.webPush == nil && cfg.fcm == nil {
		wp, fc = logprovider.New(logger, webPushLogProvider), logprovider.New(logger, fcmLogProvider)
	}
	var closers []func() error
	closeAll := func() {
		for _, c := range closers {
			_ = c()
		}
	}
	if w := cfg.webPush; w != nil {
		p, err := webpush.New(webpush.Config{VAPIDPublicKey: w.publicKey, VAPIDPrivateKey: w.privateKey, Subscriber: w.subscriber,
			HTTPClient: d.webPushClient})
		if err != nil {
			return nil, webPushError(err)
		}
		closers = append(closers, p.Close)
		wp, plan.vapidKey = p, p.PublicKey()
	}
	if f := cfg.fcm; f != nil {
		p, err := fcm.New(fcm.Config{ProjectID: f.projectID, CredentialsJSON: f.credentials, BaseURL: f.baseURL})
		if err != nil {
			closeAll()
			return nil, fcmError(err)
		}
		closers = append(closers, p.Close)
		fc = p
	}
	ch, err := push.New(push.Config{WebPush: wp, FCM: fc})
	if err != nil {
		closeAll()
		return nil, err
	}
	plan.ch, plan.close = ch, closeAll
	for _, p := range []notify.Provider{wp, fc} {
		if p != nil {
			plan.providers = append(plan.providers, p)
		}
	}
	return plan, nil
}

// pushSummary is the banner's line about push: where pushes go.
func pushSummary(cfg *config) string {
	if cfg.webPush == nil && cfg.fcm == nil {
		return "logged, not sent (set NOTIFY_WEBPUSH_* or NOTIFY_FCM_*)"
	}
	var out []string
	if w := cfg.webPush; w != nil {
		out = append(out, fmt.Sprintf("%s (VAPID public key %s, subscriber %s)", providerWebPush, w.publicKey, w.subscriber))
	} else {
		out = append(out, "no Web Push (set NOTIFY_WEBPUSH_*)")
	}
	if f := cfg.fcm; f != nil {
		out = append(out, fmt.Sprintf("%s (project %s)", providerFCM, f.projectID))
	} else {
		out = append(out, "no FCM (set NOTIFY_FCM_*)")
	}
	return strings.Join(out, "; ")
}
