package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/provider/logprovider"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/smsgateway"
	"github.com/notifykit/notify/provider/twilio"
	"github.com/notifykit/notify/provider/vonage"
)

// smsChannel returns the SMS channel: the vendors cfg.smsRoutes names,
// each message offered to them in the rules' order (failing over from
// one that certainly refused it for now), or the logging provider when
// no vendor is configured. It reads every country's numbers (phone/world,
// which main links);
// the account's allow list says where it may send. It also returns the
// providers, in the order the rules first name them, and a function that
// releases their connections.
func smsChannel(cfg *config, renderer notify.TemplateRenderer, logger *slog.Logger) (*sms.Channel, []notify.Provider, func(), error) {
	var providers []notify.Provider
	closeAll := func() {
		for _, p := range providers {
			if c, ok := p.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		}
	}
	base := sms.Config{Renderer: renderer,
		// The API's dlt route takes the client's operator-registered IDs;
		// NOTIFY_DLT=strict narrows it to the account's own templates.
		AllowUnregisteredDLT: !cfg.dltStrict}
	if len(cfg.smsRoutes) == 0 {
		log := logprovider.New(logger, smsLogProvider)
		base.Provider = log
		ch, err := sms.New(base)
		return ch, []notify.Provider{log}, func() {}, err
	}
	byName := map[string]notify.Provider{}
	for _, r := range cfg.smsRoutes {
		if byName[r.provider] != nil {
			continue
		}
		p, err := newSMSProvider(cfg, r.provider)
		if err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		byName[r.provider] = p
		providers = append(providers, p)
	}
	for _, r := range cfg.smsRoutes {
		base.Providers = append(base.Providers, sms.ProviderRule{Provider: byName[r.provider],
			Countries: r.countries, Prefixes: r.prefixes, Routes: r.routes, Accounts: r.accounts})
	}
	ch, err := sms.New(base)
	if err != nil {
		closeAll()
		return nil, nil, nil, fmt.Errorf("NOTIFY_SMS_ROUTES: %w", err)
	}
	return ch, providers, closeAll, nil
}

// newSMSProvider returns the vendor named name, as cfg configures it.
// Errors name the variables; the providers' errors never hold a secret.
func newSMSProvider(cfg *config, name string) (notify.Provider, error) {
	switch name {
	case providerSMSGateway:
		p, err := smsgateway.New(smsgateway.Config{BaseURL: cfg.smsURL, APIKey: cfg.smsKey})
		if err != nil {
			return nil, fmt.Errorf("NOTIFY_SMS_URL: %w", err)
		}
		return p, nil
	case providerMSG91:
		m := cfg.msg91
		p, err := msg91.New(msg91.Config{AuthKey: m.authKey, BaseURL: m.baseURL, OTPTemplateID: m.otpTemplate, OTPVar: m.otpVar})
		if err != nil {
			return nil, fmt.Errorf("NOTIFY_MSG91_*: %w", err)
		}
		return p, nil
	case providerTwilio:
		t := cfg.twilio
		tc := twilio.Config{AccountSID: t.accountSID, From: t.from, MessagingServiceSID: t.service,
			StatusCallback: t.callbackURL, BaseURL: t.baseURL}
		if t.apiKeySID != "" {
			// The API key calls the API; the auth token only checks the
			// callbacks' signatures.
			tc.APIKeySID, tc.APIKeySecret = t.apiKeySID, t.apiKeySecret
		} else {
			tc.AuthToken = t.authToken
		}
		p, err := twilio.New(tc)
		if err != nil {
			return nil, fmt.Errorf("NOTIFY_TWILIO_*: %w", err)
		}
		return p, nil
	case providerVonage:
		v := cfg.vonage
		p, err := vonage.New(vonage.Config{APIKey: v.apiKey, APISecret: v.apiSecret, From: v.from,
			Callback: v.callbackURL, BaseURL: v.baseURL})
		if err != nil {
			return nil, fmt.Errorf("NOTIFY_VONAGE_*: %w", err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("NOTIFY_SMS_ROUTES: no SMS provider is named %q", name)
}

// smsSummary is the banner's line about SMS: where they go.
func smsSummary(cfg *config) string {
	if len(cfg.smsRoutes) == 0 {
		return "logged, not sent (set NOTIFY_SMS_URL, NOTIFY_TWILIO_*, NOTIFY_VONAGE_* or NOTIFY_MSG91_*)"
	}
	var notes []string
	if len(distinctProviders(cfg.smsRoutes)) > 1 {
		notes = append(notes, "failover in the rules' order")
	}
	if cfg.breaker == nil {
		notes = append(notes, "circuit breakers off")
	} else {
		notes = append(notes, fmt.Sprintf("circuit breakers %d/%v", cfg.breaker.Failures, cfg.breaker.Cooldown))
	}
	return routesString(cfg.smsRoutes) + " (" + strings.Join(notes, "; ") + ")"
}

// distinctProviders lists the providers rules name, each once.
func distinctProviders(rules []smsRule) []string {
	var out []string
	for _, r := range rules {
		if !slices.Contains(out, r.provider) {
			out = append(out, r.provider)
		}
	}
	return out
}
