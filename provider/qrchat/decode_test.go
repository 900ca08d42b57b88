package qrchat

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzErrorMessage(f *testing.F) {
	f.Add([]byte(`{"error":"Session status is not as expected","session":"default","status":"STOPPED","expected":["WORKING"]}`), "boom")
	f.Add([]byte(`{"statusCode":400,"message":["a","b"],"error":"Bad Request"}`), "")
	f.Add([]byte(`{"message":{"nested":true}}`), "invalid wid")
	const secret = "SECRET-482915"
	f.Fuzz(func(t *testing.T, data []byte, exception string) {
		if msg, _ := errorMessage(data); len(msg) > 310 {
			t.Fatalf("message of %d bytes", len(msg))
		}
		// Gateways echo the request beside the error; only the error's
		// own text may come through.
		body, err := json.Marshal(map[string]any{
			"statusCode": 500,
			"exception":  map[string]any{"message": exception},
			"request":    map[string]any{"body": map[string]any{"text": secret}},
		})
		if err != nil {
			t.Skip()
		}
		msg, _ := errorMessage(body)
		if strings.Contains(msg, secret) && !strings.Contains(exception, secret) {
			t.Fatalf("echoed the request: %q", msg)
		}
	})
}

func FuzzMessageID(f *testing.F) {
	f.Add([]byte(`{"id":{"fromMe":true,"remote":"91@c.us","id":"3EB0","_serialized":"true_91@c.us_3EB0"}}`))
	f.Add([]byte(`{"key":{"remoteJid":"91@s.whatsapp.net","fromMe":true,"id":"BAE5"}}`))
	f.Add([]byte(`{"id":"3EB0"}`))
	f.Add([]byte(`{"_data":{"id":{"_serialized":"x"}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = messageID(data) // must not panic
	})
}

func TestMessageID(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":{"fromMe":true,"id":"3EB0","_serialized":"true_91@c.us_3EB0"}}`: "true_91@c.us_3EB0",
		`{"key":{"fromMe":true,"id":"BAE5"}}`:                                  "BAE5",
		`{"id":"3EB0"}`:                                                        "3EB0",
		`{"_data":{"id":{"_serialized":"x_y"}}}`:                               "x_y",
		`{"id":{"id":"only"}}`:                                                 "only",
		`{"id":null}`:                                                          "",
		`not json`:                                                             "",
	} {
		if got := messageID([]byte(in)); got != want {
			t.Errorf("messageID(%s) = %q, want %q", in, got, want)
		}
	}
}
