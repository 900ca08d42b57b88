package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/cloudchat"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/qrchat"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/vonage"
)

// webhookPrefix is where the vendors' delivery-report webhooks live,
// beside the API.
const webhookPrefix = "/webhooks/"

// webhookStats are the counts of the mounted receivers, by vendor
// (cloudchat, qrchat, smsgateway, twilio, vonage, msg91), for the metrics.
type webhookStats map[string]func() notify.WebhookStats

// webhooks returns the receivers of the vendors' delivery reports that
// the configuration enables, each mounted only when its secret is set,
// the paths mounted (for the banner) and their counts; nil when none is.
func webhooks(cfg *config, n *notify.Notifier) (http.Handler, []string, webhookStats, error) {
	mux := http.NewServeMux()
	var paths []string
	stats := webhookStats{}
	if cfg.cloudAppSecret != "" {
		hook, err := cloudchat.NewWebhook(cloudchat.WebhookConfig{Reporter: n,
			AppSecret: cfg.cloudAppSecret, VerifyToken: cfg.cloudVerifyToken})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("NOTIFY_CLOUD_APP_SECRET: %w", err)
		}
		mux.Handle(webhookPrefix+"cloudchat", hook)
		stats["cloudchat"] = hook.Stats
		paths = append(paths, "GET, POST "+webhookPrefix+"cloudchat")
	}
	if cfg.qrWebhookSecret != "" {
		hook, err := qrchat.NewWebhook(qrchat.WebhookConfig{Reporter: n, Secret: cfg.qrWebhookSecret, Session: cfg.qrSession})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("NOTIFY_QR_WEBHOOK_SECRET: %w", err)
		}
		mux.Handle(webhookPrefix+"qrchat", hook)
		stats["qrchat"] = hook.Stats
		paths = append(paths, "POST "+webhookPrefix+"qrchat")
	}
	if cfg.smsWebhookToken != "" {
		hook, err := smsgateway.NewWebhook(smsgateway.WebhookConfig{Reporter: n, Token: cfg.smsWebhookToken})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("NOTIFY_SMS_WEBHOOK_TOKEN: %w", err)
		}
		stats["smsgateway"] = hook.Stats
		// The methods the vendor's webhook settings offer.
		for _, method := range []string{"GET", "POST", "PUT"} {
			mux.Handle(method+" "+webhookPrefix+"smsgateway/{token}", hook)
		}
		paths = append(paths, "GET, POST, PUT "+webhookPrefix+"smsgateway/$NOTIFY_SMS_WEBHOOK_TOKEN")
	}
	if cfg.twilio != nil && cfg.twilio.callbackURL != "" {
		// Twilio signs each callback over the URL it called: the one it
		// was given (NOTIFY_TWILIO_CALLBACK_URL), which is checked rather
		// than this request's, since a proxy may stand between.
		hook, err := twilio.NewWebhook(twilio.WebhookConfig{Reporter: n, AuthToken: cfg.twilio.authToken,
			AccountSID: cfg.twilio.accountSID, URL: cfg.twilio.callbackURL, Provider: providerTwilio})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("NOTIFY_TWILIO_AUTH_TOKEN, NOTIFY_TWILIO_CALLBACK_URL: %w", err)
		}
		// Any method: the receiver answers 405 to all but POST.
		mux.Handle(webhookPrefix+"twilio", hook)
		stats["twilio"] = hook.Stats
		paths = append(paths, "POST "+webhookPrefix+"twilio (signed; Twilio calls "+cfg.twilio.callbackURL+")")
	}
	if v := cfg.vonage; v != nil && v.receiver() {
		// The receipts of the key's messages, signed (the account's signed
		// webhooks), or at a secret path, or both.
		hook, err := vonage.NewWebhook(vonage.WebhookConfig{Reporter: n, SignatureSecret: v.signatureSecret,
			SignatureMethod: v.signatureMethod, Token: v.webhookToken, APIKey: v.apiKey, Provider: providerVonage})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("NOTIFY_VONAGE_SIGNATURE_SECRET, NOTIFY_VONAGE_WEBHOOK_TOKEN: %w", err)
		}
		pattern, how := webhookPrefix+providerVonage, "signed, "+string(v.signatureMethod)
		if v.webhookToken != "" {
			pattern += "/{token}"
			if v.signatureSecret == "" {
				how = "unsigned: the token authenticates"
			}
		}
		// Any method: the receiver answers 405 to all but GET and POST,
		// the methods of the dashboard's webhook settings.
		mux.Handle(pattern, hook)
		if v.webhookToken != "" {
			// The callback may end in a slash after the token, which the
			// mux would otherwise answer 404, losing every receipt.
			mux.Handle(pattern+"/{$}", hook)
		}
		stats[providerVonage] = hook.Stats
		paths = append(paths, "GET, POST "+v.webhookPath()+" ("+how+")")
	}
	if cfg.msg91 != nil && cfg.msg91.webhookToken != "" {
		hook, err := msg91.NewWebhook(msg91.WebhookConfig{Reporter: n, Token: cfg.msg91.webhookToken, Provider: providerMSG91})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("NOTIFY_MSG91_WEBHOOK_TOKEN: %w", err)
		}
		mux.Handle(webhookPrefix+"msg91/{token}", hook)
		stats["msg91"] = hook.Stats
		paths = append(paths, "POST "+webhookPrefix+"msg91/$NOTIFY_MSG91_WEBHOOK_TOKEN")
	}
	if len(paths) == 0 {
		return nil, nil, nil, nil
	}
	return mux, paths, stats, nil
}

// route is a handler mounted beside the API: it serves the requests
// whose path is prefix or, when prefix ends in "/", starts with it.
type route struct {
	prefix string
	h      http.Handler
}

// withRoutes sends each request to the first route whose prefix matches
// its path and every other one to api, whose own 404 and 405 answers stay
// as they are (it does not clean paths, as a ServeMux would).
func withRoutes(api http.Handler, routes []route) http.Handler {
	if len(routes) == 0 {
		return api
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range routes {
			if r.URL.Path == rt.prefix || strings.HasSuffix(rt.prefix, "/") && strings.HasPrefix(r.URL.Path, rt.prefix) {
				rt.h.ServeHTTP(w, r)
				return
			}
		}
		api.ServeHTTP(w, r)
	})
}
