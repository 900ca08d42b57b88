package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"sms            sent via sms-log, cost ₹0.25, balance ₹99.75",
		"chat template  sent via cloud-log",
		"dual otp       sent via sms-log+cloud-log",
		"bad sms        failed: notify.Send: invalid_argument: to: must be 10 digits, found 5; message: is required",
		"email          sent via email-log, cost ₹0.10",
		"balance of Acme Stores: ₹98.75",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "482913") {
		t.Error("the OTP code reached the log")
	}
}
