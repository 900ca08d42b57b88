package gateway_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/httpapi"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/gateway"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

const remoteKey = "remote_key_for_roundtrip_0001"

// publicDNS resolves every media host to a public address.
type publicDNS struct{}

func (publicDNS) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

// remoteSide is a gateway served by httpapi on a real http.Server, with
// capture providers behind its channels.
type remoteSide struct {
	url       string
	n         *notify.Notifier
	wallet    *memstore.Wallet
	sms       *memprovider.Provider
	cloud, qr *memprovider.Provider
	mail      *memprovider.Provider
}

func newRemote(t *testing.T, opening int64) *remoteSide {
	t.Helper()
	r := &remoteSide{
		wallet: memstore.NewWallet(),
		sms:    memprovider.New("remote-sms"),
		cloud:  memprovider.New("remote-cloud"),
		qr:     memprovider.New("remote-qr"),
		mail:   memprovider.New("remote-mail"),
	}
	accounts := memstore.NewAccounts()
	must(t, accounts.Add(&notify.Account{ID: "remote-acct", Name: "Remote Co", Settings: sms.Settings{SenderID: "REMOTE"}.Map(), Currency: record.INR()}, remoteKey))
	must(t, r.wallet.Open("remote-acct", notify.Money{Minor: opening, Currency: record.INR()}))
	renderer, err := template.New(nil)
	must(t, err)
	smsCh, err := sms.New(sms.Config{Provider: r.sms, Renderer: renderer})
	must(t, err)
	chatCh, err := chat.New(chat.Config{Cloud: r.cloud, QR: r.qr, Renderer: renderer, Resolver: publicDNS{}, CloudOTPTemplate: "otp_code"})
	must(t, err)
	mailCh, err := email.New(email.Config{Provider: r.mail, Renderer: renderer})
	must(t, err)
	r.n, err = notify.New(accounts, memstore.NewLedger(r.wallet),
		notify.WithChannel(smsCh), notify.WithChannel(chatCh), notify.WithChannel(mailCh),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithIdempotency(memstore.NewIdempotency(time.Hour)),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: 1}),
	)
	must(t, err)
	h, err := httpapi.New(r.n, accounts)
	must(t, err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	r.url = "http://" + ln.Addr().String() + "/api/v1"
	return r
}

func (r *remoteSide) balance(t *testing.T) int64 {
	t.Helper()
	b, err := r.wallet.Balance(context.Background(), "remote-acct")
	must(t, err)
	return b.Available.Minor
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// localSide is a host application whose channels send through the remote
// gateway.
type localSide struct {
	n      *notify.Notifier
	wallet *memstore.Wallet
	p      *gateway.Provider
}

func newLocal(t *testing.T, remoteURL string) *localSide {
	t.Helper()
	return newLocalFor(t, remoteURL, remoteKey, 2)
}

// newLocalFor is newLocal for a remote that takes key, with a Notifier that
// makes up to attempts attempts.
func newLocalFor(t *testing.T, remoteURL, key string, attempts int) *localSide {
	t.Helper()
	l := &localSide{wallet: memstore.NewWallet()}
	p, err := gateway.New(gateway.Config{BaseURL: remoteURL, APIKey: key, Name: "remote-gateway"})
	must(t, err)
	l.p = p
	accounts := memstore.NewAccounts()
	must(t, accounts.Add(&notify.Account{ID: "local", Name: "Acme", Settings: sms.Settings{SenderID: "ACMEIN"}.Map(), Currency: record.INR()}, "local_key_0000000000"))
	must(t, l.wallet.Open("local", notify.Money{Minor: 10000, Currency: record.INR()}))
	renderer, err := template.New(nil)
	must(t, err)
	smsCh, err := sms.New(sms.Config{Provider: p, Renderer: renderer})
	must(t, err)
	chatCh, err := chat.New(chat.Config{Cloud: p, Renderer: renderer, Resolver: publicDNS{}, CloudOTPTemplate: "otp_code"})
	must(t, err)
	mailCh, err := email.New(email.Config{Provider: p, Renderer: renderer})
	must(t, err)
	l.n, err = notify.New(accounts, memstore.NewLedger(l.wallet),
		notify.WithChannel(smsCh), notify.WithChannel(chatCh), notify.WithChannel(mailCh),
		notify.WithPrices(wallet.DefaultINR()),
		notify.WithRetry(notify.RetryPolicy{MaxAttempts: attempts, BaseDelay: time.Millisecond}),
	)
	must(t, err)
	return l
}

func (l *localSide) balance(t *testing.T) int64 {
	t.Helper()
	b, err := l.wallet.Balance(context.Background(), "local")
	must(t, err)
	return b.Available.Minor
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	remote := newRemote(t, 10000)
	local := newLocal(t, remote.url)

	t.Run("sms", func(t *testing.T) {
		rec, err := local.n.Send(ctx, &sms.Request{Account: "local", To: "+91 98765 43210", Message: "Your order has shipped", Domain: "shop.example"})
		must(t, err)
		sent := remote.sms.Sent()
		env := sent[len(sent)-1]
		if env.To != "+919876543210" || sms.MessageOf(env).Text != "Your order has shipped" || sms.MessageOf(env).SenderID != "ACMEIN" || env.Domain != "shop.example" {
			t.Errorf("remote envelope %+v %+v", env, sms.MessageOf(env))
		}
		// The local receipt names the remote message, which the remote recorded.
		if rec.Provider != "remote-gateway" || rec.ProviderMessageID != env.ID {
			t.Errorf("receipt %+v, remote message %s", rec, env.ID)
		}
		if m, err := remote.n.Message(ctx, "remote-acct", rec.ProviderMessageID); err != nil {
			t.Errorf("remote has no record: %v", err)
		} else if m.State != record.StateSent {
			t.Errorf("remote record %s, want sent", m.State)
		}
		// The remote saw the local message ID as its idempotency key.
		if env.IdempotencyKey != rec.MessageID {
			t.Errorf("idempotency key %q, want %q", env.IdempotencyKey, rec.MessageID)
		}
	})

	t.Run("sms otp route", func(t *testing.T) {
		_, err := local.n.Send(ctx, &sms.Request{Account: "local", To: "9876543210", Message: "482915", Route: sms.RouteOTP})
		must(t, err)
		sent := remote.sms.Sent()
		if env := sent[len(sent)-1]; sms.MessageOf(env).Route != sms.RouteOTP || sms.MessageOf(env).OTP != "482915" {
			t.Errorf("remote envelope %+v", sms.MessageOf(env))
		}
	})

	t.Run("chat text and cloud template", func(t *testing.T) {
		_, err := local.n.Send(ctx, &chat.Request{Account: "local", To: "9876543210", Message: "hello", Gateway: chat.GatewayCloud})
		must(t, err)
		_, err = local.n.Send(ctx, &chat.Request{Account: "local", To: "9876543210", TemplateName: "order_update",
			Language: "en", Variables: record.Vars{"1": "Asha", "2": "4711"}})
		must(t, err)
		_, err = local.n.Send(ctx, &chat.Request{Account: "local", To: "9876543210", Message: "Invoice",
			MediaURL: "https://cdn.example.com/i.pdf", FileName: "Invoice.pdf"})
		must(t, err)
		sent := remote.cloud.Sent()
		if len(sent) != 3 {
			t.Fatalf("%d chat messages at the remote", len(sent))
		}
		if chat.MessageOf(sent[0]).Text != "hello" {
			t.Errorf("text %+v", chat.MessageOf(sent[0]))
		}
		if tp := chat.MessageOf(sent[1]).Template; tp == nil || tp.Name != "order_update" || len(tp.Params) != 2 || tp.Params[1] != "4711" {
			t.Errorf("template %+v", chat.MessageOf(sent[1]))
		}
		if m := chat.MessageOf(sent[2]).Media; m == nil || m.URL != "https://cdn.example.com/i.pdf" || m.FileName != "Invoice.pdf" || chat.MessageOf(sent[2]).Text != "Invoice" {
			t.Errorf("media %+v", chat.MessageOf(sent[2]))
		}
	})

	t.Run("email html and template", func(t *testing.T) {
		_, err := local.n.Send(ctx, &email.Request{Account: "local", To: "asha@example.com", Subject: "Welcome",
			Message: "<p>Hello <b>Asha</b></p>", FromName: "Acme", ReplyTo: "help@example.com", Purpose: email.PurposeInvoice})
		must(t, err)
		_, err = local.n.Send(ctx, &email.Request{Account: "local", To: "asha@example.com", TemplateSlug: "payment-receipt",
			Variables: record.Vars{"NAME": "Asha", "AMOUNT": "₹499.00", "PAYMENT_ID": "pay_81", "DATE": "10/08/2025", "LINK": "https://shop.example/r/81"}})
		must(t, err)
		sent := remote.mail.Sent()
		if len(sent) != 2 {
			t.Fatalf("%d e-mails at the remote", len(sent))
		}
		m := email.MessageOf(sent[0])
		if sent[0].To != "asha@example.com" || m.Subject != "Welcome" || m.HTML != "<p>Hello <b>Asha</b></p>" || m.Text == "" ||
			m.FromName != "Acme" || m.ReplyTo != "help@example.com" || m.Purpose != email.PurposeInvoice {
			t.Errorf("remote e-mail %+v", m)
		}
		if m := email.MessageOf(sent[1]); m.Subject != "Payment received: ₹499.00 (ID pay_81)" || !strings.Contains(m.HTML, "pay_81") {
			t.Errorf("templated e-mail %+v", m)
		}
	})

	t.Run("email cc, bcc and attachment by URL", func(t *testing.T) {
		_, err := local.n.Send(ctx, &email.Request{Account: "local", To: "asha@example.com", Subject: "Invoice 81",
			Message: "Your invoice is attached.", Purpose: email.PurposeInvoice,
			Cc: []string{"ravi@example.com"}, Bcc: []string{"audit@example.org"},
			Attachments: []email.Attachment{{URL: "https://files.example.com/inv-81.pdf", FileName: "inv-81.pdf", ContentType: "application/pdf"}}})
		must(t, err)
		sent := remote.mail.Sent()
		m := email.MessageOf(sent[len(sent)-1])
		if len(m.Cc) != 1 || m.Cc[0] != "ravi@example.com" || len(m.Bcc) != 1 || m.Bcc[0] != "audit@example.org" ||
			len(m.Attachments) != 1 || m.Attachments[0].URL != "https://files.example.com/inv-81.pdf" ||
			m.Attachments[0].FileName != "inv-81.pdf" || m.Attachments[0].ContentType != "application/pdf" {
			t.Errorf("remote e-mail %+v", m)
		}
		// Bytes cannot cross the API: refused, not sent without the file.
		before := remote.mail.Len()
		lb := local.balance(t)
		_, err = local.n.Send(ctx, &email.Request{Account: "local", To: "asha@example.com", Subject: "Invoice 82",
			Message: "attached", Attachments: []email.Attachment{{FileName: "inv-82.pdf", Data: []byte("%PDF-1.4")}}})
		if notify.CodeOf(err) != notify.CodeInvalidArgument || remote.mail.Len() != before || local.balance(t) != lb {
			t.Errorf("bytes attachment: %v, %d sent, charged %d", err, remote.mail.Len()-before, lb-local.balance(t))
		}
	})

	t.Run("chat template values", func(t *testing.T) {
		_, err := local.n.Send(ctx, &chat.Request{Account: "local", To: "9876543210", TemplateName: "order_shipped",
			Language: "en", NamedParams: map[string]string{"first_name": "Asha"}, HeaderText: "Order 4711",
			Buttons: []chat.Button{{Kind: chat.ButtonURL, Index: 0, Value: "4711"}}})
		must(t, err)
		sent := remote.cloud.Sent()
		tp := chat.MessageOf(sent[len(sent)-1]).Template
		if tp == nil || tp.NamedParams["first_name"] != "Asha" || tp.HeaderText != "Order 4711" ||
			len(tp.Buttons) != 1 || tp.Buttons[0].Kind != chat.ButtonURL || tp.Buttons[0].Value != "4711" {
			t.Errorf("remote template %+v", tp)
		}
	})

	t.Run("retried envelope is sent once", func(t *testing.T) {
		env := &notify.Envelope{ID: "11111111-2222-4333-8444-555555555555", Kind: sms.Kind, To: "9876543210",
			Content: &sms.Message{Route: sms.RouteSMS, Text: "once only"}}
		before, bal := remote.sms.Len(), remote.balance(t)
		r1, err := local.p.Send(ctx, env)
		must(t, err)
		r2, err := local.p.Send(ctx, env)
		must(t, err)
		if r1.ProviderMessageID != r2.ProviderMessageID || remote.sms.Len() != before+1 || remote.balance(t) != bal-25 {
			t.Errorf("ids %s %s, %d sent, charged %d", r1.ProviderMessageID, r2.ProviderMessageID, remote.sms.Len()-before, bal-remote.balance(t))
		}
	})

	t.Run("remote refusal is refunded on both sides", func(t *testing.T) {
		remote.sms.FailNext(1, notify.CodeRejected)
		lb, rb := local.balance(t), remote.balance(t)
		rec, err := local.n.Send(ctx, &sms.Request{Account: "local", To: "9876543210", Message: "x"})
		if notify.CodeOf(err) != notify.CodeRejected || rec == nil || rec.Status != record.StateFailed {
			t.Fatalf("got %v, %+v", err, rec)
		}
		if local.balance(t) != lb || remote.balance(t) != rb {
			t.Errorf("balances moved: local %d, remote %d", lb-local.balance(t), rb-remote.balance(t))
		}
	})

	t.Run("remote outage is retried once it recovers", func(t *testing.T) {
		remote.sms.FailNext(1, notify.CodeUnavailable)
		before := remote.sms.Len()
		rec, err := local.n.Send(ctx, &sms.Request{Account: "local", To: "9876543210", Message: "retry me"})
		must(t, err)
		if rec.Attempts != 2 || remote.sms.Len() != before+1 {
			t.Errorf("attempts %d, %d sent", rec.Attempts, remote.sms.Len()-before)
		}
	})

	t.Run("remote field errors come back as fields", func(t *testing.T) {
		// Unregistered at the remote: its DLT check refuses the template.
		env := &notify.Envelope{ID: "21111111-2222-4333-8444-555555555555", Kind: sms.Kind, To: "9876543210",
			Content: &sms.Message{Route: sms.RouteDLT, Text: "Dear Asha", SenderID: "ACMEIN", DLTTemplateID: "1107", DLTEntityID: "1201"}}
		_, err := local.p.Send(ctx, env)
		var e *notify.Error
		if notify.CodeOf(err) != notify.CodeInvalidArgument || !errorsAs(err, &e) || len(e.Fields) == 0 || e.Fields[0].Field != "dlt_template_id" {
			t.Errorf("got %v", err)
		}
	})

	t.Run("balance", func(t *testing.T) {
		b, err := local.p.Balance(ctx)
		must(t, err)
		if b.Account != "remote-acct" || b.Name != "Remote Co" || b.Available.Minor != remote.balance(t) || b.Available.Currency != record.INR() {
			t.Errorf("%+v", b)
		}
	})
}

func TestRoundTripRemoteWalletEmpty(t *testing.T) {
	remote := newRemote(t, 0)
	local := newLocal(t, remote.url)
	lb := local.balance(t)
	_, err := local.n.Send(context.Background(), &sms.Request{Account: "local", To: "9876543210", Message: "x"})
	if notify.CodeOf(err) != notify.CodeRejected || local.balance(t) != lb || remote.sms.Len() != 0 {
		t.Fatalf("got %v, local charged %d, %d sent", err, lb-local.balance(t), remote.sms.Len())
	}
}

func errorsAs(err error, target **notify.Error) bool { return errors.As(err, target) }
