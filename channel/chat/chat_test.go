package chat_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
)

const otpText = "*482915* is your Acme login code. For your security, do not share this code with anyone."

// The four shapes of a chat request.
func shapeOTP() *notify.ChatRequest {
	return &notify.ChatRequest{To: "+91 98765 43210", OTP: "482915", Action: "login", Brand: "Acme"}
}

func shapeTemplate() *notify.ChatRequest {
	return &notify.ChatRequest{To: "9876543210", TemplateSlug: "order-confirmed", Variables: notify.Vars{
		"NAME": "Asha", "ORDER_ID": "A-1042", "AMOUNT": "₹1,499.00", "DELIVERY_DATE": "14/03/2026",
		"LINK": "https://shop.example.com/o/A-1042"}}
}

func shapeMedia() *notify.ChatRequest {
	return &notify.ChatRequest{To: "09876543210", Message: "Your invoice INV-7",
		MediaURL: "https://cdn.example.com/inv/INV-7.pdf?sig=abc", FileName: "INV-7.pdf", Type: notify.ChatOTP}
}

func shapeCloud() *notify.ChatRequest {
	return &notify.ChatRequest{Gateway: notify.GatewayCloud, To: "9876543210", TemplateName: "order_confirmed",
		Language: "en_US", Variables: notify.Vars{"1": "Asha", "2": "A-1042"}}
}

const orderText = "Hi Asha, thank you for shopping with Acme! Your order *A-1042* is confirmed."

// TestShapes sends shapes (a)-(d) through cloud, qr and auto (with either
// primary) and checks the envelope each provider received and the result.
func TestShapes(t *testing.T) {
	cloudTmpl := &notify.ChatTemplate{Name: "order_confirmed", Language: "en_US",
		Params: []string{"Asha", "A-1042", "₹1,499.00", "14/03/2026", "https://shop.example.com/o/A-1042", "Acme"}}
	named := &notify.ChatTemplate{Name: "order_confirmed", Language: "en_US", Params: []string{"Asha", "A-1042"}}
	authTmpl := &notify.ChatTemplate{Name: "otp_code", Language: "en_US", Params: []string{"482915"},
		Buttons: []notify.TemplateButton{{Kind: notify.ButtonURL, Index: 0, Value: "482915"}}}
	media := &notify.ChatMedia{URL: "https://cdn.example.com/inv/INV-7.pdf?sig=abc", Kind: notify.MediaDocument,
		FileName: "INV-7.pdf", MIMEType: "application/pdf"}

	type want struct {
		gateway  notify.ChatGateway // delivered by; "" = Prepare fails
		code     notify.Code        // Prepare's error code when gateway is ""
		text     string             // prefix of the text the provider got
		otp      string
		template *notify.ChatTemplate
		media    *notify.ChatMedia
		note     string
	}
	shapes := []struct {
		name string
		req  func() *notify.ChatRequest
		// by requested gateway: cloud, qr, auto with cloud primary, auto with qr primary
		cloud, qr, autoCloud, autoQR want
	}{
		{name: "a otp", req: shapeOTP,
			cloud:     want{gateway: notify.GatewayCloud, text: otpText, otp: "482915", template: authTmpl},
			qr:        want{gateway: notify.GatewayQR, text: otpText, otp: "482915"},
			autoCloud: want{gateway: notify.GatewayCloud, text: otpText, otp: "482915", template: authTmpl, note: "the account's primary"},
			autoQR:    want{gateway: notify.GatewayQR, text: otpText, otp: "482915", note: "the account's primary"},
		},
		{name: "b template", req: shapeTemplate,
			cloud:     want{gateway: notify.GatewayCloud, text: orderText, template: cloudTmpl},
			qr:        want{gateway: notify.GatewayQR, text: orderText},
			autoCloud: want{gateway: notify.GatewayCloud, text: orderText, template: cloudTmpl},
			autoQR:    want{gateway: notify.GatewayQR, text: orderText}, // the cloud form is dropped for QR
		},
		{name: "c media", req: shapeMedia,
			cloud:     want{gateway: notify.GatewayCloud, text: "Your invoice INV-7", media: media},
			qr:        want{gateway: notify.GatewayQR, text: "Your invoice INV-7", media: media},
			autoCloud: want{gateway: notify.GatewayCloud, text: "Your invoice INV-7", media: media},
			autoQR:    want{gateway: notify.GatewayQR, text: "Your invoice INV-7", media: media},
		},
		{name: "d cloud template", req: shapeCloud,
			cloud:     want{gateway: notify.GatewayCloud, template: named},
			qr:        want{code: notify.CodeInvalidArgument},
			autoCloud: want{gateway: notify.GatewayCloud, template: named},
			autoQR:    want{gateway: notify.GatewayCloud, template: named, note: "cloud templates need it"},
		},
	}
	for _, sh := range shapes {
		for _, gw := range []struct {
			name      string
			requested notify.ChatGateway
			primary   notify.ChatGateway
			want      want
		}{
			{"cloud", notify.GatewayCloud, notify.GatewayQR, sh.cloud},
			{"qr", notify.GatewayQR, notify.GatewayCloud, sh.qr},
			{"auto primary cloud", notify.GatewayAuto, notify.GatewayCloud, sh.autoCloud},
			{"auto primary qr", "", notify.GatewayQR, sh.autoQR},
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
				if env.Kind != notify.KindChat || env.To != "9876543210" || env.Units != 1 || env.Class != notify.Transactional {
					t.Errorf("envelope %+v", env)
				}
				if env.Chat.Auto != (gw.requested != notify.GatewayCloud && gw.requested != notify.GatewayQR) {
					t.Errorf("Auto = %v", env.Chat.Auto)
				}
				env.Account = account(gw.primary) // as the Notifier does
				res, err := r.ch.Deliver(context.Background(), env)
				if err != nil {
					t.Fatalf("Deliver: %v", err)
				}
				prov, idle := r.cloud, r.qr
				if w.gateway == notify.GatewayQR {
					prov, idle = r.qr, r.cloud
				}
				if res.Gateway != w.gateway || res.Provider != prov.Name() || res.ProviderMessageID == "" {
					t.Fatalf("result %+v, want gateway %s by %s", res, w.gateway, prov.Name())
				}
				if !strings.Contains(res.Note, w.note) {
					t.Errorf("note %q, want it to contain %q", res.Note, w.note)
				}
				if idle.Len() != 0 || prov.Len() != 1 {
					t.Fatalf("sent: %s %d, %s %d", prov.Name(), prov.Len(), idle.Name(), idle.Len())
				}
				got := prov.Sent()[0].Chat
				if got.Gateway != w.gateway || got.Type != notify.ChatOTP {
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
	acct := account(notify.GatewayQR)
	all := func() *notify.ChatRequest {
		return &notify.ChatRequest{To: "9876543210", OTP: "482915", Action: "login", Message: "hello",
			TemplateSlug: "standard-otp", MediaURL: "https://cdn.example.com/a.png"}
	}
	env, err := r.ch.Prepare(context.Background(), acct, all())
	if err != nil {
		t.Fatal(err)
	}
	if env.Chat.Media == nil || env.Chat.Media.Kind != notify.MediaImage || env.Chat.Text != "hello" {
		t.Fatalf("media did not win: %+v", env.Chat)
	}
	req := all()
	req.MediaURL = ""
	env, err = r.ch.Prepare(context.Background(), acct, req)
	if err != nil {
		t.Fatal(err)
	}
	// The template won, and otp, action and the account's name filled it.
	if env.Chat.Media != nil || !strings.HasPrefix(env.Chat.Text, "*482915* is your Acme login code.") || env.Chat.OTP != "482915" {
		t.Fatalf("template did not win: %+v", env.Chat)
	}
	req.TemplateSlug = ""
	env, err = r.ch.Prepare(context.Background(), acct, req)
	if err != nil {
		t.Fatal(err)
	}
	if env.Chat.Text != otpText {
		t.Fatalf("otp did not win: %q", env.Chat.Text)
	}
	req.OTP = ""
	env, err = r.ch.Prepare(context.Background(), acct, req)
	if err != nil || env.Chat.Text != "hello" {
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
		env, err := r.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", OTP: "1234", Action: action})
		if err != nil {
			t.Fatalf("%q: %v", action, err)
		}
		if !strings.HasPrefix(env.Chat.Text, want) {
			t.Errorf("%q: %q, want prefix %q", action, env.Chat.Text, want)
		}
	}
	// The request's brand wins over the account's name; no brand at all.
	env, _ := r.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", OTP: "1234", Brand: "ShopX"})
	if !strings.HasPrefix(env.Chat.Text, "*1234* is your ShopX verification code.") {
		t.Errorf("brand: %q", env.Chat.Text)
	}
	nameless := &notify.Account{ID: "x", Currency: notify.INR()}
	env, _ = r.ch.Prepare(context.Background(), nameless, &notify.ChatRequest{To: "9876543210", OTP: "1234"})
	if !strings.HasPrefix(env.Chat.Text, "*1234* is your verification code.") {
		t.Errorf("no brand: %q", env.Chat.Text)
	}
	custom := newRig(t, func(c *chat.Config) {
		c.OTPText = func(code, action, brand string) string { return brand + "|" + action + "|" + code }
	})
	env, _ = custom.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", OTP: "1234", Action: "2fa"})
	if env.Chat.Text != "Acme|two-step verification|1234" {
		t.Errorf("OTPText: %q", env.Chat.Text)
	}
}

func TestMediaKinds(t *testing.T) {
	r := newRig(t, nil)
	tests := []struct {
		url, name string
		kind      notify.MediaKind
		file      string
		mime      string
	}{
		{"https://cdn.example.com/inv.pdf", "", notify.MediaDocument, "Document.pdf", "application/pdf"},
		{"https://cdn.example.com/download?id=7", "", notify.MediaDocument, "Document.pdf", "application/pdf"},
		{"https://cdn.example.com/p/photo.JPG", "", notify.MediaImage, "Image.jpg", "image/jpeg"},
		{"https://cdn.example.com/p/photo.webp", "", notify.MediaImage, "Image.webp", "image/webp"},
		{"https://cdn.example.com/p/photo", "Receipt.png", notify.MediaImage, "Receipt.png", "image/png"},
		{"https://cdn.example.com/p/photo.png", "scan.pdf", notify.MediaDocument, "scan.pdf", "application/pdf"},
		{"https://cdn.example.com/r/report.xlsx", "", notify.MediaDocument, "Document.xlsx",
			"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{"https://cdn.example.com/r/report", "notes.txt", notify.MediaDocument, "notes.txt", "text/plain"},
		{"https://cdn.example.com/r/blob.bin", "blob.bin", notify.MediaDocument, "blob.bin", "application/octet-stream"},
		{"https://cdn.example.com/r/a.jpeg", "invoice", notify.MediaImage, "invoice", "image/jpeg"},
	}
	for _, tt := range tests {
		env, err := r.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", MediaURL: tt.url, FileName: tt.name})
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		m := env.Chat.Media
		if m.Kind != tt.kind || m.FileName != tt.file || m.MIMEType != tt.mime || m.URL != tt.url {
			t.Errorf("%s %q: got %+v, want %s %s %s", tt.url, tt.name, m, tt.kind, tt.file, tt.mime)
		}
	}
}

func TestCloudTemplateDetails(t *testing.T) {
	r := newRig(t, nil)
	acct := account(notify.GatewayCloud)
	// An array of variables, a language alias, a document header and an
	// OTP-only authentication template.
	env, err := r.ch.Prepare(context.Background(), acct, &notify.ChatRequest{To: "9876543210", TemplateName: "invoice_ready",
		Language: "en-gb", HeaderURL: "https://cdn.example.com/INV-7.pdf", Variables: notify.Vars{"1": "INV-7"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &notify.ChatTemplate{Name: "invoice_ready", Language: "en_GB", Params: []string{"INV-7"},
		HeaderURL: "https://cdn.example.com/INV-7.pdf", HeaderKind: notify.MediaDocument}
	if !reflect.DeepEqual(env.Chat.Template, want) {
		t.Fatalf("got %+v", env.Chat.Template)
	}
	env, err = r.ch.Prepare(context.Background(), acct, &notify.ChatRequest{To: "9876543210", TemplateName: "auth_code", OTP: "482915",
		HeaderURL: "https://cdn.example.com/logo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.Chat.Template; !reflect.DeepEqual(got.Params, []string{"482915"}) || got.HeaderKind != notify.MediaImage || env.Chat.OTP != "482915" {
		t.Fatalf("otp template: %+v", got)
	}
	// template_slug with a code and a language: the authentication
	// template in that language, not the slug's own cloud form.
	env, err = r.ch.Prepare(context.Background(), acct, &notify.ChatRequest{To: "9876543210", Gateway: notify.GatewayCloud,
		TemplateSlug: "standard-otp", OTP: "482915", Language: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.Chat.Template; got == nil || got.Name != "otp_code" || got.Language != "hi" || got.Params[0] != "482915" || len(got.Buttons) != 1 {
		t.Fatalf("slug on cloud: %+v", got)
	}
	// template_slug without a code and a language: the slug's cloud
	// mapping in that language.
	env, err = r.ch.Prepare(context.Background(), acct, &notify.ChatRequest{To: "9876543210", Gateway: notify.GatewayCloud,
		TemplateSlug: "order-confirmed", Language: "hi", Variables: shapeTemplate().Variables})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.Chat.Template; got == nil || got.Name != "order_confirmed" || got.Language != "hi" || got.Params[0] != "Asha" {
		t.Fatalf("slug on cloud: %+v", got)
	}
	// template_name and template_slug on qr: the slug is used.
	env, err = r.ch.Prepare(context.Background(), acct, &notify.ChatRequest{To: "9876543210", Gateway: notify.GatewayQR,
		TemplateName: "standard_otp", TemplateSlug: "standard-otp", OTP: "482915"})
	if err != nil {
		t.Fatal(err)
	}
	if env.Chat.Template != nil || !strings.HasPrefix(env.Chat.Text, "*482915*") {
		t.Fatalf("qr with both: %+v", env.Chat)
	}
}

// TestPromotional: type promotional, and a promotional template forcing
// the promotional class.
func TestPromotional(t *testing.T) {
	r := newRig(t, nil)
	env, err := r.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", Message: "Sale!", Type: notify.ChatPromotional})
	if err != nil || env.Class != notify.Promotional || env.Chat.Type != notify.ChatPromotional {
		t.Fatalf("type promotional: %v %+v", err, env)
	}
	env, err = r.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", TemplateSlug: "promo-discount",
		Variables: notify.Vars{"NAME": "Asha", "DISCOUNT": "20%", "CODE": "SAVE20", "EXPIRY_DATE": "31/03/2026", "LINK": "https://shop.example.com/sale"}})
	if err != nil {
		t.Fatal(err)
	}
	if env.Class != notify.Promotional || env.Chat.Type != notify.ChatPromotional {
		t.Fatalf("promotional template sent as %s/%s", env.Class, env.Chat.Type)
	}
}

// TestGatewayAvailability: a missing provider.
func TestGatewayAvailability(t *testing.T) {
	noQR := newRig(t, func(c *chat.Config) { c.QR = nil })
	_, err := noQR.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", Message: "hi", Gateway: notify.GatewayQR})
	if notify.CodeOf(err) != notify.CodeUnavailable {
		t.Fatalf("explicit qr without a provider: %v", err)
	}
	env, err := noQR.ch.Prepare(context.Background(), account(notify.GatewayQR), &notify.ChatRequest{To: "9876543210", Message: "hi"})
	if err != nil || env.Chat.Gateway != notify.GatewayCloud || env.Provider != "cloud-mem" {
		t.Fatalf("auto with the primary missing: %v %+v", err, env)
	}
	env.Account = account(notify.GatewayQR)
	res, err := noQR.ch.Deliver(context.Background(), env)
	if err != nil || !strings.Contains(res.Note, "is not configured") {
		t.Fatalf("note: %v %+v", err, res)
	}
	noCloud := newRig(t, func(c *chat.Config) { c.Cloud = nil })
	_, err = noCloud.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", TemplateName: "order_confirmed"})
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
	env, err := r.ch.Prepare(context.Background(), account(notify.GatewayCloud), shapeTemplate())
	if err != nil {
		t.Fatal(err)
	}
	if env.Chat.Template != nil || !strings.HasPrefix(env.Chat.Text, orderText) {
		t.Fatalf("got %+v", env.Chat)
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
	auth := func(lang string) *notify.ChatTemplate {
		return &notify.ChatTemplate{Name: "otp_code", Language: lang, Params: []string{"482915"},
			Buttons: []notify.TemplateButton{{Kind: notify.ButtonURL, Index: 0, Value: "482915"}}}
	}
	env := prepare(t, r, account(notify.GatewayCloud), shapeOTP())
	if !reflect.DeepEqual(env.Chat.Template, auth("en_US")) || env.Chat.Text != otpText || env.Chat.OTP != "482915" ||
		env.Chat.Gateway != notify.GatewayCloud || !env.CarriesOTP {
		t.Fatalf("chat %+v, template %+v", env.Chat, env.Chat.Template)
	}
	r.cloud.FailNext(1, notify.CodeUnavailable)
	res, err := r.ch.Deliver(context.Background(), env)
	if err != nil || res.Gateway != notify.GatewayQR {
		t.Fatalf("failover: %v %+v", err, res)
	}
	if got := r.qr.Sent()[0].Chat; got.Template != nil || got.Text != otpText {
		t.Fatalf("QR got %+v", got)
	}

	// The request's language wins over the configured one.
	req := shapeOTP()
	req.Language = "hi"
	if env := prepare(t, r, account(notify.GatewayCloud), req); !reflect.DeepEqual(env.Chat.Template, auth("hi")) {
		t.Fatalf("language: %+v", env.Chat.Template)
	}
	// A template_slug whose variables carry a code: the authentication
	// template for the cloud gateway, the rendered text for QR.
	env = prepare(t, r, account(notify.GatewayCloud), &notify.ChatRequest{To: "9876543210", TemplateSlug: "standard-otp",
		Variables: notify.Vars{"OTP": "482915"}})
	if !reflect.DeepEqual(env.Chat.Template, auth("en_US")) || !strings.Contains(env.Chat.Text, "482915") {
		t.Fatalf("slug with a code: %+v %q", env.Chat.Template, env.Chat.Text)
	}
	// template_name naming the authentication template takes otp.
	env = prepare(t, r, account(""), &notify.ChatRequest{To: "9876543210", TemplateName: "otp_code", OTP: "482915"})
	if !reflect.DeepEqual(env.Chat.Template, auth("en_US")) {
		t.Fatalf("template_name otp_code: %+v", env.Chat.Template)
	}
	if _, err := r.ch.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", TemplateName: "otp_code"}); !hasField(err, "otp") {
		t.Fatalf("template_name otp_code without otp: %v", err)
	}
	req = shapeOTP()
	req.Gateway = notify.GatewayQR
	if env := prepare(t, r, account(""), req); env.Chat.Template != nil {
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
	for _, req := range []*notify.ChatRequest{shapeOTP(),
		{To: "9876543210", TemplateSlug: "standard-otp", Variables: notify.Vars{"OTP": "482915"}}} {
		env := prepare(t, r, account(notify.GatewayCloud), req)
		if env.Chat.Gateway != notify.GatewayQR || env.Chat.Template != nil || env.Chat.Fallback {
			t.Fatalf("auto with cloud primary: gateway %s, template %+v, fallback %v", env.Chat.Gateway, env.Chat.Template, env.Chat.Fallback)
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
	req.Gateway = notify.GatewayCloud
	_, err := r.ch.Prepare(context.Background(), account(""), req)
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "otp: ") || !strings.Contains(err.Error(), "CloudOTPTemplate") {
		t.Fatalf("explicit cloud: %v", err)
	}
	cloudOnly := newRig(t, func(c *chat.Config) { c.QR, c.CloudOTPTemplate = nil, "" }).ch
	for _, gw := range []notify.ChatGateway{notify.GatewayAuto, notify.GatewayCloud} {
		for _, req := range []*notify.ChatRequest{shapeOTP(),
			{To: "9876543210", TemplateSlug: "standard-otp", Variables: notify.Vars{"OTP": "482915"}}} {
			req.Gateway = gw
			_, err := cloudOnly.Prepare(context.Background(), account(""), req)
			if notify.CodeOf(err) != notify.CodeInvalidArgument || !strings.Contains(err.Error(), "CloudOTPTemplate") ||
				!strings.Contains(err.Error(), "NOTIFY_CLOUD_OTP_TEMPLATE") {
				t.Fatalf("cloud-only, gateway %q, a code: %v", gw, err)
			}
		}
	}
	if env, err := cloudOnly.Prepare(context.Background(), account(""), &notify.ChatRequest{To: "9876543210", Message: "hi"}); err != nil || env.Chat.Gateway != notify.GatewayCloud {
		t.Fatalf("cloud-only, free text: %v", err)
	}
	if _, err := chat.New(chat.Config{Cloud: r.cloud, CloudOTPTemplate: "otp_code"}); err != nil {
		t.Fatal(err)
	}
	// Free text without a code still goes to cloud.
	if env := prepare(t, r, account(notify.GatewayCloud), &notify.ChatRequest{To: "9876543210", Message: "hi"}); env.Chat.Gateway != notify.GatewayCloud {
		t.Fatalf("free text: %s", env.Chat.Gateway)
	}
}
