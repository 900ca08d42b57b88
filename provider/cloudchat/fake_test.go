package cloudchat_test

import (
	"testing"

	"github.com/notifykit/notify/provider/cloudchat/cloudchattest"
)

const (
	testToken   = "EAAG-test-token-7f3e9a"
	testPhoneID = cloudchattest.DefaultPhoneNumberID
	testVersion = cloudchattest.DefaultVersion
	testSecret  = "app-secret-5b1d"
)

// The suite's names for the fake vendor's parts.
type (
	graphErr = cloudchattest.Error
	fault    = cloudchattest.Fault
)

var (
	serviceUnavailable = cloudchattest.ServiceUnavailable
	somethingWentWrong = cloudchattest.SomethingWentWrong
	throughputHit      = cloudchattest.ThroughputHit
	undeliverable      = cloudchattest.Undeliverable
)

// newFakeGraph starts the fake vendor for t; webhookURL, when given, is
// where it posts status webhooks, signed with testSecret.
func newFakeGraph(t *testing.T, webhookURL ...string) *cloudchattest.Server {
	cfg := cloudchattest.Config{Token: testToken, AppSecret: testSecret}
	if len(webhookURL) > 0 {
		cfg.WebhookURL = webhookURL[0]
	}
	f := cloudchattest.NewServer(cfg)
	t.Cleanup(f.Close)
	return f
}

func gerr(status, code int, message, details string) graphErr {
	return graphErr{Status: status, Code: code, Message: message, Details: details}
}
