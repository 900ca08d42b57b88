package httpapi_test

import (
	"strings"
	"testing"

	"github.com/notifykit/notify/channel/email"
	"github.com/notifykit/notify/internal/httpapienv"
)

// TestEmailCcBccAttachmentsHTTP: POST /email/send takes cc, bcc and
// attachments, prices each recipient, and refuses bad ones (a private
// attachment URL included) before any charge, naming the element.
func TestEmailCcBccAttachmentsHTTP(t *testing.T) {
	e := httpapienv.New(t)
	before := e.Minor(t, httpapienv.TestAccount)
	r := e.Post(t, "/api/v1/email/send", `{"to":"asha@example.com","subject":"Minutes","message":"Attached.",
		"cc":["ravi@example.com","meena@example.org"],"bcc":["audit@example.org"],
		"attachments":[{"url":"https://files.example.com/m.pdf","file_name":"minutes.pdf","content_type":"application/pdf"}]}`, nil)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	// notification mail: 8 paise a recipient in DefaultINR, 4 recipients.
	if after := e.Minor(t, httpapienv.TestAccount); before-after != 4*8 {
		t.Errorf("charged %d paise, want %d", before-after, 4*8)
	}
	sent := e.Mail.Sent()
	m := email.MessageOf(sent[len(sent)-1])
	if strings.Join(m.Cc, ",") != "ravi@example.com,meena@example.org" || strings.Join(m.Bcc, ",") != "audit@example.org" ||
		len(m.Attachments) != 1 || m.Attachments[0].URL != "https://files.example.com/m.pdf" || m.Attachments[0].FileName != "minutes.pdf" {
		t.Errorf("message %+v", m)
	}

	for _, c := range []struct {
		name, body string
		fields     []string
	}{
		{"private attachment URL", `"attachments":[{"url":"https://127.0.0.1/x.pdf"}]`, []string{"attachments[0].url"}},
		{"localhost attachment URL", `"attachments":[{"url":"https://files.example.com/a"},{"url":"https://localhost/x.pdf"}]`, []string{"attachments[1].url"}},
		{"http attachment URL", `"attachments":[{"url":"http://files.example.com/x.pdf"}]`, []string{"attachments[0].url"}},
		{"attachment data by HTTP", `"attachments":[{"url":"https://files.example.com/a","data":"JVBERi0="}]`, []string{"attachments[0].data"}},
		{"attachment not an object", `"attachments":["https://files.example.com/a"]`, []string{"attachments[0]"}},
		{"attachments not an array", `"attachments":{"url":"https://files.example.com/a"}`, []string{"attachments"}},
		{"attachment name injection", `"attachments":[{"url":"https://files.example.com/a","file_name":"a\r\nX: y"}]`, []string{"attachments[0].file_name"}},
		{"attachment url number", `"attachments":[{"url":5}]`, []string{"attachments[0].url"}},
		{"cc injection", `"cc":["ravi@example.com","b@example.com\r\nBcc: x@evil.example"]`, []string{"cc[1]"}},
		{"cc invisible", `"cc":["b@exa\u200bmple.com"]`, []string{"cc[0]"}},
		{"cc a string", `"cc":"ravi@example.com"`, []string{"cc"}},
		{"bcc number", `"bcc":[5]`, []string{"bcc[0]"}},
		{"bcc repeats to", `"bcc":["ASHA@example.com"]`, []string{"bcc[0]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, n := e.Minor(t, httpapienv.TestAccount), e.Sent()
			r := e.Post(t, "/api/v1/email/send", `{"to":"asha@example.com","subject":"s","message":"m",`+c.body+`}`, nil)
			httpapienv.WantError(t, r, 400, "invalid_argument")
			for _, f := range c.fields {
				if _, ok := r.ErrFields()[f]; !ok {
					t.Errorf("field %q not named: %s", f, r.Raw)
				}
			}
			if e.Minor(t, httpapienv.TestAccount) != before || e.Sent() != n {
				t.Error("charged or sent")
			}
			if strings.Contains(r.Raw, "evil.example") {
				t.Errorf("the answer echoes the value: %s", r.Raw)
			}
		})
	}
}
