package smtp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/provider/smtp"
	"github.com/notifykit/notify/provider/smtp/smtptest"
	"github.com/notifykit/notify/record"
	"github.com/notifykit/notify/store"
	"github.com/notifykit/notify/template"
	"github.com/notifykit/notify/wallet"
)

const (
	supOpening = 10000 // paise
	supAccount = "acme"
)

var unsubSecret = []byte("0123456789abcdef0123456789abcdef-unsub")

// suppressStack is a metered Notifier over the e-mail channel, the SMTP
// provider and an smtptest server, with a memstore ledger (whose
// suppression list the Notifier enforces).
type suppressStack struct {
	n      *notify.Notifier
	srv    *smtptest.Server
	ledger *memstore.Ledger
	wallet *memstore.Wallet
}

func newSuppressStack(t *testing.T) *suppressStack {
	t.Helper()
	srv := startServer(t)
	cfg := serverConfig(srv, smtp.EncryptionNone)
	cfg.ListUnsubscribeURL = "https://acme.example/unsubscribe/{token}"
	cfg.UnsubscribeSecret = unsubSecret
	p := newProvider(t, smtp.Config{Default: cfg})
	r, err := template.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := email.New(email.Config{Provider: p, Renderer: r})
	if err != nil {
		t.Fatal(err)
	}
	w := memstore.NewWallet()
	if err := w.Open(supAccount, notify.Money{Minor: supOpening, Currency: record.INR()}); err != nil {
		t.Fatal(err)
	}
	accounts := memstore.NewAccounts()
	if err := accounts.Add(&notify.Account{ID: supAccount, Name: "Acme", Currency: record.INR()}, "key-1"); err != nil {
		t.Fatal(err)
	}
	l := memstore.NewLedger(w)
	n, err := notify.New(accounts, l, notify.WithChannel(ch), notify.WithPrices(wallet.DefaultINR()))
	if err != nil {
		t.Fatal(err)
	}
	return &suppressStack{n: n, srv: srv, ledger: l, wallet: w}
}

func (s *suppressStack) balance(t *testing.T) int64 {
	t.Helper()
	b, err := s.wallet.Balance(context.Background(), supAccount)
	if err != nil {
		t.Fatal(err)
	}
	return b.Available.Minor
}

func (s *suppressStack) records(t *testing.T) int {
	t.Helper()
	recs, err := s.ledger.ByAccount(context.Background(), supAccount, store.MessageCursor{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

func campaign(to string) *email.Request {
	return &email.Request{Account: supAccount, To: to, Subject: "Sale", Message: "<p>Half price today.</p>", Purpose: email.PurposeCampaign}
}

func otpMail(to string) *email.Request {
	return &email.Request{Account: supAccount, To: to, Subject: "Code", Message: "Your code is 4829", Purpose: email.PurposeOTP, OTP: "4829"}
}

// wantSuppressed checks that err refuses a send as suppressed for reason,
// with nothing charged, recorded or sent, and without the address.
func (s *suppressStack) wantSuppressed(t *testing.T, rc *notify.Receipt, err error, reason string, balance int64, records, received int, address string) {
	t.Helper()
	if notify.CodeOf(err) != notify.CodeSuppressed || rc != nil {
		t.Fatalf("send = %+v, %v; want CodeSuppressed and no receipt", rc, err)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("error %q does not name the reason %s", err, reason)
	}
	local, _, _ := strings.Cut(address, "@")
	if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(local)) {
		t.Errorf("error %q shows the recipient", err)
	}
	if got := s.balance(t); got != balance {
		t.Errorf("balance %d after a suppressed send; want %d, unchanged", got, balance)
	}
	if got := s.records(t); got != records {
		t.Errorf("%d records after a suppressed send; want %d, none added", got, records)
	}
	if got := s.srv.Received(); got != received {
		t.Errorf("the SMTP server received %d messages; want %d, none more", got, received)
	}
}

// A 550 5.1.1 to RCPT TO from a real SMTP server is a hard bounce: the
// send is refunded, the address lands on the account's list, and the next
// send to it, transactional too, is refused before it is charged. A
// refusal of another status (5.7.1, policy) is no bounce.
func TestHardBounceSuppresses(t *testing.T) {
	s := newSuppressStack(t)
	ctx := context.Background()
	const addr = "Gone.User@Example.com"

	s.srv.RejectNextAt(smtptest.StageRcpt, 550, "5.7.1 Relaying denied")
	if _, err := s.n.Send(ctx, otpMail("policy@example.com")); notify.CodeOf(err) != notify.CodeRejected {
		t.Fatalf("send refused with 5.7.1 = %v; want Rejected", err)
	}
	if _, ok, err := s.ledger.LookupSuppression(ctx, supAccount, "email", "policy@example.com"); err != nil || ok {
		t.Fatalf("5.7.1 recorded a suppression (%v, %v); it is no bounce", ok, err)
	}

	s.srv.RejectNextAt(smtptest.StageRcpt, 550, "5.1.1 <gone.user@example.com>: Recipient address rejected: User unknown")
	rc, err := s.n.Send(ctx, otpMail(addr))
	if notify.CodeOf(err) != notify.CodeRejected || rc == nil || rc.Status != record.StateFailed {
		t.Fatalf("send to an unknown user = %+v, %v; want a failed receipt, Rejected", rc, err)
	}
	var b store.Bounce
	if !errors.As(err, &b) {
		t.Fatalf("error %v carries no store.Bounce", err)
	}
	if got := s.balance(t); got != supOpening {
		t.Fatalf("balance %d after a bounce; want %d, refunded", got, supOpening)
	}
	e, ok, err := s.ledger.LookupSuppression(ctx, supAccount, "email", "gone.user@example.com")
	if err != nil || !ok || e.Reason != store.SuppressHardBounce {
		t.Fatalf("suppression after 5.1.1 = %+v, %v, %v; want hard_bounce", e, ok, err)
	}
	// Another account's list is untouched.
	if _, ok, _ := s.ledger.LookupSuppression(ctx, "other", "email", "gone.user@example.com"); ok {
		t.Fatal("the bounce landed on another account's list")
	}

	records, received := s.records(t), s.srv.Received()
	rc, err = s.n.Send(ctx, otpMail("gone.user@example.com"))
	s.wantSuppressed(t, rc, err, "hard_bounce", supOpening, records, received, addr)
	rc, err = s.n.Send(ctx, campaign("GONE.USER@example.com"))
	s.wantSuppressed(t, rc, err, "hard_bounce", supOpening, records, received, addr)

	// Other addresses still go.
	if _, err := s.n.Send(ctx, otpMail("ok@example.com")); err != nil {
		t.Fatalf("send to another address: %v", err)
	}
}

// A cc's 5.1.1 from a real SMTP server is the cc's hard bounce: the send
// is refunded, the cc (not To) lands on the list in its canonical form
// whatever spelling the request used, and a later send to any spelling
// of it, as To or as a bcc, is refused before it is charged.
func TestCcHardBounceSuppressesTheCc(t *testing.T) {
	s := newSuppressStack(t)
	ctx := context.Background()
	s.srv.RejectRecipient("Gone@xn--bcher-kva.example", 550, "5.1.1 <Gone@xn--bcher-kva.example>: User unknown")
	req := &email.Request{Account: supAccount, To: "asha@example.com", Subject: "Invoice 81", Message: "Your invoice.",
		Purpose: email.PurposeInvoice, Cc: []string{"Gone@Bücher.example"}}
	rc, err := s.n.Send(ctx, req)
	if notify.CodeOf(err) != notify.CodeRejected || rc == nil || rc.Status != record.StateFailed || s.balance(t) != supOpening {
		t.Fatalf("send with a cc the server refuses = %+v, %v, balance %d; want failed and refunded", rc, err, s.balance(t))
	}
	if e, ok, err := s.ledger.LookupSuppression(ctx, supAccount, "email", "gone@xn--bcher-kva.example"); err != nil || !ok || e.Reason != store.SuppressHardBounce {
		t.Fatalf("the cc's entry = %+v, %v, %v; want hard_bounce under its canonical form", e, ok, err)
	}
	if _, ok, _ := s.ledger.LookupSuppression(ctx, supAccount, "email", "asha@example.com"); ok {
		t.Fatal("a cc's bounce suppressed To")
	}
	records, received := s.records(t), s.srv.Received()
	rc, err = s.n.Send(ctx, otpMail("gone@bücher.example"))
	s.wantSuppressed(t, rc, err, "hard_bounce", supOpening, records, received, "gone@x")
	bcc := campaign("asha@example.com")
	bcc.Bcc = []string{"GONE@XN--BCHER-KVA.EXAMPLE"}
	rc, err = s.n.Send(ctx, bcc)
	s.wantSuppressed(t, rc, err, "hard_bounce", supOpening, records, received, "gone@x")
}

// One-click unsubscribe over a real HTTP server, with the token of the
// List-Unsubscribe header of a campaign message really sent: the next
// campaign send to the address is refused with nothing charged or
// recorded, and an OTP e-mail still goes. A GET shows a page and records
// nothing; a forged token is refused.
func TestOneClickUnsubscribe(t *testing.T) {
	s := newSuppressStack(t)
	ctx := context.Background()
	const addr = "asha@example.com"
	h, err := smtp.UnsubscribeHandler(smtp.UnsubscribeConfig{Secret: unsubSecret, Suppressions: s.ledger, DefaultAccount: supAccount})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/unsubscribe/{token}", h)
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)

	if _, err := s.n.Send(ctx, campaign(addr)); err != nil {
		t.Fatalf("first campaign send: %v", err)
	}
	msgs := s.srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages received; want 1", len(msgs))
	}
	if msgs[0].Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Fatalf("campaign mail without List-Unsubscribe-Post: %q", msgs[0].Header.Get("List-Unsubscribe-Post"))
	}
	lu := msgs[0].Header.Get("List-Unsubscribe")
	i, j := strings.Index(lu, "<https://acme.example/unsubscribe/"), strings.Index(lu, ">")
	if i < 0 || j < i {
		t.Fatalf("List-Unsubscribe %q has no unsubscribe URL", lu)
	}
	token := lu[i+len("<https://acme.example/unsubscribe/") : j]
	target := web.URL + "/unsubscribe/" + token

	// A GET (a scanner's prefetch) shows the form and records nothing.
	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	page := readBody(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `method="post"`) || strings.Contains(page, addr) || !strings.Contains(page, "a***@example.com") {
		t.Fatalf("GET = %d %q; want 200 with a POST form and the masked address only", resp.StatusCode, page)
	}
	if _, ok, _ := s.ledger.LookupSuppression(ctx, supAccount, "email", addr); ok {
		t.Fatal("a GET unsubscribed the address")
	}

	// A forged token, and a real one altered in one character, are refused.
	forged, err := smtp.UnsubscribeToken([]byte("another-secret-another-secret-32b!"), addr)
	if err != nil {
		t.Fatal(err)
	}
	altered := token[:len(token)-2] + "A" + token[len(token)-1:]
	if token[len(token)-2] == 'A' {
		altered = token[:len(token)-2] + "B" + token[len(token)-1:]
	}
	for _, bad := range []string{forged, altered, "not-a-token"} {
		resp, err := http.Post(web.URL+"/unsubscribe/"+bad, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
		if err != nil {
			t.Fatal(err)
		}
		if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || strings.Contains(body, addr) {
			t.Errorf("POST with a bad token = %d %q; want 400", resp.StatusCode, body)
		}
	}
	// A POST without the one-click body records nothing.
	resp, err = http.Post(target, "application/x-www-form-urlencoded", strings.NewReader("unsubscribe=yes"))
	if err != nil {
		t.Fatal(err)
	}
	if readBody(t, resp); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("POST without List-Unsubscribe=One-Click = %d; want 400", resp.StatusCode)
	}
	if _, ok, _ := s.ledger.LookupSuppression(ctx, supAccount, "email", addr); ok {
		t.Fatal("a refused request unsubscribed the address")
	}

	// RFC 8058's POST records the address as unsubscribed.
	resp, err = http.Post(target, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK || strings.Contains(body, addr) {
		t.Fatalf("one-click POST = %d %q; want 200 without the address", resp.StatusCode, body)
	}
	e, ok, err := s.ledger.LookupSuppression(ctx, supAccount, "email", addr)
	if err != nil || !ok || e.Reason != store.SuppressUnsubscribed {
		t.Fatalf("after one-click: %+v, %v, %v; want unsubscribed", e, ok, err)
	}

	balance, records, received := s.balance(t), s.records(t), s.srv.Received()
	rc, err := s.n.Send(ctx, campaign(addr))
	s.wantSuppressed(t, rc, err, "unsubscribed", balance, records, received, addr)

	// Transactional mail still goes, and is charged.
	rc, err = s.n.Send(ctx, otpMail(addr))
	if err != nil || rc.Status != record.StateSent {
		t.Fatalf("OTP e-mail to an unsubscribed address = %+v, %v; want sent", rc, err)
	}
	if got := s.balance(t); got != balance-rc.Cost.Minor || rc.Cost.Minor <= 0 {
		t.Errorf("balance %d after the OTP; want %d less its cost %d", got, balance, rc.Cost.Minor)
	}
	if err := s.srv.WaitMessages(ctx, received+1); err != nil {
		t.Fatal(err)
	}
}

// A version 2 token names the account: it unsubscribes from that
// account's list without a DefaultAccount, and a version 1 token is then
// refused. A multipart one-click body is taken too.
func TestAccountUnsubscribeToken(t *testing.T) {
	list := memstore.NewSuppressions()
	h, err := smtp.UnsubscribeHandler(smtp.UnsubscribeConfig{Secret: unsubSecret, Suppressions: list,
		Now: func() time.Time { return time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(h)
	t.Cleanup(web.Close)
	tok, err := smtp.AccountUnsubscribeToken(unsubSecret, "acct-7", "ravi@example.com")
	if err != nil {
		t.Fatal(err)
	}
	v1, err := smtp.UnsubscribeToken(unsubSecret, "ravi@example.com")
	if err != nil {
		t.Fatal(err)
	}
	post := func(token string) int {
		var body strings.Builder
		body.WriteString("--b\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--b--\r\n")
		resp, err := http.Post(web.URL+"/?token="+url.QueryEscape(token), "multipart/form-data; boundary=b", strings.NewReader(body.String()))
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		return resp.StatusCode
	}
	if got := post(v1); got != http.StatusBadRequest {
		t.Errorf("version 1 token without DefaultAccount = %d; want 400", got)
	}
	if got := post(tok); got != http.StatusOK {
		t.Fatalf("version 2 token = %d; want 200", got)
	}
	e, ok, err := list.LookupSuppression(context.Background(), "acct-7", "email", "ravi@example.com")
	if err != nil || !ok || e.Reason != store.SuppressUnsubscribed || !e.At.Equal(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("entry = %+v, %v, %v", e, ok, err)
	}
	// PUT is not allowed.
	req, _ := http.NewRequest(http.MethodPut, web.URL+"/?token="+tok, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if readBody(t, resp); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT = %d; want 405", resp.StatusCode)
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
