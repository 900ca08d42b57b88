package msg91test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// Status is a delivery status of MSG91's reports.
type Status int

// The statuses MSG91's webhook documentation lists. Any other number may
// be reported too (Status(25) is another "rejected").
const (
	Delivered Status = 1
	Failed    Status = 2
	// NDNC: the number is on the do-not-call registry (promotional SMS
	// only).
	NDNC     Status = 9
	Rejected Status = 16
	Blocked  Status = 17
)

// Desc returns the word MSG91 reports the status with (desc).
func (st Status) Desc() string {
	switch st {
	case Delivered:
		return "DELIVERED"
	case Failed:
		return "FAILED"
	case NDNC:
		return "NDNC"
	case Rejected, 25:
		return "REJECTED"
	case Blocked:
		return "BLOCKED"
	}
	return "PENDING"
}

// failedReason is the text the fake gives a failure.
func (st Status) failedReason() string {
	switch st {
	case Delivered:
		return ""
	case Failed:
		return "Absent subscriber"
	case NDNC:
		return "Number is registered in NDNC"
	case Rejected, 25:
		return "Rejected by the operator"
	case Blocked:
		return "Blocked number"
	}
	return ""
}

// report is one number's report, as both webhook versions carry it.
type report struct {
	Date         string `json:"date"`
	Number       string `json:"number"`
	Status       string `json:"status"`
	Desc         string `json:"desc"`
	FailedReason string `json:"failedReason"`
	Credit       string `json:"credit"`
	ClientID     string `json:"clientid"`
}

// v2Request is the v2 webhook's report of one request.
type v2Request struct {
	SenderID     string   `json:"senderId"`
	RequestID    string   `json:"requestId"`
	Report       []report `json:"report"`
	UserID       string   `json:"userId"`
	CampaignName string   `json:"campaignName"`
}

// v3Report is the v3 webhook's report of one number.
type v3Report struct {
	report
	SenderID     string `json:"senderId"`
	RequestID    string `json:"requestId"`
	UserID       string `json:"userId"`
	CampaignName string `json:"campaignName"`
}

// userID is the fake account's MSG91 user ID, in its reports.
const userID = "271234"

// CallbackError is the error of a post the receiver answered with a
// status other than 2xx: its Name is "msg91test", StatusCode such as 401
// and Status such as "401 Unauthorized".
type CallbackError = vendorhttptest.CallbackError

// Report posts, now, to Config.ReportURL, MSG91's delivery report of the
// request the fake accepted under requestID, for numbers (each as sent,
// 919876543210, or its last ten digits; every number of the request when
// none is given), with status, and times from Config.Now in IST:
//
//   - V2: one form POST, data=[{"senderId", "requestId", "report":
//     [{"date": "2006-01-02 15:04:05", "number", "status": "1", "desc":
//     "DELIVERED", "failedReason", "credit", "clientid"}, ...], "userId",
//     "campaignName": "API"}];
//   - V3: one JSON POST per number, {"date", "number", "status", "desc",
//     "failedReason", "credit", "clientid", "senderId", "requestId",
//     "userId", "campaignName"}.
//
// It returns a *CallbackError when the receiver answered other than 2xx
// (stopping at the first such answer in V3), and an error when ReportURL
// is not set, the fake accepted no such request or number, or the post
// failed (never naming the URL, which holds the receiver's token).
func (s *Server) Report(ctx context.Context, requestID string, status Status, numbers ...string) error {
	if s.reportURL == "" {
		return errors.New("msg91test: Config.ReportURL is not set")
	}
	req, ok := s.sent.Find(func(sent Sent) bool { return sent.RequestID == requestID })
	if !ok {
		return fmt.Errorf("msg91test: no request was accepted under request ID %q", requestID)
	}
	sender, at := req.Sender, s.now().In(vendorhttp.IST).Format(time.DateTime)
	var mobiles []string
	for _, r := range req.Recipients {
		mobiles = append(mobiles, r.Mobile)
	}
	if len(numbers) > 0 {
		var chosen []string
		for _, n := range numbers {
			m := find(mobiles, n)
			if m == "" {
				return fmt.Errorf("msg91test: request %q has no recipient %s", requestID, n)
			}
			chosen = append(chosen, m)
		}
		mobiles = chosen
	}
	reports := make([]report, len(mobiles))
	for i, m := range mobiles {
		reports[i] = report{Date: at, Number: m, Status: strconv.Itoa(int(status)), Desc: status.Desc(),
			FailedReason: status.failedReason(), Credit: "1"}
	}
	if s.version == V3 {
		for _, r := range reports {
			body, err := json.Marshal(v3Report{report: r, SenderID: sender, RequestID: requestID, UserID: userID, CampaignName: "API"})
			if err != nil {
				return err
			}
			if err := s.post(ctx, "application/json", body); err != nil {
				return err
			}
		}
		return nil
	}
	data, err := json.Marshal([]v2Request{{SenderID: sender, RequestID: requestID, Report: reports, UserID: userID, CampaignName: "API"}})
	if err != nil {
		return err
	}
	return s.post(ctx, "application/x-www-form-urlencoded", []byte(url.Values{"data": {string(data)}}.Encode()))
}

// find returns the mobile of mobiles that is n, or ends with its last ten
// digits; "" when none is.
func find(mobiles []string, n string) string {
	if len(n) > 10 {
		n = n[len(n)-10:]
	}
	for _, m := range mobiles {
		if n != "" && strings.HasSuffix(m, n) {
			return m
		}
	}
	return ""
}

// post posts body to ReportURL.
func (s *Server) post(ctx context.Context, contentType string, body []byte) error {
	return vendorhttptest.Post(ctx, nil, "msg91test", vendorhttptest.Report{URL: s.reportURL, ContentType: contentType, Body: body})
}
