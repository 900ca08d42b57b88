package vendorhttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/notifykit/notify"
	"github.com/notifykit/notify/record"
)

// shape is a vendor that wraps reports in data or report lists, with a
// status of its own telling a report from a wrapper.
var shape = EntryShape{IDFields: []string{"request_id", "msgid"}, Wrappers: []string{"data", "report"},
	StatusFields: []string{"status"}, MaxDepth: 2, XMLHint: "choose JSON in the panel"}

func TestReadEntries(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		want                    []Entry
		err                     string // a part of the error; "" for none
	}{
		{"one object", "application/json", `{"request_id":"r1","Status":"DELIVRD","code":7}`,
			[]Entry{{"request_id": "r1", "status": "DELIVRD", "code": "7"}}, ""},
		{"a list", "", `[{"msgid":"a"},{"msgid":"b"}]`, []Entry{{"msgid": "a"}, {"msgid": "b"}}, ""},
		{"a wrapper passes its ID down", "application/json", `{"request_id":"r1","report":[{"status":"1","to":"98"},{"request_id":"r2"}]}`,
			[]Entry{{"request_id": "r1", "status": "1", "to": "98"}, {"request_id": "r2"}}, ""},
		{"a wrapper holding JSON in a string", "text/plain", `{"data":"[{\"request_id\":\"r1\"}]"}`,
			[]Entry{{"request_id": "r1"}}, ""},
		{"an object with a status is a report, not a wrapper", "", `{"request_id":"r1","status":"ok","data":{"x":"y"}}`,
			[]Entry{{"request_id": "r1", "status": "ok"}}, ""},
		{"a lower-case name wins", "", `{"Request_ID":"upper","request_id":"lower"}`, []Entry{{"request_id": "lower"}}, ""},
		{"JSON sent as a form", "application/x-www-form-urlencoded", `{"request_id":"r1"}`, []Entry{{"request_id": "r1"}}, ""},
		{"a form", "application/x-www-form-urlencoded", `request_id=r1&status=+ok+`, []Entry{{"request_id": "r1", "status": "ok"}}, ""},
		{"a form wrapping JSON", "", "data=" + url.QueryEscape(`[{"request_id":"r1"}]`), []Entry{{"request_id": "r1"}}, ""},
		{"wrapped too deeply", "", `{"data":{"data":{"data":{"request_id":"r1"}}}}`, nil, "too deeply"},
		{"a wrapped string that is not JSON", "", `{"data":"[oops"}`, nil, "not JSON"},
		{"a list of strings", "", `["r1"]`, nil, "must be a JSON object"},
		{"a bare number", "application/json", `7`, nil, "not a JSON object or array"},
		{"two values", "", `{} {}`, nil, "more than one JSON value"},
		{"XML", "application/xml", `<r/>`, nil, "XML reports are not read: choose JSON in the panel"},
		{"nothing", "", "  \n", nil, "an empty body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := shape.ReadEntries(c.contentType, []byte(c.body))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ReadEntries = %v, %v; want an error with %q", got, err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ReadEntries = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestEntryGetAndTime(t *testing.T) {
	e := Entry{"a": "", "b": "2", "when": "2026-12-07 10:00:00", "bad": "soon"}
	if got := e.Get("a", "b"); got != "2" {
		t.Errorf("Get skips an empty value: got %q, want 2", got)
	}
	if got := e.Get("x"); got != "" {
		t.Errorf("Get(x) = %q, want empty", got)
	}
	want := time.Date(2026, 12, 7, 4, 30, 0, 0, time.UTC)
	if got := e.Time(IST, "bad", "when"); !got.Equal(want) {
		t.Errorf("Time = %v, want %v (the first readable, IST)", got, want)
	}
	if got := e.Time(IST, "bad"); !got.IsZero() {
		t.Errorf("Time of an unreadable value = %v, want zero", got)
	}
}

func TestDeliverEntriesCountsWhatSaysNothingFinal(t *testing.T) {
	var got []string
	rep := reporterFunc(func(_ context.Context, r *notify.DeliveryReport) (*notify.ReportResult, error) {
		got = append(got, r.ProviderMessageID)
		return &notify.ReportResult{}, nil
	})
	var c Receiver
	w := httptest.NewRecorder()
	entries := []Entry{{"id": "a", "status": "done"}, {"id": "b", "status": "pending"}, {"id": "c", "status": "done"}}
	c.DeliverEntries(context.Background(), w, rep, entries, func(e Entry) *notify.DeliveryReport {
		if e["status"] != "done" {
			return nil
		}
		return &notify.DeliveryReport{Provider: "p", ProviderMessageID: e["id"], State: record.StateDelivered}
	})
	if w.Code != http.StatusOK || !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("answered %d, reported %v; want 200 and [a c]", w.Code, got)
	}
	if st := c.Stats(); st.Reports != 2 || st.Ignored != 1 {
		t.Fatalf("Stats = %+v, want 2 reports and 1 ignored", st)
	}
}

func TestCheckSecretAndBaseURL(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"", "p: Config.Key is required"},
		{"abc\n", "p: Config.Key must not contain control characters such as line breaks"},
		{"abc", ""},
	} {
		err := CheckSecret("p", "Key", c.value)
		if (err == nil) != (c.want == "") || err != nil && err.Error() != c.want {
			t.Errorf("CheckSecret(%q) = %v, want %q", c.value, err, c.want)
		}
	}
	if got, err := CheckBaseURL("p", "", "https://api.example"); got != "https://api.example" || err != nil {
		t.Errorf("CheckBaseURL of nothing = %q, %v; want the default", got, err)
	}
	for _, bad := range []string{"ftp://x", "https://user:pw@x", "https://x/?q=1", "https://x/#f", "x"} {
		if _, err := CheckBaseURL("p", bad, "https://d"); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("CheckBaseURL(%q) = %v, want an error that does not repeat the URL", bad, err)
		}
	}
}

func TestCleanText(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"  a\r\nb\tc  ", 0, "a b c"},
		{"bad \xff byte", 0, "bad byte"},
		{"héllo", 2, "h..."}, // never half of é
		{strings.Repeat("x", 301), 0, strings.Repeat("x", 300) + "..."},
	} {
		if got := CleanText(c.in, c.limit); got != c.want {
			t.Errorf("CleanText(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}

func TestConnClosesOnlyItsOwnClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	defer srv.Close()
	given := NewConn(srv.Client(), time.Second)
	if given.Client() != srv.Client() {
		t.Fatal("NewConn did not keep the given client")
	}
	own := NewConn(nil, 3*time.Second)
	if own.Client().Timeout != 3*time.Second || own.Client() == http.DefaultClient {
		t.Fatalf("NewConn(nil) made %+v, want NewClient's with the timeout", own.Client())
	}
	// No shorter limit than the timeout: a vendor slow to answer a send it
	// took is waited for, not made an unknown outcome early.
	if tr, ok := own.Client().Transport.(*http.Transport); !ok || tr.ResponseHeaderTimeout != 0 {
		t.Fatalf("NewClient's transport %T limits the wait for an answer below its timeout", own.Client().Transport)
	}
	for _, c := range []*Conn{given, own} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		ans, err := c.Do(context.Background(), Request{Name: "p", Method: http.MethodGet, URL: srv.URL})
		if err != nil || ans.Status != http.StatusOK {
			t.Fatalf("Do after Close = %v, %v; want 200 (Close only drops idle connections)", ans, err)
		}
	}
}
