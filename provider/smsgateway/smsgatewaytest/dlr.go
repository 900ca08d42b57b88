package smsgatewaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/notifykit/notify/provider/vendorhttp"
	"github.com/notifykit/notify/provider/vendorhttp/vendorhttptest"
)

// DLR is one delivery report, as the fake posts it: the format
// smsgateway.Webhook documents.
type DLR struct {
	RequestID string `json:"request_id"`
	Number    string `json:"number"`
	// Status is DELIVERED, UNDELIVERED, FAILED, EXPIRED, DND, ...
	Status      string `json:"status"`
	ErrorCode   string `json:"error_code,omitempty"`
	Description string `json:"description,omitempty"`
	// DeliveredAt is "2006-01-02 15:04:05" in IST.
	DeliveredAt string `json:"delivered_at,omitempty"`
}

// Report posts delivery reports of an accepted message to callback (the
// receiver's URL, token included), one per number of it, with status
// (and, for a failure, code and description), as one JSON array, as
// PostDLR does: a *CallbackError when the receiver answered other than
// 2xx. It is an error too when the fake accepted no message under
// requestID. Nothing is posted unless a test calls it, so a test decides
// when reports arrive.
func (s *Server) Report(ctx context.Context, callback, requestID, status, code, description string) error {
	s.mu.Lock()
	var numbers []string
	for _, m := range s.sent {
		if m.RequestID == requestID {
			numbers = m.Numbers
		}
	}
	s.mu.Unlock()
	if numbers == nil {
		return fmt.Errorf("smsgatewaytest: no message was accepted under request ID %q", requestID)
	}
	at := time.Now().In(vendorhttp.IST).Format(time.DateTime)
	dlrs := make([]DLR, len(numbers))
	for i, n := range numbers {
		dlrs[i] = DLR{RequestID: requestID, Number: n, Status: status, ErrorCode: code, Description: description, DeliveredAt: at}
	}
	return PostDLR(ctx, callback, dlrs...)
}

// PostDLR posts dlrs to callback as one JSON array, as the vendor does.
// It returns a *CallbackError when the receiver answered other than 2xx,
// and an error when the post failed (never naming callback, which holds
// the receiver's token).
func PostDLR(ctx context.Context, callback string, dlrs ...DLR) error {
	body, err := json.Marshal(dlrs)
	if err != nil {
		return err
	}
	return vendorhttptest.Post(ctx, nil, "smsgatewaytest", vendorhttptest.Report{URL: callback, ContentType: "application/json", Body: body})
}
