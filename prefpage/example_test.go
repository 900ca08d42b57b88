package prefpage_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/chat"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/memstore"
	"github.com/notifykit/notify/prefpage"
	"github.com/notifykit/notify/provider/memprovider"
)

// A host app serves the page where its links point and puts a link in
// its messages: the token shows neither the account nor the number.
func ExamplePage_Token() {
	ledger := memstore.NewLedger(nil)
	smsCh, _ := sms.New(sms.Config{Provider: memprovider.New("sms")})
	chatCh, _ := chat.New(chat.Config{QR: memprovider.New("qr")})
	n, err := notify.New(memstore.NewAccounts(), ledger, notify.WithChannel(smsCh), notify.WithChannel(chatCh))
	if err != nil {
		fmt.Println(err)
		return
	}
	page, err := prefpage.New(prefpage.Config{
		Secret:      []byte("a secret of at least 32 random bytes, kept out of the database"),
		Preferences: ledger, // the ledger the Notifier reads
		Recipients:  n,      // each channel's form of the recipient
		Title:       "Acme",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/preferences", page)
	token, err := page.Token(prefpage.Grant{Account: "acme", To: "+919876543210",
		Channels: []notify.Kind{sms.Kind, chat.Kind}, Expires: time.Now().Add(30 * 24 * time.Hour)})
	link := "https://acme.example/preferences?t=" + token
	fmt.Println(err, len(link) > 60)
	// Output: <nil> true
}
