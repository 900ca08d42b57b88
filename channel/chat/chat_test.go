package chat_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/record"
)

const otpText = "*482915* is your Acme login code. For your security, do not share this code with anyone."

// The four shapes of a chat request.
func shapeOTP() *chat.Request {
	return &chat.Request{To: "+91 98765 43210", OTP: "482915", Action: "login", Brand: "Acme"}
}

func shapeTemplate() *chat.Request {
	return &chat.Request{To: "9876543210", TemplateSlug: "order-confirmed", Variables: record.Vars{
		"NAME": "Asha", "ORDER_ID": "A-1042", "AMOUNT": "₹1,499.00", "DELIVERY_DATE": "14/03/2026",
		"LINK": "https://shop.example.com/o/A-1042"}}
}

func shapeMedia() *chat.Request {
	return &chat.Request{To: "09876543210", Message: "Your invoice INV-7",
		MediaURL: "https://cdn.example.com/inv/INV-7.pdf?sig=abc", FileName: "INV-7.pdf", Type: chat.TypeOTP}
}

func shapeCloud() *chat.Request {
	return &chat.Request{Gateway: chat.GatewayCloud, To: "9876543210", TemplateName: "order_confirmed",
		Language: "en_US", Variables: record.Vars{"1": "Asha", "2": "A-1042"}}
}

const orderText = "Hi Asha, thank you for shopping with Acme! Your order *A-1042* is confirmed."

// TestShapes sends shapes (a)-(d) through cloud, qr and auto (with either
// primary) and checks the envelope each provider received and the result.
func TestShapes(t *testing.T) {
	cloudTmpl := &chat.Template{Name: "order_confirmed", Language: "en_US",
		Params: []string{"Asha", "A-1042", "₹1,499.00", "14/03/2026", "https://shop.example.com/o/A-1042", "Acme"}}
	named := &chat.Template{Name: "order_confirmed", Language: "en_US", Params: []string{"Asha", "A-1042"}}
	authTmpl := &chat.Template{Name: "otp_code", Language: "en_US", Params: []string{"482915"},
		Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 0, Value: "482915"}}}
	media := &chat.Media{URL: "https://cdn.example.com/inv/INV-7.pdf?sig=abc", Kind: chat.MediaDocument,
		FileName: "INV-7.pdf", MIMEType: "application/pdf"}

	type want struct {
		gateway  chat.Gateway // delivered by; "" = Prepare fails
		code     notify.Code  // Prepare's error code when gateway is ""
		text     string       // prefix of the text the provider got
		otp      string
		template *chat.Template
		media    *chat.Media
		note     string
	}
	shapes := []struct {
		name string
		req  func() *chat.Request
		// by requested gateway: cloud, qr, auto with cloud primary, auto with qr primary
		cloud, qr, autoCloud, autoQR want
	}{
		{name: "a otp", req: shapeOTP,
			cloud:     want{gateway: chat.GatewayCloud, text: otpText, otp: "482915", template: authTmpl},
			qr:        want{gateway: chat.GatewayQR, text: otpText, otp: "482915"},
			autoCloud: want{gateway: chat.GatewayCloud, text: otpText, otp: "482915", template: authTmpl, note: "the account's primary"},
			autoQR:    want{gateway: chat.GatewayQR, text: otpText, otp: "482915", note: "the account's primary"},
		},
		{name: "b template", req: shapeTemplate,
			cloud:     want{gateway: chat.GatewayCloud, text: orderText, template: cloudTmpl},
			qr:        want{gateway: chat.GatewayQR, text: orderText},
			autoCloud: want{gateway: chat.GatewayCloud, text: orderText, template: cloudTmpl},
			autoQR:    want{gateway: chat.GatewayQR, text: orderText}, // the cloud form is dropped for QR
		},
		{name: "c media", req: shapeMedia,
			cloud:     want{gateway: chat.GatewayCloud, text: "Your invoice INV-7", media: media},
			qr:        want{gateway: chat.GatewayQR, text: "Your invoice INV-7", media: media},
			autoCloud: want{gateway: chat.GatewayCloud, text: "Your invoice INV-7", media: media},
			autoQR:    want{gateway: chat.GatewayQR, text: "Your invoice INV-7", media: media},
		},
		{name: "d cloud template", req: shapeCloud,
			cloud:     want{gateway: chat.GatewayCloud, template: named},
			qr:        want{code: notify.CodeInvalidArgument},
			autoCloud: want{gateway: chat.GatewayCloud, template: named},
			autoQR:    want{gateway: chat.GatewayCloud, template: named, note: "cloud templates need it"},
		},
	}
	for _, sh := range shapes {
		for _, gw := range []struct {
			name      string
			requested chat.Gateway
			primary   chat.Gateway
			want      want
		}{
			{"cloud", chat.GatewayCloud, chat.GatewayQR, sh.cloud},
			{"qr", chat.GatewayQR, chat.GatewayCloud, sh.qr},
			{"auto primary cloud", chat.GatewayAuto, chat.GatewayCloud, sh.autoCloud},
			{"auto primary qr", "", chat.GatewayQR, sh.autoQR},
		} {
			t.Run(sh.name+"/"+gw.name, func(t *testing.T) {
				r := newRig(t, nil)
				req := sh.req()
				req.Gateway = gw.requested
				env, err := r.ch.Prepare(context.Background(), account(gw.primary), req)
				w := gw.want
				if w.gateway == "" {
					if notify.CodeOf(err) != w.code {
						t.Fatalf("Prepare = %v, want code %s", err, w.code)
					}
					return
				}
				if err != nil {
					t.Fatalf("Prepare: %v", err)
				}
				if env.Kind != chat.Kind || env.To != "+919876543210" || env.Country != "IN" || env.Units != 1 || env.Class != record.Transactional {
					t.Errorf("envelope %+v", env)
				}
				if chat.MessageOf(env).Auto != (gw.requested != chat.GatewayCloud && gw.requested != chat.GatewayQR) {
					t.Errorf("Auto = %v", chat.MessageOf(env).Auto)
				}
				env.Account = account(gw.primary) // as the Notifier does
				res, err := r.ch.Deliver(context.Background(), env)
				if err != nil {
					t.Fatalf("Deliver: %v", err)
				}
				prov, idle := r.cloud, r.qr
				if w.gateway == chat.GatewayQR {
					prov, idle = r.qr, r.cloud
				}
				if res.Route != string(w.gateway) || res.Provider != prov.Name() || res.ProviderMessageID == "" {
					t.Fatalf("result %+v, want gateway %s by %s", res, w.gateway, prov.Name())
				}
				if !strings.Contains(res.Note, w.note) {
					t.Errorf("note %q, want it to contain %q", res.Note, w.note)
				}
				if idle.Len() != 0 || prov.Len() != 1 {
					t.Fatalf("sent: %s %d, %s %d", prov.Name(), prov.Len(), idle.Name(), idle.Len())
				}
				got := chat.MessageOf(prov.Sent()[0])
				if got.Gateway != w.gateway || got.Type != chat.TypeOTP {
					t.Errorf("chat gateway %s type %s", got.Gateway, got.Type)
				}
				if !strings.HasPrefix(got.Text, w.text) || (w.text == "" && got.Text != "") {
					t.Errorf("text %q, want prefix %q", got.Text, w.text)
				}
				if got.OTP != w.otp {
					t.Errorf("otp %q, want %q", got.OTP, w.otp)
				}
				if !reflect.DeepEqual(got.Template, w.template) {
					t.Errorf("template %+v, want %+v", got.Template, w.template)
				}
				if !reflect.DeepEqual(got.Media, w.media) {
					t.Errorf("media %+v, want %+v", got.Media, w.media)
				}
			})
		}
	}
}

// TestPrecedence: media_url > template > otp > message.
func TestPrecedence(t *testing.T) {
	r := newRig(t, nil)
	acct := account(chat.GatewayQR)
	all := func() *chat.Request {
		return &chat.Request{To: "9876543210", OTP: "482915", Action: "login", Message: "hello",
			TemplateSlug: "standard-otp", MediaURL: "https://cdn.example.com/a.png"}
	}
	env, err := r.ch.Prepare(context.Background(), acct, all())
	if err != nil {
		t.Fatal(err)
	}
	if chat.MessageOf(env).Media == nil || chat.MessageOf(env).Media.Kind != chat.MediaImage || chat.MessageOf(env).Text != "hello" {
		t.Fatalf("media did not win: %+v", chat.MessageOf(env))
	}
	req := all()
	req.MediaURL = ""
	env, err = r.ch.Prepare(context.Background(), acct, req)
	if err != nil {
		t.Fatal(err)
	}
	// The template won, and otp, action and the account's name filled it.
	if chat.MessageOf(env).Media != nil || !strings.HasPrefix(chat.MessageOf(env).Text, "*482915* is your Acme login code.") || chat.MessageOf(env).OTP != "482915" {
		t.Fatalf("template did not win: %+v", chat.MessageOf(env))
	}
	req.TemplateSlug = ""
	env, err = r.ch.Prepare(context.Background(), acct, req)
	if err != nil {
		t.Fatal(err)
	}
	if chat.MessageOf(env).Text != otpText {
		t.Fatalf("otp did not win: %q", chat.MessageOf(env).Text)
	}
	req.OTP = ""
	env, err = r.ch.Prepare(context.Background(), acct, req)
	if err != nil || chat.MessageOf(env).Text != "hello" {
		t.Fatalf("message: %v %+v", err, env)
	}
}

func TestOTPText(t *testing.T) {
	r := newRig(t, nil)
	for action, want := range map[string]string{
		"":                      "*1234* is your Acme verification code.",
		"verification":          "*1234* is your Acme verification code.",
		"login":                 "*1234* is your Acme login code.",
		"Two-Step Verification": "*1234* is your Acme two-step verification code.",
		"two_step_verification": "*1234* is your Acme two-step verification code.",
		"registration":          "*1234* is your Acme registration code.",
		"password reset":        "*1234* is your Acme password reset code.",
		"transaction":           "*1234* is your Acme transaction code.",
	} {
		env, err := r.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", OTP: "1234", Action: action})
		if err != nil {
			t.Fatalf("%q: %v", action, err)
		}
		if !strings.HasPrefix(chat.MessageOf(env).Text, want) {
			t.Errorf("%q: %q, want prefix %q", action, chat.MessageOf(env).Text, want)
		}
	}
	// The request's brand wins over the account's name; no brand at all.
	env, _ := r.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", OTP: "1234", Brand: "ShopX"})
	if !strings.HasPrefix(chat.MessageOf(env).Text, "*1234* is your ShopX verification code.") {
		t.Errorf("brand: %q", chat.MessageOf(env).Text)
	}
	nameless := &notify.Account{ID: "x", Currency: record.INR()}
	env, _ = r.ch.Prepare(context.Background(), nameless, &chat.Request{To: "9876543210", OTP: "1234"})
	if !strings.HasPrefix(chat.MessageOf(env).Text, "*1234* is your verification code.") {
		t.Errorf("no brand: %q", chat.MessageOf(env).Text)
	}
	custom := newRig(t, func(c *chat.Config) {
		c.OTPText = func(code, action, brand string) string { return brand + "|" + action + "|" + code }
	})
	env, _ = custom.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", OTP: "1234", Action: "2fa"})
	if chat.MessageOf(env).Text != "Acme|two-step verification|1234" {
		t.Errorf("OTPText: %q", chat.MessageOf(env).Text)
	}
}

func TestMediaKinds(t *testing.T) {
	r := newRig(t, nil)
	tests := []struct {
		url, name string
		kind      chat.MediaKind
		file      string
		mime      string
	}{
		{"https://cdn.example.com/inv.pdf", "", chat.MediaDocument, "Document.pdf", "application/pdf"},
		{"https://cdn.example.com/download?id=7", "", chat.MediaDocument, "Document.pdf", "application/pdf"},
		{"https://cdn.example.com/p/photo.JPG", "", chat.MediaImage, "Image.jpg", "image/jpeg"},
		{"https://cdn.example.com/p/photo.webp", "", chat.MediaImage, "Image.webp", "image/webp"},
		{"https://cdn.example.com/p/photo", "Receipt.png", chat.MediaImage, "Receipt.png", "image/png"},
		{"https://cdn.example.com/p/photo.png", "scan.pdf", chat.MediaDocument, "scan.pdf", "application/pdf"},
		{"https://cdn.example.com/r/report.xlsx", "", chat.MediaDocument, "Document.xlsx",
			"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{"https://cdn.example.com/r/report", "notes.txt", chat.MediaDocument, "notes.txt", "text/plain"},
		{"https://cdn.example.com/r/blob.bin", "blob.bin", chat.MediaDocument, "blob.bin", "application/octet-stream"},
		{"https://cdn.example.com/r/a.jpeg", "invoice", chat.MediaImage, "invoice", "image/jpeg"},
	}
	for _, tt := range tests {
		env, err := r.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", MediaURL: tt.url, FileName: tt.name})
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		m := chat.MessageOf(env).Media
		if m.Kind != tt.kind || m.FileName != tt.file || m.MIMEType != tt.mime || m.URL != tt.url {
			t.Errorf("%s %q: got %+v, want %s %s %s", tt.url, tt.name, m, tt.kind, tt.file, tt.mime)
		}
	}
}

func TestCloudTemplateDetails(t *testing.T) {
	r := newRig(t, nil)
	acct := account(chat.GatewayCloud)
	// An array of variables, a language alias, a document header and an
	// OTP-only authentication template.
	env, err := r.ch.Prepare(context.Background(), acct, &chat.Request{To: "9876543210", TemplateName: "invoice_ready",
		Language: "en-gb", HeaderURL: "https://cdn.example.com/INV-7.pdf", Variables: record.Vars{"1": "INV-7"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &chat.Template{Name: "invoice_ready", Language: "en_GB", Params: []string{"INV-7"},
		HeaderURL: "https://cdn.example.com/INV-7.pdf", HeaderKind: chat.MediaDocument}
	if !reflect.DeepEqual(chat.MessageOf(env).Template, want) {
		t.Fatalf("got %+v", chat.MessageOf(env).Template)
	}
	env, err = r.ch.Prepare(context.Background(), acct, &chat.Request{To: "9876543210", TemplateName: "auth_code", OTP: "482915",
		HeaderURL: "https://cdn.example.com/logo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := chat.MessageOf(env).Template; !reflect.DeepEqual(got.Params, []string{"482915"}) || got.HeaderKind != chat.MediaImage || chat.MessageOf(env).OTP != "482915" {
		t.Fatalf("otp template: %+v", got)
	}
	// template_slug with a code and a language: the authentication
	// template in that language, not the slug's own cloud form.
	env, err = r.ch.Prepare(context.Background(), acct, &chat.Request{To: "9876543210", Gateway: chat.GatewayCloud,
		TemplateSlug: "standard-otp", OTP: "482915", Language: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := chat.MessageOf(env).Template; got == nil || got.Name != "otp_code" || got.Language != "hi" || got.Params[0] != "482915" || len(got.Buttons) != 1 {
		t.Fatalf("slug on cloud: %+v", got)
	}
	// template_slug without a code and a language: the slug's cloud
	// mapping in that language.
	env, err = r.ch.Prepare(context.Background(), acct, &chat.Request{To: "9876543210", Gateway: chat.GatewayCloud,
		TemplateSlug: "order-confirmed", Language: "hi", Variables: shapeTemplate().Variables})
	if err != nil {
		t.Fatal(err)
	}
	if got := chat.MessageOf(env).Template; got == nil || got.Name != "order_confirmed" || got.Language != "hi" || got.Params[0] != "Asha" {
		t.Fatalf("slug on cloud: %+v", got)
	}
	// template_name and template_slug on qr: the slug is used.
	env, err = r.ch.Prepare(context.Background(), acct, &chat.Request{To: "9876543210", Gateway: chat.GatewayQR,
		TemplateName: "standard_otp", TemplateSlug: "standard-otp", OTP: "482915"})
	if err != nil {
		t.Fatal(err)
	}
	if chat.MessageOf(env).Template != nil || !strings.HasPrefix(chat.MessageOf(env).Text, "*482915*") {
		t.Fatalf("qr with both: %+v", chat.MessageOf(env))
	}
}

// TestPromotional: type promotional, and a promotional template forcing
// the promotional class.
func TestPromotional(t *testing.T) {
	r := newRig(t, nil)
	env, err := r.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", Message: "Sale!", Type: chat.TypePromotional})
	if err != nil || env.Class != record.Promotional || chat.MessageOf(env).Type != chat.TypePromotional {
		t.Fatalf("type promotional: %v %+v", err, env)
	}
	env, err = r.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", TemplateSlug: "promo-discount",
		Variables: record.Vars{"NAME": "Asha", "DISCOUNT": "20%", "CODE": "SAVE20", "EXPIRY_DATE": "31/03/2026", "LINK": "https://shop.example.com/sale"}})
	if err != nil {
		t.Fatal(err)
	}
	if env.Class != record.Promotional || chat.MessageOf(env).Type != chat.TypePromotional {
		t.Fatalf("promotional template sent as %s/%s", env.Class, chat.MessageOf(env).Type)
	}
}

// TestGatewayAvailability: a missing provider.
func TestGatewayAvailability(t *testing.T) {
	noQR := newRig(t, func(c *chat.Config) { c.QR = nil })
	_, err := noQR.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", Message: "hi", Gateway: chat.GatewayQR})
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("explicit qr without a provider: %v", err)
	}
	env, err := noQR.ch.Prepare(context.Background(), account(chat.GatewayQR), &chat.Request{To: "9876543210", Message: "hi"})
	if err != nil || chat.MessageOf(env).Gateway != chat.GatewayCloud || env.Provider != "cloud-mem" {
		t.Fatalf("auto with the primary missing: %v %+v", err, env)
	}
	env.Account = account(chat.GatewayQR)
	res, err := noQR.ch.Deliver(context.Background(), env)
	if err != nil || !strings.Contains(res.Note, "is not configured") {
		t.Fatalf("note: %v %+v", err, res)
	}
	noCloud := newRig(t, func(c *chat.Config) { c.Cloud = nil })
	_, err = noCloud.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", TemplateName: "order_confirmed"})
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("template_name without a cloud provider: %v", err)
	}
	if _, err := chat.New(chat.Config{}); err == nil {
		t.Fatal("New without providers succeeded")
	}
}

// TestSlugWithoutCloudTemplater: without a cloud mapping the slug's text
// goes to the cloud gateway.
func TestSlugWithoutCloudTemplater(t *testing.T) {
	r := newRig(t, func(c *chat.Config) { c.Renderer = textOnly{c.Renderer} })
	env, err := r.ch.Prepare(context.Background(), account(chat.GatewayCloud), shapeTemplate())
	if err != nil {
		t.Fatal(err)
	}
	if chat.MessageOf(env).Template != nil || !strings.HasPrefix(chat.MessageOf(env).Text, orderText) {
		t.Fatalf("got %+v", chat.MessageOf(env))
	}
	noRenderer := newRig(t, func(c *chat.Config) { c.Renderer = nil })
	_, err = noRenderer.ch.Prepare(context.Background(), account(""), shapeTemplate())
	if !hasField(err, "template_slug") {
		t.Fatalf("no renderer: %v", err)
	}
}

// textOnly hides the CloudTemplate method of a renderer.
type textOnly struct{ notify.TemplateRenderer }

func hasField(err error, field string) bool {
	e, ok := err.(*notify.Error)
	if !ok || e.Code != notify.CodeInvalidArgument {
		return false
	}
	for _, f := range e.Fields {
		if f.Field == field {
			return true
		}
	}
	return false
}

// TestCloudOTPTemplate: one-time codes go to the cloud gateway only as
// the configured authentication template, with the code in its body and
// its OTP button; the QR gateway gets the text.
func TestCloudOTPTemplate(t *testing.T) {
	r := newRig(t, func(c *chat.Config) { c.CloudOTPTemplate = "otp_code" })
	auth := func(lang string) *chat.Template {
		return &chat.Template{Name: "otp_code", Language: lang, Params: []string{"482915"},
			Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 0, Value: "482915"}}}
	}
	env := prepare(t, r, account(chat.GatewayCloud), shapeOTP())
	if !reflect.DeepEqual(chat.MessageOf(env).Template, auth("en_US")) || chat.MessageOf(env).Text != otpText || chat.MessageOf(env).OTP != "482915" ||
		chat.MessageOf(env).Gateway != chat.GatewayCloud || !env.CarriesOTP {
		t.Fatalf("chat %+v, template %+v", chat.MessageOf(env), chat.MessageOf(env).Template)
	}
	r.cloud.FailNext(1, notify.CodeUnavailable)
	res, err := r.ch.Deliver(context.Background(), env)
	if err != nil || res.Route != string(chat.GatewayQR) {
		t.Fatalf("failover: %v %+v", err, res)
	}
	if got := chat.MessageOf(r.qr.Sent()[0]); got.Template != nil || got.Text != otpText {
		t.Fatalf("QR got %+v", got)
	}

	// The request's language wins over the configured one.
	req := shapeOTP()
	req.Language = "hi"
	if env := prepare(t, r, account(chat.GatewayCloud), req); !reflect.DeepEqual(chat.MessageOf(env).Template, auth("hi")) {
		t.Fatalf("language: %+v", chat.MessageOf(env).Template)
	}
	// A template_slug whose variables carry a code: the authentication
	// template for the cloud gateway, the rendered text for QR.
	env = prepare(t, r, account(chat.GatewayCloud), &chat.Request{To: "9876543210", TemplateSlug: "standard-otp",
		Variables: record.Vars{"OTP": "482915"}})
	if !reflect.DeepEqual(chat.MessageOf(env).Template, auth("en_US")) || !strings.Contains(chat.MessageOf(env).Text, "482915") {
		t.Fatalf("slug with a code: %+v %q", chat.MessageOf(env).Template, chat.MessageOf(env).Text)
	}
	// template_name naming the authentication template takes otp.
	env = prepare(t, r, account(""), &chat.Request{To: "9876543210", TemplateName: "otp_code", OTP: "482915"})
	if !reflect.DeepEqual(chat.MessageOf(env).Template, auth("en_US")) {
		t.Fatalf("template_name otp_code: %+v", chat.MessageOf(env).Template)
	}
	if _, err := r.ch.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", TemplateName: "otp_code"}); !hasField(err, "otp") {
		t.Fatalf("template_name otp_code without otp: %v", err)
	}
	req = shapeOTP()
	req.Gateway = chat.GatewayQR
	if env := prepare(t, r, account(""), req); chat.MessageOf(env).Template != nil {
		t.Fatal("explicit qr got a template")
	}

	for _, bad := range []chat.Config{
		{QR: r.qr, CloudOTPTemplate: "OTP Code"},
		{QR: r.qr, CloudOTPTemplate: "otp_code", CloudOTPLanguage: "english"},
	} {
		if _, err := chat.New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

// TestCloudNeverCarriesFreeTextCodes: without an authentication template
// the cloud gateway carries no code: auto sends it by QR (also when the
// account's primary is cloud), an explicit cloud is InvalidArgument, and a
// cloud-only channel refuses every message with a code, naming the
// setting, and sends the rest.
func TestCloudNeverCarriesFreeTextCodes(t *testing.T) {
	r := newRig(t, func(c *chat.Config) { c.CloudOTPTemplate = "" })
	for _, req := range []*chat.Request{shapeOTP(),
		{To: "9876543210", TemplateSlug: "standard-otp", Variables: record.Vars{"OTP": "482915"}}} {
		env := prepare(t, r, account(chat.GatewayCloud), req)
		if chat.MessageOf(env).Gateway != chat.GatewayQR || chat.MessageOf(env).Template != nil || chat.MessageOf(env).Fallback {
			t.Fatalf("auto with cloud primary: gateway %s, template %+v, fallback %v", chat.MessageOf(env).Gateway, chat.MessageOf(env).Template, chat.MessageOf(env).Fallback)
		}
		// The QR gateway failing for now does not fall over to cloud.
		r.qr.FailNext(1, notify.CodeUnavailable)
		if _, err := r.ch.Deliver(context.Background(), env); notify.CodeOf(err) != notify.CodeUnavailable {
			t.Fatalf("deliver: %v", err)
		}
		if n := len(r.cloud.Sent()); n != 0 {
			t.Fatalf("the cloud gateway got %d messages", n)
		}
	}
	req := shapeOTP()
	req.Gateway = chat.GatewayCloud
	_, err := r.ch.Prepare(context.Background(), account(""), req)
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "otp: ") || !strings.Contains(err.Error(), "CloudOTPTemplate") {
		t.Fatalf("explicit cloud: %v", err)
	}
	cloudOnly := newRig(t, func(c *chat.Config) { c.QR, c.CloudOTPTemplate = nil, "" }).ch
	for _, gw := range []chat.Gateway{chat.GatewayAuto, chat.GatewayCloud} {
		for _, req := range []*chat.Request{shapeOTP(),
			{To: "9876543210", TemplateSlug: "standard-otp", Variables: record.Vars{"OTP": "482915"}}} {
			req.Gateway = gw
			_, err := cloudOnly.Prepare(context.Background(), account(""), req)
			if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "CloudOTPTemplate") ||
				!strings.Contains(err.Error(), "NOTIFY_CLOUD_OTP_TEMPLATE") {
				t.Fatalf("cloud-only, gateway %q, a code: %v", gw, err)
			}
		}
	}
	if env, err := cloudOnly.Prepare(context.Background(), account(""), &chat.Request{To: "9876543210", Message: "hi"}); err != nil || chat.MessageOf(env).Gateway != chat.GatewayCloud {
		t.Fatalf("cloud-only, free text: %v", err)
	}
	if _, err := chat.New(chat.Config{Cloud: r.cloud, CloudOTPTemplate: "otp_code"}); err != nil {
		t.Fatal(err)
	}
	// Free text without a code still goes to cloud.
	if env := prepare(t, r, account(chat.GatewayCloud), &chat.Request{To: "9876543210", Message: "hi"}); chat.MessageOf(env).Gateway != chat.GatewayCloud {
		t.Fatalf("free text: %s", chat.MessageOf(env).Gateway)
	}
}
