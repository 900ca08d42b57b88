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

// TestGatewayCloudNeedsAnOTPRoute: with the real cloud API and neither an
// authentication template nor a QR gateway, one-time codes could go
// nowhere: the gateway does not start, and says what to set.
func TestGatewayCloudNeedsAnOTPRoute(t *testing.T) {
	cfg := map[string]string{"NOTIFY_CLOUD_TOKEN": "t", "NOTIFY_CLOUD_PHONE_ID": "106540352242922"}
	_, err := loadConfig(func(k string) string { return cfg[k] })
	if err == nil || !strings.Contains(err.Error(), "NOTIFY_CLOUD_OTP_TEMPLATE") || !strings.Contains(err.Error(), "NOTIFY_QR_URL") {
		t.Fatalf("err = %v", err)
	}
	cfg["NOTIFY_CLOUD_OTP_TEMPLATE"] = "otp_code"
	if _, err := loadConfig(func(k string) string { return cfg[k] }); err != nil {
		t.Fatal(err)
	}
	delete(cfg, "NOTIFY_CLOUD_OTP_TEMPLATE")
	cfg["NOTIFY_CLOUD_OTP_LANGUAGE"] = "hi"
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
