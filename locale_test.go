package notify_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/queue/memqueue"
	"github.com/notifykit/notify/queued"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

// orderVars fill the stock order-confirmed template.
var orderVars = record.Vars{"NAME": "Asha", "ORDER_ID": "4711", "AMOUNT": "₹499.00", "DELIVERY_DATE": "12/08/2026",
	"LINK": "https://shop.example/o/4711"}

// The words that tell the stock order template's wordings apart.
const (
	hindiThanks   = "धन्यवाद"
	englishThanks = "thank you"
	englishSMS    = "is confirmed" // the English SMS, which thanks no one
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

// A recipient's stored locale chooses the variant of a request that
// names none, on SMS, chat (the cloud template in hi) and e-mail alike,
// at the price of what goes; a request's own locale, or a chat language,
// still decides; a queued send goes in the locale it was charged for.
func TestRecipientLocaleChoosesTheVariant(t *testing.T) {
	ctx := context.Background()
	kit := notifytest.New(t)
	setLocale := func(to, tag string) {
		t.Helper()
		if err := kit.Ledger.SetLocale(ctx, notifytest.AccountID, to, tag); err != nil {
			t.Fatal(err)
		}
	}
	send := func(req notify.Request) *notify.Receipt {
		t.Helper()
		r, err := kit.Notifier.Send(ctx, req)
		if err != nil || r.Status != record.StateSent {
			t.Fatalf("%T: %+v, %v", req, r, err)
		}
		return r
	}
	setLocale("+919876543210", "hi-IN")
	order := &sms.Request{Account: notifytest.AccountID, To: "98765 43210", TemplateSlug: "order-confirmed", Variables: orderVars}
	quote, err := kit.Notifier.Quote(ctx, order)
	if err != nil {
		t.Fatal(err)
	}
	r := send(order)
	m := sms.MessageOf(kit.LastSMS(t))
	if !strings.Contains(m.Text, "जी") || r.Units != m.Segments || r.Cost != quote {
		t.Errorf("SMS to a hi-IN recipient: %q, %d units, cost %v (quoted %v); want the Hindi variant at its own price", m.Text, r.Units, r.Cost, quote)
	}
	english := *order
	english.Locale = "en"
	send(&english)
	if text := sms.MessageOf(kit.LastSMS(t)).Text; !strings.Contains(text, englishSMS) {
		t.Errorf("a request naming en: %q; want the English base", text)
	}

	// The number's locale serves chat too; a language the request names
	// pins the cloud template's.
	send(&chat.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "order-confirmed", Variables: orderVars, Gateway: chat.GatewayCloud})
	if c := chat.MessageOf(kit.LastChat(t)); c.Template == nil || c.Template.Language != "hi" || !strings.Contains(c.Text, hindiThanks) {
		t.Errorf("chat to a hi-IN recipient: template %+v, text %q; want order_confirmed in hi", c.Template, c.Text)
	}
	send(&chat.Request{Account: notifytest.AccountID, To: "9876543210", TemplateSlug: "order-confirmed", Variables: orderVars,
		Gateway: chat.GatewayCloud, Language: "en_US"})
	if c := chat.MessageOf(kit.LastChat(t)); c.Template.Language != "en_US" || !strings.Contains(c.Text, englishThanks) {
		t.Errorf("chat naming en_US: language %q, text %q; want the English base", c.Template.Language, c.Text)
	}

	// An address has its own locale.
	mail := &email.Request{Account: notifytest.AccountID, To: "Asha@Example.com", TemplateSlug: "order-confirmed", Variables: orderVars}
	send(mail)
	if m := email.MessageOf(kit.LastEmail(t)); strings.Contains(m.HTML, hindiThanks) {
		t.Errorf("e-mail to a recipient without a locale: subject %q; want English", m.Subject)
	}
	key, err := kit.Notifier.Recipient(email.Kind, "Asha@Example.com")
	if err != nil {
		t.Fatal(err)
	}
	setLocale(key, "hi")
	send(mail)
	if m := email.MessageOf(kit.LastEmail(t)); !strings.Contains(m.HTML, hindiThanks) || !strings.Contains(m.HTML, `lang="hi"`) {
		t.Errorf("e-mail to a hi recipient: subject %q; want the Hindi variant in the Hindi layout", m.Subject)
	}

	// Queued, the send keeps the locale it was charged in: the recipient
	// forgetting theirs before the worker runs changes nothing.
	rq, err := queued.New(kit.Notifier).Enqueue(ctx, order)
	if err != nil || rq.Status != record.StateQueued || rq.Cost != quote {
		t.Fatalf("Enqueue: %+v, %v; want queued at the Hindi price %v", rq, err, quote)
	}
	setLocale("+919876543210", "")
	if n := kit.RunQueue(t); n != 1 {
		t.Fatalf("RunQueue ran %d jobs, want 1", n)
	}
	if text := sms.MessageOf(kit.LastSMS(t)).Text; !strings.Contains(text, "जी") {
		t.Errorf("queued send after the recipient forgot their locale: %q; want the Hindi it was charged for", text)
	}
	send(order)
	if text := sms.MessageOf(kit.LastSMS(t)).Text; !strings.Contains(text, englishSMS) {
		t.Errorf("send after the recipient forgot their locale: %q; want English", text)
	}
}

// localeLedger counts the Notifier's reads of recipients' locales, and
// fails them while down is set.
type localeLedger struct {
	store.Ledger
	reads atomic.Int32
	down  atomic.Bool
}

func (l *localeLedger) Locales(ctx context.Context, account string, tos []string) (map[string]string, error) {
	l.reads.Add(1)
	if l.down.Load() {
		return nil, notify.Errorf(notify.CodeUnavailable, "dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	return l.Ledger.Locales(ctx, account, tos)
}

// The recipients' locales are read only when they can matter (a template
// with variants, a request naming no locale), once for all the recipients
// of a bulk send; a store that cannot answer refuses the send before any
// charge.
func TestRecipientLocaleReads(t *testing.T) {
	ctx := context.Background()
	accounts, wal := memstore.NewAccounts(), memstore.NewWallet()
	acct := &notify.Account{ID: "shop", Name: "Shop", Currency: record.INR(), Settings: sms.Settings{SenderID: "SHOPCO"}.Map()}
	if err := accounts.Add(acct, "key"); err != nil {
		t.Fatal(err)
	}
	if err := wal.Open(acct.ID, notify.Money{Minor: 100000, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	ledger := &localeLedger{Ledger: memstore.NewLedger(wal)}
	renderer, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	vendor := memprovider.New("sms")
	ch, err := sms.New(sms.Config{Provider: vendor, Renderer: renderer})
	if err != nil {
		t.Fatal(err)
	}
	q, err := memqueue.New(memqueue.Config{Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(accounts, ledger, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()), notify.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.SetLocale(ctx, acct.ID, "+919876543211", "hi"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what  string
		req   notify.Request
		reads int32
	}{
		{"a text", &sms.Request{Account: acct.ID, To: "9876543211", Message: "Your order shipped"}, 0},
		{"a template without variants", &sms.Request{Account: acct.ID, To: "9876543211", TemplateSlug: "order-delivered",
			Variables: record.Vars{"NAME": "Asha", "ORDER_ID": "4711", "LINK": "https://shop.example/o/4711"}}, 0},
		{"a request naming its locale", &sms.Request{Account: acct.ID, To: "9876543211", TemplateSlug: "order-confirmed", Variables: orderVars, Locale: "en"}, 0},
		{"a template with variants", &sms.Request{Account: acct.ID, To: "9876543211", TemplateSlug: "order-confirmed", Variables: orderVars}, 1},
		{"a bulk send of one", &sms.BulkRequest{Message: sms.Request{Account: acct.ID, TemplateSlug: "order-confirmed", Variables: orderVars},
			To: []string{"9876543210", "9876543211", "9876543212"}}, 1},
	} {
		before := ledger.reads.Load()
		if _, err := n.Send(ctx, c.req); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if got := ledger.reads.Load() - before; got != c.reads {
			t.Errorf("%s: %d reads of the recipients' locales, want %d", c.what, got, c.reads)
		}
	}
	// A timed fallback reads its message's and its steps' at once.
	order := &sms.Request{Account: acct.ID, To: "9876543211", TemplateSlug: "order-confirmed", Variables: orderVars}
	before := ledger.reads.Load()
	if _, err := queued.New(n).SendWithFallback(ctx, order, queued.Fallback{Request: order, After: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if got := ledger.reads.Load() - before; got != 1 {
		t.Errorf("a timed fallback: %d reads of the recipients' locales, want 1", got)
	}
	if text := sms.MessageOf(vendor.Sent()[len(vendor.Sent())-1]).Text; !strings.Contains(text, "जी") {
		t.Errorf("a timed fallback's first message: %q; want the Hindi variant", text)
	}
	// The bulk send's legs each in their recipient's locale.
	sent := vendor.Sent()
	for _, env := range sent[len(sent)-3:] {
		want := englishSMS
		if env.To == "+919876543211" {
			want = "जी"
		}
		if text := sms.MessageOf(env).Text; !strings.Contains(text, want) {
			t.Errorf("bulk leg to %s: %q; want %q", env.To, text, want)
		}
	}

	ledger.down.Store(true)
	balance, _ := wal.Balance(ctx, acct.ID)
	sends := len(vendor.Sent())
	_, err = n.Send(ctx, &sms.Request{Account: acct.ID, To: "9876543211", TemplateSlug: "order-confirmed", Variables: orderVars})
	if notify.CodeOf(err) != notify.CodeUnavailable || !notify.IsRetryable(err) {
		t.Fatalf("a send whose recipient's locale cannot be read: %v; want Unavailable, retryable", err)
	}
	if after, _ := wal.Balance(ctx, acct.ID); after != balance || len(vendor.Sent()) != sends {
		t.Errorf("a refused send moved money (%v to %v) or went out", balance, after)
	}
}

// A stored locale never fails a send the request alone would make: a
// variant no DLT registration matches is sent in the base under its own
// registration, its record saying why; a DLT template ID the request
// names pins its wording, and the recipient's locale is not read.
func TestRecipientLocaleNeverFailsASend(t *testing.T) {
	ctx := context.Background()
	const english = "1107000000000000001"
	kit := notifytest.New(t, notifytest.WithAccount(notify.Account{ID: notifytest.AccountID, Name: "Test Co", Currency: record.INR(),
		Settings: sms.Settings{SenderID: "TESTCO", DLTTemplates: []sms.DLTTemplate{
			{ID: english, EntityID: "1101000000000000001", Content: "Order {#var#} has shipped - TESTCO", Slug: "shipped"},
		}}.Map()}))
	if err := kit.Templates.PutTemplate(ctx, notifytest.AccountID, &store.Template{Slug: "shipped",
		Bodies:  map[record.Kind]store.Body{sms.Kind: {Text: "Order {{ORDER_ID}} has shipped - TESTCO"}},
		Locales: map[string]map[record.Kind]store.Body{"mr": {sms.Kind: {Text: "ऑर्डर {{ORDER_ID}} पाठवली आहे - TESTCO"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := kit.Ledger.SetLocale(ctx, notifytest.AccountID, "+919876543210", "mr"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", english} {
		r, err := kit.Notifier.Send(ctx, &sms.Request{Account: notifytest.AccountID, To: "9876543210", Route: sms.RouteDLT,
			TemplateSlug: "shipped", Variables: record.Vars{"ORDER_ID": "4711"}, DLTTemplateID: id})
		if err != nil || r.Status != record.StateSent {
			t.Fatalf("dlt_template_id %q: %+v, %v; want sent", id, r, err)
		}
		if m := sms.MessageOf(kit.LastSMS(t)); m.DLTTemplateID != english || !strings.Contains(m.Text, "has shipped") {
			t.Errorf("dlt_template_id %q: %+v; want the English base under %s", id, m, english)
		}
		note := kit.Message(t, r.MessageID).Note
		if noted := strings.Contains(note, "recipient's locale mr") && strings.Contains(note, "dlt_template_id"); noted != (id == "") {
			t.Errorf("dlt_template_id %q: record note %q; want the refused locale noted only when the locale was tried", id, note)
		}
	}
}
