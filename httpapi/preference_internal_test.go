package httpapi

import (
	"testing"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
)

// TestDecodeCategory: every send body's "category" reaches its request's
// Category, on every route that reuses the body (bulk, fallback steps).
func TestDecodeCategory(t *testing.T) {
	s, err := decodeSMS([]byte(`{"to":"9876543210","message":"x","category":"marketing"}`), "a", Header{})
	if err != nil || s.Category != "marketing" {
		t.Errorf("sms: %+v, %v", s, err)
	}
	b, _, err := decodeBulkSMS([]byte(`{"to":["9876543210"],"message":"x","category":"marketing"}`), "a", Header{})
	if err != nil || b.Message.Category != "marketing" {
		t.Errorf("bulk: %+v, %v", b, err)
	}
	o, err := decodeOTP([]byte(`{"to":"9876543210","otp":"482915","category":"otp"}`), "a", Header{})
	if err != nil || o.Category != "otp" {
		t.Errorf("otp: %+v, %v", o, err)
	}
	for _, p := range o.Parts() {
		switch p := p.(type) {
		case *sms.Request:
			if p.Category != "otp" {
				t.Errorf("otp's SMS part: %q", p.Category)
			}
		case *chat.Request:
			if p.Category != "otp" {
				t.Errorf("otp's chat part: %q", p.Category)
			}
		}
	}
	m, err := decodeEmail([]byte(`{"to":"a@example.com","subject":"s","message":"x","category":"order"}`), "a", Header{})
	if err != nil || m.Category != "order" {
		t.Errorf("email: %+v, %v", m, err)
	}
	c, err := decodeChat([]byte(`{"to":"9876543210","message":"x","category":"order"}`), "a", Header{})
	if err != nil || c.Category != "order" {
		t.Errorf("chat: %+v, %v", c, err)
	}
	// Absent, null and "" are no category.
	for _, body := range []string{`{"to":"9876543210","message":"x"}`, `{"to":"9876543210","message":"x","category":null}`,
		`{"to":"9876543210","message":"x","category":""}`} {
		if s, err := decodeSMS([]byte(body), "a", Header{}); err != nil || s.Category != "" {
			t.Errorf("%s: %+v, %v", body, s, err)
		}
	}

	// A fallback step takes the chat's category unless it names its own.
	req, _, err := decodeChatAt([]byte(`{"to":"9876543210","message":"x","category":"marketing","fallback":[`+
		`{"channel":"sms","after_seconds":60,"message":"y"},`+
		`{"channel":"email","after_seconds":60,"to":"a@example.com","subject":"s","message":"y","category":null},`+
		`{"channel":"sms","after_seconds":60,"message":"y","category":"order"}]}`), "a", Header{}, false)
	if err != nil {
		t.Fatal(err)
	}
	wf, ok := req.(*withFallback)
	if !ok || len(wf.chain) != 3 || wf.Request.(*chat.Request).Category != "marketing" {
		t.Fatalf("chat with fallback: %+v", req)
	}
	if got := wf.chain[0].Request.(*sms.Request).Category; got != "marketing" {
		t.Errorf("SMS step without a category: %q, want the chat's", got)
	}
	if got := wf.chain[1].Request.(*email.Request).Category; got != "marketing" {
		t.Errorf("e-mail step with a null category: %q, want the chat's", got)
	}
	if got := wf.chain[2].Request.(*sms.Request).Category; got != "order" {
		t.Errorf("SMS step naming order: %q", got)
	}
	// Without a category on the chat, a step has none unless it names one.
	req, _, err = decodeChatAt([]byte(`{"to":"9876543210","message":"x","fallback":[{"channel":"sms","after_seconds":60,"message":"y"}]}`),
		"a", Header{}, false)
	if err != nil || req.(*withFallback).chain[0].Request.(*sms.Request).Category != "" {
		t.Errorf("step of a chat without a category: %+v, %v", req, err)
	}
}
