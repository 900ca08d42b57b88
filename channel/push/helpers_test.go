package push_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/push"
	"github.com/notifykit/notify/provider/memprovider"
	"github.com/notifykit/notify/record"
)

// token is an FCM registration token's shape.
const token = "dGVzdC1kZXZpY2UtdG9rZW4:APA91bH-0123456789abcdefghijklmnopqrstuvwxyz_ABCDEF"

// subscription returns a Web Push subscription with fresh keys, as a
// browser gives one.
func subscription(t testing.TB, endpoint string) *push.Subscription {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return &push.Subscription{Endpoint: endpoint, Keys: push.Keys{
		P256dh: base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()),
		Auth:   base64.RawURLEncoding.EncodeToString(auth),
	}}
}

func testAccount() *notify.Account {
	return &notify.Account{ID: "acme", Name: "Acme", Currency: record.INR()}
}

// newChannel returns a channel with a capture provider of each kind.
func newChannel(t testing.TB) (*push.Channel, *memprovider.Provider, *memprovider.Provider) {
	t.Helper()
	wp, fcm := memprovider.New("webpush"), memprovider.New("fcm")
	ch, err := push.New(push.Config{WebPush: wp, FCM: fcm})
	if err != nil {
		t.Fatal(err)
	}
	return ch, wp, fcm
}

// fields returns the fields an InvalidArgument error names, in its
// order.
func fields(err error) string {
	var e *notify.Error
	if !errors.As(err, &e) || e.Code != notify.CodeInvalidArgument {
		return fmt.Sprintf("not an InvalidArgument *notify.Error: %v", err)
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return strings.Join(out, ",")
}
