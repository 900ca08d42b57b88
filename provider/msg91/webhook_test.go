package msg91_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/channel/sms"
	"github.com/notifykit/notify/notifytest"
	"github.com/notifykit/notify/provider/msg91"
	"github.com/notifykit/notify/provider/msg91/msg91test"
	"github.com/notifykit/notify/provider/providertest"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
	"github.com/notifykit/notify/record"
)

const hookToken = "dlr-token-5c0e9a1f7b3d"

// vendorClock is the fake's clock: its reports say 14:00:05 IST, 08:30:05
// UTC.
var vendorClock = time.Date(2026, 11, 25, 8, 30, 5, 0, time.UTC)

// loop is the whole loop over real HTTP: a Notifier sending SMS through
// the provider to the fake MSG91, whose delivery reports reach a Webhook
// on a server of its own.
type loop struct {
	*notifytest.Kit // its account is "acme", on the SMS channel of the provider
	vendor          *msg91test.Server
	hook            *msg91.Webhook
	base            string // the receiver's root
}

func newLoop(t *testing.T, version msg91test.Version) *loop {
	t.Helper()
	mux := http.NewServeMux()
	receiver := httptest.NewServer(mux)
	t.Cleanup(receiver.Close)
	l := &loop{base: receiver.URL}
	l.vendor = msg91test.NewServer(msg91test.Config{AuthKey: testKey, Templates: templates,
		ReportURL: receiver.URL + "/webhooks/msg91/" + hookToken, ReportVersion: version,
		Now: func() time.Time { return vendorClock }})
	t.Cleanup(l.vendor.Close)
	ch, err := sms.New(sms.Config{Provider: newProvider(t, l.vendor, testKey)})
	if err != nil {
		t.Fatal(err)
	}
	set := sms.Settings{SenderID: "ACMECO", DLTTemplates: []sms.DLTTemplate{{ID: dltID, EntityID: entityID, Content: tplContent, MessageID: tplID}}}
	l.Kit = notifytest.New(t, notifytest.WithAccount(notify.Account{ID: "acme", Currency: record.INR(), Settings: set.Map()}),
		notifytest.WithNotifierOptions(notify.WithChannel(ch)))
	l.hook, err = msg91.NewWebhook(msg91.WebhookConfig{Reporter: l.Notifier, Token: hookToken})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("POST /webhooks/msg91/{token}", l.hook)
	// Mounted without a wildcard, the token is the path's last segment.
	mux.Handle("/bare/", l.hook)
	return l
}

// dltRequest is the account's DLT template, filled in.
func dltRequest(to string) sms.Request {
	return sms.Request{Account: "acme", To: to, Route: sms.RouteDLT, DLTTemplateID: dltID,
		Message: "Your OTP for login is " + testOTP + ". - ACMECO"}
}

func (l *loop) send(t *testing.T, to string) *notify.Receipt {
	t.Helper()
	req := dltRequest(to)
	r, err := l.Notifier.Send(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != record.StateSent || r.ProviderMessageID == "" {
		t.Fatalf("receipt %+v", r)
	}
	return r
}

// TestWebhookLoop: a DLT message goes out through MSG91, and its report
// comes back, in each webhook version, and moves the record at MSG91's
// time; a repeat changes nothing.
func TestWebhookLoop(t *testing.T) {
	for _, version := range []msg91test.Version{msg91test.V2, msg91test.V3} {
		t.Run(string(version), func(t *testing.T) {
			l := newLoop(t, version)
			rc := l.send(t, "9876543210")
			sent := l.vendor.Sent()
			if len(sent) != 1 || sent[0].RequestID != rc.ProviderMessageID || sent[0].TemplateID != tplID ||
				sent[0].Recipients[0].Vars["VAR1"] != "login" {
				t.Fatalf("MSG91 got %+v", sent)
			}
			ctx := context.Background()
			for range 2 {
				if err := l.vendor.Report(ctx, rc.ProviderMessageID, msg91test.Delivered); err != nil {
					t.Fatal(err)
				}
			}
			m := l.Message(t, rc.MessageID)
			if m.State != record.StateDelivered || !m.History[len(m.History)-1].At.Equal(vendorClock) {
				t.Errorf("record %s, history %+v", m.State, m.History)
			}
			if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: 2}) {
				t.Errorf("stats %+v", s)
			}

			failed := l.send(t, "+919876543211")
			if err := l.vendor.Report(ctx, failed.ProviderMessageID, msg91test.Rejected); err != nil {
				t.Fatal(err)
			}
			m = l.Message(t, failed.MessageID)
			if m.State != record.StateFailed || m.VendorCode != "16" || !strings.Contains(m.Error, "Rejected by the operator") {
				t.Errorf("record %s, vendor code %q, error %q", m.State, m.VendorCode, m.Error)
			}
		})
	}
}

// TestWebhookBulk: one request to several numbers; the reports tell them
// apart by number, whether one POST names one number or all.
func TestWebhookBulk(t *testing.T) {
	l := newLoop(t, msg91test.V2)
	to := []string{"9876500000", "9876500001", "9876500002"}
	rc, err := l.Notifier.Send(context.Background(), &sms.BulkRequest{Message: dltRequest(""), To: to})
	if err != nil {
		t.Fatal(err)
	}
	if n := l.vendor.Requests(); n != 1 || len(rc.Legs) != 3 {
		t.Fatalf("%d requests to MSG91, receipt %+v", n, rc)
	}
	id := l.vendor.Sent()[0].RequestID
	ctx := context.Background()
	if err := l.vendor.Report(ctx, id, msg91test.Delivered, "9876500000"); err != nil {
		t.Fatal(err)
	}
	if err := l.vendor.Report(ctx, id, msg91test.Blocked, "919876500002"); err != nil {
		t.Fatal(err)
	}
	want := []record.State{record.StateDelivered, record.StateSent, record.StateFailed}
	for i, leg := range rc.Legs {
		if m := l.Message(t, leg.MessageID); m.State != want[i] {
			t.Errorf("recipient %d: %s, want %s", i, m.State, want[i])
		}
	}
	if m := l.Message(t, rc.Legs[2].MessageID); m.VendorCode != "17" || !strings.Contains(m.Error, "msg91: Blocked number") {
		t.Errorf("blocked: %q %q", m.VendorCode, m.Error)
	}
	// One POST with every number: the second is delivered now, and the
	// others keep what they had.
	if err := l.vendor.Report(ctx, id, msg91test.Delivered); err != nil {
		t.Fatal(err)
	}
	want[1] = record.StateDelivered
	for i, leg := range rc.Legs {
		if m := l.Message(t, leg.MessageID); m.State != want[i] {
			t.Errorf("after the batch: recipient %d: %s, want %s", i, m.State, want[i])
		}
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: 5}) {
		t.Errorf("stats %+v", s)
	}
}

// post posts body to the loop's receiver at path.
func (l *loop) post(t *testing.T, path, contentType, body string) int {
	t.Helper()
	resp, err := http.Post(l.base+path, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestWebhookAnswers: what the receiver answers MSG91, and counts.
func TestWebhookAnswers(t *testing.T) {
	l := newLoop(t, msg91test.V3)
	rc := l.send(t, "9876543210")
	report := func(id string) string {
		return fmt.Sprintf(`{"requestId":%q,"number":"919876543210","status":"1","desc":"DELIVERED","date":"2026-11-25 14:00:05"}`, id)
	}
	tests := []struct {
		name, path, contentType, body string
		want                          int
	}{
		{"a report", "/webhooks/msg91/" + hookToken, "application/json", report(rc.ProviderMessageID), 200},
		{"mounted bare", "/bare/" + hookToken, "application/json", report(rc.ProviderMessageID), 200},
		{"an unknown request ID", "/webhooks/msg91/" + hookToken, "application/json", report("0123456789abcdef01234567"), 200},
		{"a wrong token", "/webhooks/msg91/not-the-token-000000", "application/json", report(rc.ProviderMessageID), 401},
		{"no token", "/bare/", "application/json", report(rc.ProviderMessageID), 401},
		{"a report without a request ID", "/webhooks/msg91/" + hookToken, "application/json", `{"number":"919876543210","status":"1"}`, 400},
		{"a status that says nothing final", "/webhooks/msg91/" + hookToken, "application/json",
			fmt.Sprintf(`{"requestId":%q,"number":"919876543210","status":"8"}`, rc.ProviderMessageID), 200},
	}
	for _, tt := range tests {
		if got := l.post(t, tt.path, tt.contentType, tt.body); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	if s := l.hook.Stats(); s != (notify.WebhookStats{Reports: 2, Unmatched: 1, Ignored: 1, Refused: 2, Malformed: 1}) {
		t.Errorf("stats %+v", s)
	}
	if m := l.Message(t, rc.MessageID); m.State != record.StateDelivered {
		t.Errorf("record %s", m.State)
	}
	req, _ := http.NewRequest(http.MethodGet, l.base+"/webhooks/msg91/"+hookToken, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// serve posts body to h with a good token and returns the answer's status.
func serve(h http.Handler, contentType, body string) int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/msg91/"+hookToken, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestWebhookFormats: each documented shape of a report, read into
// reports.
func TestWebhookFormats(t *testing.T) {
	const id = "346a6b5c4d3e2f1a0b9c8d7e"
	at := vendorClock
	delivered := func(number string) notify.DeliveryReport {
		return notify.DeliveryReport{Provider: "msg91-in", ProviderMessageID: id, To: number, State: record.StateDelivered, At: at}
	}
	failed := func(number, code, text string) notify.DeliveryReport {
		return notify.DeliveryReport{Provider: "msg91-in", ProviderMessageID: id, To: number, State: record.StateFailed, At: at,
			VendorCode: code, Error: text}
	}
	v2 := `[{"senderId":"ACMECO","requestId":"` + id + `","report":[` +
		`{"date":"2026-11-25 14:00:05","amount":"0.01","clientid":"","INMSID":"0","CRQID":"0","ctCode":"900","number":"919876543210","credit":"1","status":"1","desc":"DELIVERED","failedReason":""},` +
		`{"date":"2026-11-25 14:00:05","number":"919876543211","credit":"1","status":"2","desc":"FAILED","failedReason":"Absent subscriber"}` +
		`],"userId":"271234","campaignName":"API"}]`
	v2Want := []notify.DeliveryReport{delivered("919876543210"), failed("919876543211", "2", "msg91: Absent subscriber")}
	tests := []struct {
		name, contentType, body string
		want                    []notify.DeliveryReport
	}{
		{"v2: a form whose data holds the JSON", "application/x-www-form-urlencoded", url.Values{"data": {v2}}.Encode(), v2Want},
		{"v2 as its help page shows it: data holding a JSON string", "application/json", fmt.Sprintf(`{"data":%q}`, v2), v2Want},
		{"v2's list itself", "application/json", v2, v2Want},
		{"v2's data holding the list itself", "application/x-www-form-urlencoded", `{"data":` + v2 + `}`, v2Want},
		{"v3", "application/json", `{"date":"2026-11-25 14:00:05","number":"919876543210","senderId":"ACMECO","amount":"0.01",` +
			`"requestId":"` + id + `","INMSID":"0","CRQID":"0","credit":"1","userId":"271234","campaignName":"API","status":"1","desc":"DELIVERED"}`,
			[]notify.DeliveryReport{delivered("919876543210")}},
		{"v3 reports in a list", "application/json", `[{"requestId":"` + id + `","number":"919876543210","status":1,"date":"2026-11-25 14:00:05"},` +
			`{"requestId":"` + id + `","number":"919876543211","status":9,"desc":"NDNC","date":"2026-11-25 14:00:05"}]`,
			[]notify.DeliveryReport{delivered("919876543210"), failed("919876543211", "9", "msg91: the number is on the NDNC (do-not-call) registry")}},
		{"Webhook (New), statuses in words", "application/json", `[{"requestId":"` + id + `","telNum":"919876543210","status":"Delivered",` +
			`"deliveryTime":"2026-11-25 14:00:05"},{"requestId":"` + id + `","telNum":"919876543211","status":"Failed","failureReason":"Handset busy",` +
			`"deliveryTime":"2026-11-25T14:00:05"}]`,
			[]notify.DeliveryReport{delivered("919876543210"), failed("919876543211", "FAILED", "msg91: Handset busy")}},
		{"a status given only in desc, a Unix time", "application/json", `{"requestId":"` + id + `","number":"919876543210","desc":"delivered","ts":` +
			fmt.Sprint(at.Unix()) + `}`, []notify.DeliveryReport{delivered("919876543210")}},
		{"a rejection whose desc says more", "application/json", `{"requestId":"` + id + `","number":"919876543210","status":"25",` +
			`"desc":"DLT template mismatch","date":"2026-11-25 14:00:05"}`,
			[]notify.DeliveryReport{failed("919876543210", "25", "msg91: the SMS was rejected: DLT template mismatch")}},
		{"a form of one report", "application/x-www-form-urlencoded",
			url.Values{"requestId": {id}, "number": {"919876543210"}, "status": {"1"}, "date": {"2026-11-25 14:00:05"}}.Encode(),
			[]notify.DeliveryReport{delivered("919876543210")}},
		{"field names in any case", "application/json", `{"REQUESTID":"` + id + `","Number":"919876543210","Status":"1","DATE":"2026-11-25 14:00:05"}`,
			[]notify.DeliveryReport{delivered("919876543210")}},
		{"an intermediate status is ignored", "application/json", `[{"requestId":"` + id + `","number":"919876543210","status":"8"},` +
			`{"requestId":"` + id + `","number":"919876543211","status":"PENDING"}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &providertest.Reports{}
			h, err := msg91.NewWebhook(msg91.WebhookConfig{Reporter: rep, Token: hookToken, Provider: "msg91-in"})
			if err != nil {
				t.Fatal(err)
			}
			if code := serve(h, tt.contentType, tt.body); code != http.StatusOK {
				t.Fatalf("answered %d", code)
			}
			got := rep.Got()
			if len(got) != len(tt.want) {
				t.Fatalf("got %d reports, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if !got[i].At.Equal(tt.want[i].At) {
					t.Errorf("report %d at %v, want %v", i, got[i].At, tt.want[i].At)
				}
				got[i].At = tt.want[i].At
				if !reflect.DeepEqual(got[i], tt.want[i]) {
					t.Errorf("report %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
			wantIgnored := uint64(0)
			if tt.want == nil {
				wantIgnored = 2
			}
			if s := h.Stats(); s.Ignored != wantIgnored || s.Reports != uint64(len(tt.want)) {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// TestWebhookMalformed: a body that cannot be read, or a report without a
// request ID, is 400 and reports nothing of the POST.
func TestWebhookMalformed(t *testing.T) {
	const id = "346a6b5c4d3e2f1a0b9c8d7e"
	tests := []struct{ name, contentType, body string }{
		{"empty", "application/json", ""},
		{"not JSON", "application/json", `{"requestId":`},
		{"JSON of two values", "application/json", `{"requestId":"a","status":"1"} {}`},
		{"JSON that is not an object", "application/json", `[1, 2]`},
		{"a JSON string", "application/json", `"delivered"`},
		{"XML", "application/xml", `<report><requestId>` + id + `</requestId></report>`},
		{"a form whose data is not JSON", "application/x-www-form-urlencoded", "data=%7Bnot+json"},
		{"no request ID", "application/json", `{"number":"919876543210","status":"1"}`},
		{"one of two without a request ID", "application/json", `[{"requestId":"` + id + `","status":"1"},{"status":"1"}]`},
		{"webhook v4 (CleverTap), which has none", "application/json",
			`[{"data":[{"meta":"0","INMSID":"0","description":"DELIVERED","ts":1726729500}],"event":"delivered"}]`},
		{"wrapped too deeply", "application/json", `{"data":{"data":{"data":{"data":{"data":{"data":[{"requestId":"x","status":"1"}]}}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &providertest.Reports{}
			h, err := msg91.NewWebhook(msg91.WebhookConfig{Reporter: rep, Token: hookToken})
			if err != nil {
				t.Fatal(err)
			}
			if code := serve(h, tt.contentType, tt.body); code != http.StatusBadRequest {
				t.Errorf("answered %d, want 400", code)
			}
			if len(rep.Got()) != 0 || h.Stats() != (notify.WebhookStats{Malformed: 1}) {
				t.Errorf("reports %+v, stats %+v", rep.Got(), h.Stats())
			}
		})
	}
}

// TestWebhookReporterAnswers: a report the Notifier cannot apply now is
// 503, so that MSG91 posts again; one of no message is 200, as is one the
// Notifier finds wrong.
func TestWebhookReporterAnswers(t *testing.T) {
	body := `{"requestId":"346a6b5c4d3e2f1a0b9c8d7e","number":"919876543210","status":"1"}`
	for _, tt := range []struct {
		err   error
		want  int
		stats notify.WebhookStats
	}{
		{notify.Errorf(notify.CodeUnavailable, "message still being sent"), http.StatusServiceUnavailable, notify.WebhookStats{Failed: 1}},
		{errors.New("the store is down"), http.StatusServiceUnavailable, notify.WebhookStats{Failed: 1}},
		{notify.Errorf(notify.CodeNotFound, "no message"), http.StatusOK, notify.WebhookStats{Unmatched: 1}},
		{notify.Errorf(notify.CodeInvalidArgument, "names several"), http.StatusOK, notify.WebhookStats{Ignored: 1}},
		{nil, http.StatusOK, notify.WebhookStats{Reports: 1}},
	} {
		rep := &providertest.Reports{}
		rep.Fail(tt.err)
		h, err := msg91.NewWebhook(msg91.WebhookConfig{Reporter: rep, Token: hookToken})
		if err != nil {
			t.Fatal(err)
		}
		if code := serve(h, "application/json", body); code != tt.want || h.Stats() != tt.stats {
			t.Errorf("%v: %d, stats %+v; want %d, %+v", tt.err, code, h.Stats(), tt.want, tt.stats)
		}
	}
}

// TestWebhookRefusesUnread: a wrong token, and a body declared too long,
// are refused before a byte of the body is read.
func TestWebhookRefusesUnread(t *testing.T) {
	rep := &providertest.Reports{}
	h, err := msg91.NewWebhook(msg91.WebhookConfig{Reporter: rep, Token: hookToken, MaxBody: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		length     int64
		want       int
	}{
		{"a wrong token", "/webhooks/msg91/" + strings.Repeat("x", len(hookToken)), 512, http.StatusUnauthorized},
		{"a token one byte short", "/webhooks/msg91/" + hookToken[:len(hookToken)-1], 512, http.StatusUnauthorized},
		{"no token", "/webhooks/msg91/", 512, http.StatusUnauthorized},
		{"a body over MaxBody", "/webhooks/msg91/" + hookToken, 2 << 10, http.StatusRequestEntityTooLarge},
	} {
		body := vendorhttptest.NewBody(int(c.length))
		req := httptest.NewRequest(http.MethodPost, c.path, body)
		req.ContentLength = c.length
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.want || body.BytesRead() != 0 {
			t.Errorf("%s: %d with %d bytes of the body read; want %d with none", c.name, w.Code, body.BytesRead(), c.want)
		}
		if strings.Contains(w.Body.String(), hookToken) {
			t.Errorf("%s: the answer holds the token", c.name)
		}
	}
	if s := h.Stats(); s != (notify.WebhookStats{Refused: 3, Malformed: 1}) || len(rep.Got()) != 0 {
		t.Errorf("stats %+v, reports %+v", s, rep.Got())
	}
}

func TestNewWebhook(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  msg91.WebhookConfig
		says string
	}{
		{"no reporter", msg91.WebhookConfig{Token: hookToken}, "Reporter"},
		{"a short token", msg91.WebhookConfig{Reporter: &providertest.Reports{}, Token: "short-token"}, "16 bytes"},
		{"a token with a slash", msg91.WebhookConfig{Reporter: &providertest.Reports{}, Token: "dlr-token/5c0e9a1f7b3d"}, "'/'"},
		{"a token with a space", msg91.WebhookConfig{Reporter: &providertest.Reports{}, Token: "dlr-token 5c0e9a1f7b3d"}, "spaces"},
	} {
		_, err := msg91.NewWebhook(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.says) || (c.cfg.Token != "" && strings.Contains(err.Error(), c.cfg.Token)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
