package httpapi

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeEmailLists: whatever cc, bcc and attachments hold, the
// decoder answers a request or an InvalidArgument, and every string it
// passes on is valid UTF-8; an attachment never carries data by HTTP.
func FuzzDecodeEmailLists(f *testing.F) {
	for _, s := range []string{
		`{"to":"a@example.com","cc":["b@example.com"],"bcc":["c@example.com"],"attachments":[{"url":"https://x.example/a.pdf","file_name":"a.pdf","content_type":"application/pdf"}]}`,
		`{"cc":"b@example.com","bcc":[1,null,{}],"attachments":[1,"x",null,{"data":"AA=="}]}`,
		`{"cc":null,"bcc":[],"attachments":null}`,
		`{"attachments":[{"url":"\ud800","file_name":{"a":1},"URL":"x"}]}`,
		`{"cc":[` + strings.Repeat(`"a@b.c",`, 60) + `"z@b.c"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeEmail(body, "", Header{})
		checkDecodeErr(t, body, err)
		if err != nil {
			return
		}
		for _, s := range append(append([]string{}, r.Cc...), r.Bcc...) {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 address %q", s)
			}
		}
		for _, a := range r.Attachments {
			if len(a.Data) != 0 {
				t.Fatal("an attachment took data from HTTP")
			}
			if !utf8.ValidString(a.URL + a.FileName + a.ContentType) {
				t.Fatalf("invalid UTF-8 in %+v", a)
			}
		}
	})
}

func TestDecodeEmailLists(t *testing.T) {
	r, err := decodeEmail([]byte(`{"to":"a@example.com","subject":"s","message":"m","cc":["b@example.com"],"bcc":null,
		"attachments":[{"url":"https://x.example/a.pdf","content_type":"application/pdf"}]}`), "acct", Header{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cc) != 1 || r.Cc[0] != "b@example.com" || r.Bcc != nil || len(r.Attachments) != 1 ||
		r.Attachments[0].URL != "https://x.example/a.pdf" || r.Attachments[0].ContentType != "application/pdf" {
		t.Errorf("request %+v", r)
	}
	_, err = decodeEmail([]byte(`{"to":"a@example.com","attachments":[{"url":"https://x.example/a","zeta":1,"alpha":2}]}`), "acct", Header{})
	if err == nil || !strings.Contains(err.Error(), "attachments[0].alpha") || strings.Index(err.Error(), "alpha") > strings.Index(err.Error(), "zeta") {
		t.Errorf("unknown keys: %v", err)
	}
}
