package cloudchat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/internal/golden"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/provider/cloudchat"
)

// TestRequestsGolden sends each shape through the strict fake and compares
// the whole request body with testdata/requests/<name>.json. Each case
// names the vendor's page that documents its shape.
func TestRequestsGolden(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	tests := []struct {
		name string
		// source is the vendor's documentation of the shape.
		source string
		msg    *chat.Message
	}{
		{"text", "cloud-api/reference/messages#text-object",
			&chat.Message{Text: "Your order A-1042 has shipped."}},
		{"document", "cloud-api/reference/messages#media-object (document: link, caption, filename)",
			&chat.Message{Text: "Your invoice", Media: &chat.Media{
				URL: "https://cdn.example.com/inv.pdf", Kind: chat.MediaDocument, FileName: "INV-7.pdf", MIMEType: "application/pdf"}}},
		{"video", "cloud-api/reference/messages#media-object (video: link, caption)",
			&chat.Message{Text: "How to return", Media: &chat.Media{
				URL: "https://cdn.example.com/a.mp4", Kind: chat.MediaVideo, FileName: "a.mp4", MIMEType: "video/mp4"}}},
		{"template-positional", "cloud-api/guides/send-message-templates (positional body parameters)",
			&chat.Message{Template: &chat.Template{Name: "order_confirmed", Language: "en_US", Params: []string{"Asha", "A-1042"}}}},
		{"template-document-header", "cloud-api/guides/send-message-templates (media header parameter)",
			&chat.Message{Template: &chat.Template{Name: "invoice_ready", Language: "en", Params: []string{"INV-7"},
				HeaderURL: "https://cdn.example.com/inv.pdf", HeaderKind: chat.MediaDocument}}},
		{"authentication-otp", "business-management-api/authentication-templates, \"Sending authentication templates\": the code in the body and in the button component, sub_type url, index \"0\" (copy code and one-tap alike)",
			&chat.Message{OTP: "482915", Template: &chat.Template{Name: "otp_code", Language: "en_US", Params: []string{"482915"},
				Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 0, Value: "482915"}}}}},
		{"template-named", "cloud-api/guides/send-message-templates (named parameters: parameter_name; text header; URL and quick-reply button parameters)",
			&chat.Message{Template: &chat.Template{Name: "order_shipped", Language: "en_US",
				NamedParams: map[string]string{"order_id": "A-1042", "customer_name": "Asha"},
				HeaderText:  "A-1042",
				Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 0, Value: "track/A-1042"},
					{Kind: chat.ButtonQuickReply, Index: 1, Value: "stop-updates"}}}}},
		{"template-coupon", "cloud-api/guides/send-message-templates (copy code button: coupon_code parameter)",
			&chat.Message{Template: &chat.Template{Name: "summer_sale", Language: "en_US", Params: []string{"25%"},
				Buttons: []chat.Button{{Kind: chat.ButtonCopyCode, Index: 0, Value: "SUMMER25"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := p.Send(context.Background(), chatEnv("9876543210", tt.msg)); err != nil {
				t.Fatalf("the fake vendor refused the %s shape: %v", tt.name, err)
			}
			got, err := json.MarshalIndent(vendor.Last(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "requests", tt.name+".json")
			if !golden.Check(t, path, got) {
				t.Logf("shape: %s", tt.source)
			}
		})
	}
}

// TestAuthenticationTemplateNeedsItsButton shows what the vendor answers
// for an authentication template whose OTP button has no parameter, and
// that the answer reaches the caller as a typed *cloudchat.Error without
// the code.
func TestAuthenticationTemplateNeedsItsButton(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	_, err := p.Send(context.Background(), chatEnv("9876543210", &chat.Message{OTP: "482915",
		Template: &chat.Template{Name: "otp_code", Language: "en_US", Params: []string{"482915"}}}))
	var ce *cloudchat.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *cloudchat.Error inside", err)
	}
	if ce.Code != 131008 || ce.HTTPStatus != 400 || ce.TraceID == "" || ce.Details != "Button at index 0 of type Url requires a parameter" {
		t.Errorf("error = %+v", ce)
	}
	if notify.CodeOf(err) != notify.CodeRejected || notify.IsRetryable(err) {
		t.Errorf("code %s retryable %v, want a permanent refusal", notify.CodeOf(err), notify.IsRetryable(err))
	}
	if bytes.Contains([]byte(err.Error()), []byte("482915")) || bytes.Contains([]byte(err.Error()), []byte(testToken)) {
		t.Errorf("error shows a secret: %v", err)
	}
}

// TestTemplateValuesRefused checks that values the vendor would refuse
// are refused before any request, naming the field.
func TestTemplateValuesRefused(t *testing.T) {
	vendor := newFakeGraph(t)
	p := newProvider(t, vendor, testToken)
	tests := []struct {
		name  string
		tmpl  chat.Template
		field string
	}{
		{"line break", chat.Template{Name: "order_confirmed", Params: []string{"Asha\nBcc", "A-1"}}, "variables.1"},
		{"tab", chat.Template{Name: "order_confirmed", Params: []string{"Asha", "A\t1"}}, "variables.2"},
		{"five spaces", chat.Template{Name: "order_confirmed", Params: []string{"Asha     x", "A-1"}}, "variables.1"},
		{"empty", chat.Template{Name: "order_confirmed", Params: []string{" ", "A-1"}}, "variables.1"},
		{"both kinds", chat.Template{Name: "order_shipped", Params: []string{"x"}, NamedParams: map[string]string{"order_id": "1"}}, "variables"},
		{"bad name", chat.Template{Name: "order_shipped", NamedParams: map[string]string{"Order-ID": "1"}}, "variables"},
		{"button index", chat.Template{Name: "otp_code", Params: []string{"1"}, Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 10, Value: "1"}}}, "buttons.0"},
		{"button twice", chat.Template{Name: "otp_code", Params: []string{"1"}, Buttons: []chat.Button{
			{Kind: chat.ButtonURL, Value: "1"}, {Kind: chat.ButtonURL, Value: "1"}}}, "buttons.1"},
		{"button kind", chat.Template{Name: "otp_code", Params: []string{"1"}, Buttons: []chat.Button{{Kind: "call", Value: "1"}}}, "buttons.0"},
		{"empty url value", chat.Template{Name: "otp_code", Params: []string{"1"}, Buttons: []chat.Button{{Kind: chat.ButtonURL}}}, "buttons.0"},
		{"long coupon", chat.Template{Name: "summer_sale", Params: []string{"1"}, Buttons: []chat.Button{{Kind: chat.ButtonCopyCode, Value: "SUMMER2025SPECIAL"}}}, "buttons.0"},
		{"two headers", chat.Template{Name: "order_shipped", HeaderText: "x", HeaderURL: "https://cdn.example.com/a.png"}, "header_url"},
		{"no name", chat.Template{Params: []string{"1"}}, "template_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := tt.tmpl
			_, err := p.Send(context.Background(), chatEnv("9876543210", &chat.Message{Template: &tmpl}))
			var e *notify.Error
			if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
				t.Fatalf("err = %v, want invalid_argument", err)
			}
			found := false
			for _, f := range e.Fields {
				found = found || f.Field == tt.field
			}
			if !found {
				t.Errorf("fields %v, want %s", e.Fields, tt.field)
			}
		})
	}
	if n := vendor.Requests(); n != 0 {
		t.Errorf("the vendor got %d requests, want none", n)
	}
}
