package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/notifykit/notify/provider/cloudchat/cloudchattest"
)

// TestGatewayOTPByAuthenticationTemplate: an OTP for the cloud gateway
// goes as the approved authentication template, with the code in its body
// and in its OTP button (the strict fake answers 131008 without the
// button, and takes free text outside the window only to fail it later),
// both alone and as the chat leg of the dual OTP.
func TestGatewayOTPByAuthenticationTemplate(t *testing.T) {
	g, vendor, _ := reportingGateway(t, nil)
	for i, c := range []struct{ path, body string }{
		{"/messenger/send", `{"gateway":"cloud","to":"9000000001","otp":"482915","action":"login"}`},
		{"/send-otp", `{"to":"9000000001","otp":"482915"}`},
	} {
		a := g.post(t, c.path, g.key, c.body)
		if a.status != 200 || a.body["status"] != "sent" {
			t.Fatalf("%s: %d %s", c.path, a.status, a.raw)
		}
		acc := vendor.Accepted()
		if len(acc) != i+1 {
			t.Fatalf("%s: the vendor took %d messages, want %d", c.path, len(acc), i+1)
		}
		m := acc[i]
		if m.Body["type"] != "template" || m.OutsideWindow {
			t.Fatalf("%s: the vendor got %v", c.path, m.Body)
		}
		raw, _ := json.Marshal(m.Body["template"])
		want := `{"components":[{"parameters":[{"text":"482915","type":"text"}],"type":"body"},` +
			`{"index":"0","parameters":[{"text":"482915","type":"text"}],"sub_type":"url","type":"button"}],` +
			`"language":{"code":"en_US"},"name":"otp_code"}`
		if string(raw) != want {
			t.Fatalf("%s: template\n got %s\nwant %s", c.path, raw, want)
		}
	}
	if strings.Contains(g.out.text(), "482915") {
		t.Error("the gateway's log shows the code")
	}
}

// TestGatewayCloudWithoutAnOTPTemplate: the real cloud API with neither an
// authentication template nor a QR gateway starts, sends templates and
// text, and refuses only chat messages that carry a code, before anything
// is charged, naming the field and the setting: the dual OTP too, whose
// chat leg could not go. No log stands in for the missing QR gateway.
func TestGatewayCloudWithoutAnOTPTemplate(t *testing.T) {
	vendor := cloudchattest.NewServer(cloudchattest.Config{Token: cloudToken})
	t.Cleanup(vendor.Close)
	g := start(t, map[string]string{"NOTIFY_CLOUD_URL": vendor.URL, "NOTIFY_CLOUD_TOKEN": cloudToken,
		"NOTIFY_CLOUD_PHONE_ID": cloudchattest.DefaultPhoneNumberID})
	before := g.balanceMinor(t)
	for _, c := range []struct{ path, body string }{
		{"/messenger/send", `{"gateway":"cloud","to":"9000000001","otp":"482915","action":"login"}`},
		{"/messenger/send", `{"to":"9000000001","otp":"482915"}`},
		{"/messenger/send", `{"to":"9000000001","template_slug":"standard-otp","variables":{"OTP":"482915"}}`},
		{"/send-otp", `{"to":"9000000001","otp":"482915"}`},
	} {
		a := g.post(t, c.path, g.key, c.body)
		if a.status != 400 || errCode(a) != "invalid_argument" || !strings.Contains(a.raw, "NOTIFY_CLOUD_OTP_TEMPLATE") {
			t.Errorf("%s %s: %d %s, want a 400 naming the setting", c.path, c.body, a.status, a.raw)
		}
	}
	if a := g.post(t, "/messenger/send", g.key, `{"gateway":"qr","to":"9000000001","message":"hi"}`); a.status == 200 {
		t.Errorf("the QR gateway, which is not configured: %d %s", a.status, a.raw)
	}
	if n := len(vendor.Accepted()); n != 0 || g.balanceMinor(t) != before {
		t.Fatalf("the vendor took %d messages; balance %d, was %d: refusals cost nothing", n, g.balanceMinor(t), before)
	}
	a := g.post(t, "/messenger/send", g.key, `{"to":"9000000001","template_name":"order_confirmed","language":"en_US","variables":{"1":"Asha","2":"4711"}}`)
	if a.status != 200 || len(vendor.Accepted()) != 1 {
		t.Fatalf("a template without a code: %d %s", a.status, a.raw)
	}
	cfg := map[string]string{"NOTIFY_CLOUD_TOKEN": "t", "NOTIFY_CLOUD_PHONE_ID": "106540352242922", "NOTIFY_CLOUD_OTP_LANGUAGE": "hi"}
	if _, err := loadConfig(func(k string) string { return cfg[k] }); err == nil || !strings.Contains(err.Error(), "NOTIFY_CLOUD_OTP_LANGUAGE") {
		t.Fatalf("language without the template: %v", err)
	}
}

// TestGatewayCloudVersion: NOTIFY_CLOUD_VERSION picks the API version the
// requests go to (a vendor that serves only v24.0 takes them).
func TestGatewayCloudVersion(t *testing.T) {
	vendor := cloudchattest.NewServer(cloudchattest.Config{Token: cloudToken, Version: "v24.0"})
	t.Cleanup(vendor.Close)
	g := start(t, map[string]string{"NOTIFY_CLOUD_URL": vendor.URL, "NOTIFY_CLOUD_TOKEN": cloudToken,
		"NOTIFY_CLOUD_PHONE_ID": cloudchattest.DefaultPhoneNumberID, "NOTIFY_CLOUD_VERSION": "v24.0",
		"NOTIFY_CLOUD_OTP_TEMPLATE": "otp_code"})
	a := g.post(t, "/messenger/send", g.key, `{"gateway":"cloud","to":"9876543210","message":"hi"}`)
	if a.status != 200 || len(vendor.Accepted()) != 1 {
		t.Fatalf("send: %d %s", a.status, a.raw)
	}
}
