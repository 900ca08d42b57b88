package channeltest

import (
	"fmt"
	"testing"

	"github.com/notifykit/notify"
)

// testCodec round-trips each valid request through the codec, and reads
// the bytes of earlier versions.
func (k *kit) testCodec(t *testing.T) {
	c := k.h.Codec
	if c == nil {
		t.Skip("Harness.Codec is nil: the channel's requests cannot be queued")
	}
	for i, req := range k.h.Valid {
		what := fmt.Sprintf("Harness.Valid[%d]", i)
		fp := fingerprint(req)
		data, err := encode(c, req)
		if err != nil {
			t.Errorf("%s: EncodeRequest: %v", what, err)
			continue
		}
		// The bytes are not checked for secrets: a queued request may
		// hold a one-time code, which its record keeps until it is sent
		// (queued.Sender.Enqueue).
		if fingerprint(req) != fp {
			t.Errorf("%s: EncodeRequest changed the request (its Fingerprint)", what)
		}
		k.checkDecoded(t, what+", encoded and decoded", data, req)
	}
	for i, s := range k.h.Stored {
		k.checkDecoded(t, fmt.Sprintf("Harness.Stored[%d] (%s)", i, s.Name), s.Data, s.Request)
	}
}

// checkDecoded decodes data and checks that it is want, losslessly: the
// same kind, account, key and fingerprint, and the same envelope.
func (k *kit) checkDecoded(t *testing.T, what string, data []byte, want notify.Request) {
	t.Helper()
	got, err := decode(k.h.Codec, data)
	if err != nil {
		t.Errorf("%s: DecodeRequest: %v (notify.RequestCodec: Decode accepts what Encode wrote)", what, err)
		return
	}
	if got == nil {
		t.Errorf("%s: DecodeRequest returned neither a request nor an error", what)
		return
	}
	lossy := func(field string, got, want any) {
		t.Errorf("%s: the decoded request's %s is %q, not %q: the codec loses it (notify.RequestCodec)", what, field, got, want)
	}
	if got.Kind() != want.Kind() {
		lossy("Kind()", got.Kind(), want.Kind())
	}
	if got.AccountID() != want.AccountID() {
		lossy("AccountID()", got.AccountID(), want.AccountID())
	}
	if got.Key() != want.Key() {
		lossy("Key()", got.Key(), want.Key())
	}
	if fingerprint(got) != fingerprint(want) {
		t.Errorf("%s: the decoded request's Fingerprint differs: the codec loses or changes its content (notify.RequestCodec)", what)
	}
	wantEnv := k.mustPrepare(t, what+" (the original)", want)
	gotEnv, err := k.prepare(t.Context(), got)
	if err != nil {
		t.Errorf("%s: Prepare of the decoded request: %v", what, err)
		return
	}
	if diff := diffEnvelope(wantEnv, gotEnv); diff != "" {
		t.Errorf("%s: the decoded request prepares an Envelope that differs in %s (notify.RequestCodec: a worker sends what was queued)", what, diff)
	}
}

// encode calls EncodeRequest, turning a panic into an error.
func encode(c notify.RequestCodec, req notify.Request) (data []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			data, err = nil, fmt.Errorf("channeltest: EncodeRequest panicked: %v", p)
		}
	}()
	return c.EncodeRequest(req)
}

// decode calls DecodeRequest, turning a panic into an error.
func decode(c notify.RequestCodec, data []byte) (req notify.Request, err error) {
	defer func() {
		if p := recover(); p != nil {
			req, err = nil, fmt.Errorf("channeltest: DecodeRequest panicked: %v", p)
		}
	}()
	return c.DecodeRequest(data)
}
