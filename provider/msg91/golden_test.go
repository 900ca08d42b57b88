package msg91_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/internal/golden"
	"github.com/notifykit/notify/provider/msg91"
)

// TestRequestsGolden captures the request of each route and compares its
// body with testdata/requests/<name>.json; each case names MSG91's page
// that documents its shape. Every request is POST /api/v5/flow with the
// authkey header and a JSON body.
func TestRequestsGolden(t *testing.T) {
	var (
		body   []byte
		method string
		path   string
		header http.Header
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		method, path, header = r.Method, r.URL.Path, r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"message":"5762846b4f8d285d378b4567","type":"success"}`)
	}))
	defer srv.Close()
	p, err := msg91.New(msg91.Config{BaseURL: srv.URL, AuthKey: testKey, HTTPClient: srv.Client(), OTPTemplateID: otpTplID})
	if err != nil {
		t.Fatal(err)
	}
	named, err := msg91.New(msg91.Config{BaseURL: srv.URL + "/api/v5/flow/", AuthKey: testKey, HTTPClient: srv.Client(),
		ShortURL: true, TemplateVars: map[string][]string{tplID: {"purpose", "otp"}}})
	if err != nil {
		t.Fatal(err)
	}
	bare := dltEnvelope(0)
	bare.To = "9876500000"
	noValues := dltEnvelope(0)
	sms.MessageOf(noValues).DLTValues = nil
	const flowDoc = "control.msg91.com/apidoc/textsms/send-sms-flow.php"
	tests := []struct {
		name, source string
		p            *msg91.Provider
		envs         []*notify.Envelope
	}{
		{"dlt", flowDoc + " (recipients with mobiles and the variables VAR1, VAR2; template_id and short_url as docs.msg91.com/sms/send-sms names them)",
			p, []*notify.Envelope{dltEnvelope(0)}},
		{"dlt-no-values", flowDoc + " (a template without variables: mobiles alone)", p, []*notify.Envelope{noValues}},
		{"dlt-named-variables", flowDoc + ` (variables named as in the template, "name": "Drake"; short_url "1")`,
			named, []*notify.Envelope{dltEnvelope(0)}},
		{"otp", flowDoc + " (the OTP template's ##OTP## variable)", p, []*notify.Envelope{otpEnvelope(0)}},
		{"national-number", flowDoc + " (mobiles in international format: 919898989898)", p, []*notify.Envelope{bare}},
		{"batch", flowDoc + " (several recipients in one request)", p, []*notify.Envelope{dltEnvelope(0), dltEnvelope(1), dltEnvelope(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.envs) == 1 {
				_, err = tt.p.Send(t.Context(), tt.envs[0])
			} else {
				_, err = tt.p.SendBatch(t.Context(), tt.envs)
			}
			if err != nil {
				t.Fatal(err)
			}
			if method != http.MethodPost || path != "/api/v5/flow" || header.Get("authkey") != testKey ||
				header.Get("Content-Type") != "application/json" || header.Get("Accept") != "application/json" {
				t.Errorf("%s %s with headers %v", method, path, header)
			}
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(v, "", "  ")
			got = append(got, '\n')
			if !golden.Check(t, filepath.Join("testdata", "requests", tt.name+".json"), got) {
				t.Logf("shape: %s", tt.source)
			}
		})
	}
}
