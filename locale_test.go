package notify_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
)

// orderVars fill the stock order-confirmed template.
var orderVars = record.Vars{"NAME": "Asha", "ORDER_ID": "4711", "AMOUNT": "₹499.00", "DELIVERY_DATE": "12/08/2026",
	"LINK": "https://shop.example/o/4711"}

// The words that tell the stock order template's wordings apart.
const (
	hindiThanks   = "धन्यवाद"
	englishThanks = "thank you"
)

// A request with locale hi-IN renders the Hindi variant of a stock
// template on SMS, chat (by the cloud gateway, in the cloud template's
// Hindi language, hi) and e-mail; fr-CA, with no French variant, falls to
// the account's default and, without one, to the English base.
func TestLocaleChoosesTheVariant(t *testing.T) {
	ctx := context.Background()
	kit := notifytest.New(t)
	send := func(req notify.Request) {
		t.Helper()
		if r, err := kit.Notifier.Send(ctx, req); err != nil || r.Status != record.StateSent {
			t.Fatalf("%T: %+v, %v", req, r, err)
		}
	}
	send(&sms.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "order-confirmed", Variables: orderVars, Locale: "hi-IN"})
	if text := sms.MessageOf(kit.LastSMS(t)).Text; !strings.Contains(text, "4711") || !strings.Contains(text, "जी") {
		t.Errorf("SMS in hi-IN: %q; want the Hindi variant", text)
	}
	send(&email.Request{Account: notifytest.AccountID, To: "asha@example.com", TemplateSlug: "order-confirmed", Variables: orderVars, Locale: "hi-IN"})
	if m := email.MessageOf(kit.LastEmail(t)); !strings.Contains(m.HTML, hindiThanks) || !strings.Contains(m.HTML, `lang="hi"`) {
		t.Errorf("e-mail in hi-IN: subject %q; want the Hindi variant in the Hindi layout", m.Subject)
	}
	send(&chat.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "order-confirmed", Variables: orderVars,
		Locale: "hi-IN", Gateway: chat.GatewayCloud})
	m := chat.MessageOf(kit.LastChat(t))
	if m.Template == nil || m.Template.Name != "order_confirmed" || m.Template.Language != "hi" || !strings.Contains(m.Text, hindiThanks) {
		t.Fatalf("chat in hi-IN: template %+v, text %q; want order_confirmed in hi", m.Template, m.Text)
	}

	// fr-CA: no French variant, no default: the English base.
	send(&chat.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "order-confirmed", Variables: orderVars,
		Locale: "fr-CA", Gateway: chat.GatewayCloud})
	if m := chat.MessageOf(kit.LastChat(t)); m.Template.Language != "en_US" || !strings.Contains(m.Text, englishThanks) {
		t.Errorf("chat in fr-CA without a default: language %q, text %q; want the English base", m.Template.Language, m.Text)
	}
	// A tag that is none is the request's mistake, naming locale.
	_, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "order-confirmed",
		Variables: orderVars, Locale: "Hindi"})
	var ne *notify.Error
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &ne) || ne.Fields[0].Field != "locale" {
		t.Errorf("a bad locale: %v; want InvalidArgument naming locale", err)
	}
}

// The account's default locale is the next link: fr-CA and a request
// without a locale render its variant; a custom template's variant is
// chosen the same way.
func TestAccountLocaleIsTheDefault(t *testing.T) {
	ctx := context.Background()
	kit := notifytest.New(t, notifytest.WithAccount(notify.Account{ID: notifytest.AccountID, Name: "Test Co", Currency: record.INR(),
		Settings: sms.Settings{SenderID: "TESTCO"}.Map(), Locale: "hi"}))
	for _, loc := range []string{"fr-CA", ""} {
		if _, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "order-confirmed",
			Variables: orderVars, Locale: loc}); err != nil {
			t.Fatal(err)
		}
		if text := sms.MessageOf(kit.LastSMS(t)).Text; !strings.Contains(text, "जी") {
			t.Errorf("locale %q on a Hindi account: %q; want the Hindi variant", loc, text)
		}
	}
	if err := kit.Templates.PutTemplate(ctx, notifytest.AccountID, &store.Template{Slug: "shipped",
		Bodies:  map[record.Kind]store.Body{sms.Kind: {Text: "Order {{ORDER_ID}} has shipped"}},
		Locales: map[string]map[record.Kind]store.Body{"hi": {sms.Kind: {Text: "ऑर्डर {{ORDER_ID}} भेज दिया गया है"}}}}); err != nil {
		t.Fatal(err)
	}
	for loc, want := range map[string]string{"hi-IN": "भेज दिया", "": "भेज दिया"} {
		if _, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "shipped",
			Variables: record.Vars{"ORDER_ID": "4711"}, Locale: loc}); err != nil {
			t.Fatal(err)
		}
		if text := sms.MessageOf(kit.LastSMS(t)).Text; !strings.Contains(text, want) {
			t.Errorf("custom template in %q: %q; want %q", loc, text, want)
		}
	}
}

// A dlt-route send of a template names no DLT ID: it goes under the
// registration of the template's slug whose content the variant it
// rendered matches, so each language goes under its own DLT ID; a
// variant no registration matches is refused naming dlt_template_id.
func TestDLTIDPerVariant(t *testing.T) {
	ctx := context.Background()
	const english, hindi = "1107000000000000001", "1107000000000000002"
	kit := notifytest.New(t, notifytest.WithAccount(notify.Account{ID: notifytest.AccountID, Name: "Test Co", Currency: record.INR(),
		Settings: sms.Settings{SenderID: "TESTCO", DLTTemplates: []sms.DLTTemplate{
			{ID: english, EntityID: "1101000000000000001", Content: "Order {#var#} has shipped - TESTCO", Slug: "shipped"},
			{ID: hindi, EntityID: "1101000000000000001", Content: "ऑर्डर {#var#} भेज दिया गया है - TESTCO", Slug: "shipped"},
		}}.Map()}))
	if err := kit.Templates.PutTemplate(ctx, notifytest.AccountID, &store.Template{Slug: "shipped",
		Bodies: map[record.Kind]store.Body{sms.Kind: {Text: "Order {{ORDER_ID}} has shipped - TESTCO"}},
		Locales: map[string]map[record.Kind]store.Body{
			"hi": {sms.Kind: {Text: "ऑर्डर {{ORDER_ID}} भेज दिया गया है - TESTCO"}},
			"mr": {sms.Kind: {Text: "ऑर्डर {{ORDER_ID}} पाठवली आहे - TESTCO"}},
		}}); err != nil {
		t.Fatal(err)
	}
	send := func(loc string) (*sms.Message, error) {
		_, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", Route: sms.RouteDLT,
			TemplateSlug: "shipped", Variables: record.Vars{"ORDER_ID": "4711"}, Locale: loc})
		if err != nil {
			return nil, err
		}
		return sms.MessageOf(kit.LastSMS(t)), nil
	}
	for loc, want := range map[string]string{"": english, "hi-IN": hindi, "fr": english} {
		m, err := send(loc)
		if err != nil || m.DLTTemplateID != want || len(m.DLTValues) != 1 || m.DLTValues[0] != "4711" {
			t.Fatalf("locale %q: %+v, %v; want DLT template %s with the order's value", loc, m, err, want)
		}
	}
	_, err := send("mr")
	var ne *notify.Error
	if notify.CodeOf(err) != notify.CodeInvalidArgument || !errors.As(err, &ne) || ne.Fields[0].Field != "dlt_template_id" {
		t.Fatalf("a variant no registration matches: %v; want InvalidArgument naming dlt_template_id", err)
	}
}
