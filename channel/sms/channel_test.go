package sms_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/phone"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
)

const (
	otpTplID    = "1107161234567890123"
	orderTplID  = "1107169876543210987"
	entityID    = "1101456789012345678"
	otpTemplate = "Your OTP for {#var#} is {#var#}. It is valid for 10 minutes. - ACMECO"
)

func testAccount() *notify.Account {
	return &notify.Account{
		ID: "acme", Name: "Acme", Currency: record.INR(),
		Settings: sms.Settings{SenderID: "ACMECO", DLTTemplates: []sms.DLTTemplate{
			{ID: otpTplID, EntityID: entityID, Content: otpTemplate},
			{ID: orderTplID, EntityID: entityID, Content: "Dear {#var#}, your order {#var#} has shipped. - ACMECO"},
		}}.Map(),
	}
}

// changeSettings changes acct's SMS settings with change.
func changeSettings(t testing.TB, acct *notify.Account, change func(*sms.Settings)) {
	t.Helper()
	s, err := sms.SettingsOf(acct)
	if err != nil {
		t.Fatal(err)
	}
	change(&s)
	if err := sms.SetSettings(acct, s); err != nil {
		t.Fatal(err)
	}
}

func newChannel(t *testing.T, cfg sms.Config) (*sms.Channel, *memprovider.Provider) {
	t.Helper()
	p := memprovider.New("mem")
	if cfg.Provider == nil {
		cfg.Provider = p
	}
	ch, err := sms.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ch, p
}

func TestPrepareRoutes(t *testing.T) {
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := newChannel(t, sms.Config{Renderer: renderer})
	tests := []struct {
		name  string
		req   sms.Request
		want  sms.Message
		to    string
		class record.PriceClass
	}{
		{
			name: "sms route by default, sender from the vendor ID",
			req:  sms.Request{To: "+91 98765-43210", Message: "Your parcel is out for delivery."},
			want: sms.Message{Route: sms.RouteSMS, Text: "Your parcel is out for delivery.", SenderID: "ACMECO",
				Encoding: sms.GSM7, Segments: 1},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "sms route, own sender, Hindi",
			req:  sms.Request{To: "09876543210", Message: "आपका पार्सल आज पहुंचेगा।", SenderID: "SHOP1", Route: sms.RouteSMS},
			want: sms.Message{Route: sms.RouteSMS, Text: "आपका पार्सल आज पहुंचेगा।", SenderID: "SHOP1",
				Encoding: sms.UCS2, Segments: 1},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "sms route, two segments",
			req:  sms.Request{To: "9876543210", Message: strings.Repeat("x", 161)},
			want: sms.Message{Route: sms.RouteSMS, Text: strings.Repeat("x", 161), SenderID: "ACMECO",
				Encoding: sms.GSM7, Segments: 2},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "otp route with the request's brand",
			req:  sms.Request{To: "919876543210", Message: "482913", Route: sms.RouteOTP, Brand: "ShopKart"},
			want: sms.Message{Route: sms.RouteOTP, OTP: "482913", SenderID: "ACMECO",
				Text:     "482913 is your ShopKart verification code. Do not share it with anyone.",
				Encoding: sms.GSM7, Segments: 1},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "otp route, brand defaults to the account name",
			req:  sms.Request{To: "9876543210", Message: "4829", Route: sms.RouteOTP},
			want: sms.Message{Route: sms.RouteOTP, OTP: "4829", SenderID: "ACMECO",
				Text:     "4829 is your Acme verification code. Do not share it with anyone.",
				Encoding: sms.GSM7, Segments: 1},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "otp route with a stock template",
			req: sms.Request{To: "9876543210", Message: "48291375", Route: sms.RouteOTP,
				TemplateSlug: "standard-otp", Variables: record.Vars{"ACTION": "login"}},
			want: sms.Message{Route: sms.RouteOTP, OTP: "48291375", SenderID: "ACMECO",
				Text:     "48291375 is your Acme login code. Never share it with anyone.",
				Encoding: sms.GSM7, Segments: 1},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "dlt route, entity from the registered template",
			req: sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: otpTplID,
				Message: "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO", Domain: "shop.example.in"},
			want: sms.Message{Route: sms.RouteDLT, SenderID: "ACMECO", DLTTemplateID: otpTplID, DLTEntityID: entityID,
				Text:      "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO",
				DLTValues: []string{"login", "482913"}, Encoding: sms.GSM7, Segments: 1},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "dlt route, both IDs and a lower-case header",
			req: sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: orderTplID, DLTEntityID: entityID,
				SenderID: "acmeco", Message: "Dear Asha, your order A-1042 has shipped. - ACMECO"},
			want: sms.Message{Route: sms.RouteDLT, SenderID: "ACMECO", DLTTemplateID: orderTplID, DLTEntityID: entityID,
				Text:      "Dear Asha, your order A-1042 has shipped. - ACMECO",
				DLTValues: []string{"Asha", "A-1042"}, Encoding: sms.GSM7, Segments: 1},
			to: "+919876543210", class: record.Transactional,
		},
		{
			name: "sms route with a promotional stock template",
			req: sms.Request{To: "9876543210", TemplateSlug: "promo-discount",
				Variables: record.Vars{"NAME": "Asha", "DISCOUNT": "20%", "CODE": "SAVE20", "EXPIRY_DATE": "31/12/2030", "LINK": "https://shop.example.in"}},
			to: "+919876543210", class: record.Promotional,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			env, err := ch.Prepare(t.Context(), testAccount(), &req)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if env.Kind != sms.Kind || env.To != tt.to || env.Provider != "mem" || env.Class != tt.class ||
				env.Domain != tt.req.Domain || sms.MessageOf(env) == nil || env.Units != sms.MessageOf(env).Segments {
				t.Fatalf("envelope = %+v", env)
			}
			if tt.want.Route == "" { // only the class and the rendering are of interest
				if sms.MessageOf(env).Text == "" || sms.MessageOf(env).Route != sms.RouteSMS {
					t.Fatalf("SMS = %+v", sms.MessageOf(env))
				}
				return
			}
			want := tt.want
			want.NumberType = phone.Mobile // every number here is an Indian mobile one
			if !reflect.DeepEqual(*sms.MessageOf(env), want) {
				t.Fatalf("SMS = %+v\nwant  %+v", *sms.MessageOf(env), want)
			}
		})
	}
}

// TestPrepareBadInput has a case for each bad input of the SMS issue, and
// more; each must be InvalidArgument naming exactly the expected fields.
func TestPrepareBadInput(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{})
	good := "Your OTP for login is 482913. It is valid for 10 minutes. - ACMECO"
	tests := []struct {
		name   string
		req    sms.Request
		acct   func(*notify.Account)
		fields map[string]string // field -> part of its message
	}{
		{"9-digit number", sms.Request{To: "987654321", Message: "hi"},
			nil, map[string]string{"to": "10 digits, found 9"}},
		{"11-digit number", sms.Request{To: "98765432101", Message: "hi"},
			nil, map[string]string{"to": "10 digits, found 11"}},
		{"letters in the number", sms.Request{To: "98765abc10", Message: "hi"},
			nil, map[string]string{"to": "only digits"}},
		{"number starting 5", sms.Request{To: "5876543210", Message: "hi"},
			nil, map[string]string{"to": "start with 6, 7, 8 or 9"}},
		{"number starting 0 after the prefix", sms.Request{To: "+91 0876543210", Message: "hi"},
			nil, map[string]string{"to": "start with 6, 7, 8 or 9"}},
		{"missing number", sms.Request{Message: "hi"},
			nil, map[string]string{"to": "required"}},
		{"empty message", sms.Request{To: "9876543210"},
			nil, map[string]string{"message": "is required"}},
		{"blank message", sms.Request{To: "9876543210", Message: " \n\t"},
			nil, map[string]string{"message": "is required"}},
		{"unknown route", sms.Request{To: "9876543210", Message: "hi", Route: "promo"},
			nil, map[string]string{"route": `must be sms, otp or dlt, not "promo"`}},
		{"non-numeric OTP", sms.Request{To: "9876543210", Message: "48a913", Route: sms.RouteOTP},
			nil, map[string]string{"message": "4-8 digits, and it contains other characters"}},
		{"3-digit OTP", sms.Request{To: "9876543210", Message: "482", Route: sms.RouteOTP},
			nil, map[string]string{"message": "4-8 digits, found 3"}},
		{"9-digit OTP", sms.Request{To: "9876543210", Message: "482913751", Route: sms.RouteOTP},
			nil, map[string]string{"message": "4-8 digits, found 9"}},
		{"missing OTP", sms.Request{To: "9876543210", Route: sms.RouteOTP},
			nil, map[string]string{"message": "the OTP code"}},
		{"brand with a newline", sms.Request{To: "9876543210", Message: "4829", Route: sms.RouteOTP, Brand: "Acme\nFake"},
			nil, map[string]string{"brand": "control characters"}},
		{"dlt without IDs", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT},
			nil, map[string]string{"dlt_template_id": "is required on the dlt route (registered: " + otpTplID}},
		{"dlt without IDs, nothing registered", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT},
			func(a *notify.Account) { changeSettings(t, a, func(s *sms.Settings) { s.DLTTemplates = nil }) }, map[string]string{"dlt_template_id": "no registered DLT templates"}},
		{"7-character DLT header", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT, DLTTemplateID: otpTplID, SenderID: "ACMECOS"},
			nil, map[string]string{"sender_id": "6-letter DLT header on the dlt route, found 7 characters"}},
		{"DLT header with a digit", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT, DLTTemplateID: otpTplID, SenderID: "ACME01"},
			nil, map[string]string{"sender_id": "letters A-Z only"}},
		{"default DLT header too long", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT, DLTTemplateID: otpTplID},
			func(a *notify.Account) { changeSettings(t, a, func(s *sms.Settings) { s.SenderID = "ACMESHOP" }) }, map[string]string{"sender_id": "found 8 characters (the default, the account's vendor ID)"}},
		{"text does not match the DLT template", sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: otpTplID,
			Message: "Your OTP for login is 482913. It is valid for 15 minutes. - ACMECO"},
			nil, map[string]string{"message": `does not match DLT template "` + otpTplID + `": text differs from the template at character 48: expected "0 minutes. - ACMECO", found "5 minutes. - ACMECO"`}},
		{"DLT value over 30 characters", sms.Request{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: otpTplID,
			Message: "Your OTP for " + strings.Repeat("l", 31) + " is 482913. It is valid for 10 minutes. - ACMECO"},
			nil, map[string]string{"message": "value 1 (at character 14) is 31 characters, over the limit of 30"}},
		{"DLT template not registered", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT, DLTTemplateID: "1107000000000000000", DLTEntityID: entityID},
			nil, map[string]string{"dlt_template_id": `"1107000000000000000" is not registered on the account`}},
		{"DLT entity differs from the registered one", sms.Request{To: "9876543210", Message: good, Route: sms.RouteDLT, DLTTemplateID: otpTplID, DLTEntityID: "1101000000000000000"},
			nil, map[string]string{"dlt_entity_id": "is not the entity registered with template"}},
		{"more than 10 segments", sms.Request{To: "9876543210", Message: strings.Repeat("a", 153*10+1)},
			nil, map[string]string{"message": "is 11 segments long (GSM-7), over the limit of 10"}},
		{"more than 10 UCS-2 segments", sms.Request{To: "9876543210", Message: strings.Repeat("क", 67*10+1)},
			nil, map[string]string{"message": "is 11 segments long (UCS-2), over the limit of 10"}},
		{"invalid UTF-8", sms.Request{To: "9876543210", Message: "hi \xff"},
			nil, map[string]string{"message": "valid UTF-8"}},
		{"sender ID too long", sms.Request{To: "9876543210", Message: "hi", SenderID: "ACMESHOPPING1"},
			nil, map[string]string{"sender_id": "at most 11 letters and digits"}},
		{"template without a renderer", sms.Request{To: "9876543210", TemplateSlug: "standard-otp"},
			nil, map[string]string{"template_slug": "templates are not configured"}},
		{"every field at once", sms.Request{To: "12345", Route: "fax", SenderID: "not valid!", Domain: "a\nb"},
			nil, map[string]string{"to": "10 digits", "route": "must be sms, otp or dlt", "sender_id": "letters and digits",
				"domain": "control characters", "message": "is required"}},
		{"dlt route, every field at once", sms.Request{To: "98765", Route: sms.RouteDLT, SenderID: "ACMECOS"},
			nil, map[string]string{"to": "10 digits", "sender_id": "found 7", "message": "is required", "dlt_template_id": "is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acct := testAccount()
			if tt.acct != nil {
				tt.acct(acct)
			}
			req := tt.req
			env, err := ch.Prepare(t.Context(), acct, &req)
			if err == nil {
				t.Fatalf("Prepare accepted it: %+v", sms.MessageOf(env))
			}
			var ne *notify.Error
			if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument {
				t.Fatalf("error %v is not InvalidArgument", err)
			}
			got := map[string]string{}
			for _, f := range ne.Fields {
				if _, dup := got[f.Field]; dup {
					t.Errorf("field %s reported twice: %v", f.Field, err)
				}
				got[f.Field] = f.Message
			}
			for field, part := range tt.fields {
				if !strings.Contains(got[field], part) {
					t.Errorf("field %s: %q, want it to contain %q", field, got[field], part)
				}
			}
			if len(got) != len(tt.fields) {
				t.Errorf("fields = %v, want only %v", got, tt.fields)
			}
		})
	}
}

func TestPrepareNeverLeaksTheOTP(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{})
	for _, code := range []string{"48a913", "123456789", "12"} {
		_, err := ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Message: code, Route: sms.RouteOTP})
		if err == nil || strings.Contains(err.Error(), code) {
			t.Errorf("error for a bad OTP: %v", err)
		}
	}
}

func TestAllowUnregisteredDLT(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{AllowUnregisteredDLT: true})
	text := "Any text the operator will check. - ACMECO"
	env, err := ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Message: text,
		Route: sms.RouteDLT, DLTTemplateID: "1107000000000000000", DLTEntityID: entityID})
	if err != nil {
		t.Fatal(err)
	}
	if sms.MessageOf(env).DLTTemplateID != "1107000000000000000" || sms.MessageOf(env).DLTEntityID != entityID || sms.MessageOf(env).DLTValues != nil || sms.MessageOf(env).Text != text {
		t.Fatalf("SMS = %+v", sms.MessageOf(env))
	}
	// Without the entity the message cannot be sent at all.
	_, err = ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Message: text,
		Route: sms.RouteDLT, DLTTemplateID: "1107000000000000000"})
	if err == nil || !strings.Contains(err.Error(), "dlt_entity_id: is required") {
		t.Fatalf("error = %v", err)
	}
}

// stubRenderer fails or renders as told, to test what the channel does
// with a renderer's answers.
type stubRenderer struct {
	rendered *notify.Rendered
	err      error
	gotVars  record.Vars
}

func (s *stubRenderer) Render(_ context.Context, kind notify.Kind, _ *notify.Account, _, _ string, vars record.Vars) (*notify.Rendered, error) {
	if kind != sms.Kind {
		return nil, errors.New("stub: wrong kind")
	}
	s.gotVars = vars
	return s.rendered, s.err
}

func TestPrepareRendererErrors(t *testing.T) {
	down := &stubRenderer{err: notify.Errorf(notify.CodeUnavailable, "template store down")}
	ch, _ := newChannel(t, sms.Config{Renderer: down})
	_, err := ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", TemplateSlug: "custom"})
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("renderer failure: %v, want it passed on", err)
	}

	bad := &stubRenderer{err: &notify.Error{Code: notify.CodeInvalidArgument,
		Fields: []record.FieldError{{Field: "variables.NAME", Message: "is required"}}}}
	ch, _ = newChannel(t, sms.Config{Renderer: bad})
	_, err = ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "123", TemplateSlug: "custom"})
	var ne *notify.Error
	if !errors.As(err, &ne) || ne.Code != notify.CodeInvalidArgument || len(ne.Fields) != 2 {
		t.Fatalf("error = %v, want the renderer's field and the number's", err)
	}

	empty := &stubRenderer{rendered: &notify.Rendered{Slug: "mail-only"}}
	ch, _ = newChannel(t, sms.Config{Renderer: empty})
	_, err = ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", TemplateSlug: "mail-only"})
	if err == nil || !strings.Contains(err.Error(), "has no SMS text") {
		t.Fatalf("error = %v", err)
	}
}

func TestPrepareOTPTemplateVariables(t *testing.T) {
	stub := &stubRenderer{rendered: &notify.Rendered{Text: "code"}}
	ch, _ := newChannel(t, sms.Config{Renderer: stub})
	// The code may come from variables.OTP alone.
	env, err := ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Route: sms.RouteOTP,
		TemplateSlug: "otp", Variables: record.Vars{"OTP": "55667788"}})
	if err != nil || sms.MessageOf(env).OTP != "55667788" || stub.gotVars["BRAND_NAME"] != "Acme" {
		t.Fatalf("Prepare = %+v, %v; vars %v", env, err, stub.gotVars)
	}
	_, err = ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Route: sms.RouteOTP,
		Message: "1234", TemplateSlug: "otp", Variables: record.Vars{"OTP": "4321"}})
	if err == nil || !strings.Contains(err.Error(), "variables.OTP: differs") {
		t.Fatalf("error = %v", err)
	}
}

func TestCustomOTPText(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{OTPText: func(code, brand string) string { return brand + ": " + code }})
	env, err := ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Message: "1234", Route: sms.RouteOTP})
	if err != nil || sms.MessageOf(env).Text != "Acme: 1234" {
		t.Fatalf("Prepare = %+v, %v", env, err)
	}
}

func TestDeliverCallsTheProviderOnce(t *testing.T) {
	ch, p := newChannel(t, sms.Config{})
	env, err := ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ch.Deliver(t.Context(), env)
	if err != nil || res.ProviderMessageID == "" {
		t.Fatalf("Deliver = %+v, %v", res, err)
	}
	if sent := p.Sent(); len(sent) != 1 || sent[0] != env {
		t.Fatalf("provider got %d envelopes", len(sent))
	}
	p.FailNext(1, notify.CodeUnavailable)
	if _, err := ch.Deliver(t.Context(), env); notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("Deliver after FailNext = %v", err)
	}
	if p.Len() != 1 {
		t.Fatalf("the channel retried: provider has %d", p.Len())
	}
}

func TestNew(t *testing.T) {
	if _, err := sms.New(sms.Config{}); err == nil {
		t.Error("New accepted a config without a provider")
	}
	if _, err := sms.New(sms.Config{Provider: memprovider.New("m"), MaxSegments: -1}); err == nil {
		t.Error("New accepted negative MaxSegments")
	}
	ch, _ := newChannel(t, sms.Config{MaxSegments: 1})
	if ch.Kind() != sms.Kind {
		t.Error("Kind is not sms")
	}
	if _, err := ch.Prepare(t.Context(), testAccount(), &sms.Request{To: "9876543210", Message: strings.Repeat("a", 161)}); err == nil {
		t.Error("MaxSegments 1 let two segments through")
	}
	if _, err := ch.Prepare(t.Context(), testAccount(), &email.Request{To: "a@b.c"}); notify.CodeOf(err) != notify.CodeInvalidArgument {
		t.Errorf("e-mail request: %v", err)
	}
}

// TestAllowedSenderIDs: an account that declares its sender headers can
// use those (in any case) and no other, on every route that takes one.
func TestAllowedSenderIDs(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{})
	acct := testAccount()
	changeSettings(t, acct, func(s *sms.Settings) { s.SenderIDs = []string{"ACMECO", "ACMEIN"} })
	ctx := context.Background()
	for _, ok := range []*sms.Request{
		{To: "9876543210", Message: "hello"},                     // the default, the vendor ID
		{To: "9876543210", Message: "hello", SenderID: "acmein"}, // case does not matter
		{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: orderTplID, SenderID: "ACMEIN",
			Message: "Dear Asha, your order A-1 has shipped. - ACMECO"},
	} {
		if _, err := ch.Prepare(ctx, acct, ok); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	for _, bad := range []*sms.Request{
		{To: "9876543210", Message: "hello", SenderID: "HDFCBK"},
		{To: "9876543210", Route: sms.RouteDLT, DLTTemplateID: orderTplID, SenderID: "HDFCBK",
			Message: "Dear Asha, your order A-1 has shipped. - ACMECO"},
	} {
		_, err := ch.Prepare(ctx, acct, bad)
		if !hasField(err, "sender_id") || !strings.Contains(err.Error(), "not one of the account's sender IDs") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	// Without a list any valid header goes, as before.
	changeSettings(t, acct, func(s *sms.Settings) { s.SenderIDs = nil })
	if _, err := ch.Prepare(ctx, acct, &sms.Request{To: "9876543210", Message: "hello", SenderID: "HDFCBK"}); err != nil {
		t.Fatal(err)
	}
}

func hasField(err error, field string) bool {
	var e *notify.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// TestBrokenSettingsAreTheServicesFault: an account whose SMS settings do
// not decode cannot send, and the error blames the configuration
// (Internal), not the request.
func TestBrokenSettingsAreTheServicesFault(t *testing.T) {
	ch, _ := newChannel(t, sms.Config{})
	acct := testAccount()
	acct.Settings = map[notify.Kind]json.RawMessage{sms.Kind: json.RawMessage(`{"sender_ids":"ACMECO"}`)}
	_, err := ch.Prepare(context.Background(), acct, &sms.Request{To: "9876543210", Message: "hello"})
	if notify.CodeOf(err) != notify.CodeInternal {
		t.Fatalf("Prepare = %v, want Internal", err)
	}
}

// TestSettingsRoundTrip: SetSettings and SettingsOf keep every field, and
// Map makes the same settings.
func TestSettingsRoundTrip(t *testing.T) {
	want := sms.Settings{SenderID: "ACMECO", SenderIDs: []string{"ACMECO", "ACMEIN"},
		DLTTemplates: []sms.DLTTemplate{{ID: otpTplID, EntityID: entityID, Content: otpTemplate, MessageID: "161"}}}
	acct := &notify.Account{ID: "acme"}
	if err := sms.SetSettings(acct, want); err != nil {
		t.Fatal(err)
	}
	got, err := sms.SettingsOf(acct)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("SettingsOf = %+v, %v; want %+v", got, err, want)
	}
	if got, err := sms.SettingsOf(&notify.Account{Settings: want.Map()}); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("SettingsOf(Map) = %+v, %v", got, err)
	}
}
