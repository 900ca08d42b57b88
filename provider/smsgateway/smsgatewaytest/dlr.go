package smsgatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
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

// ist is the vendor's time zone.
var ist = time.FixedZone("IST", 5*3600+1800)

// Report posts delivery reports of an accepted message to callback (the
// receiver's URL, token included), one per number of it, with status
// (and, for a failure, code and description), as one JSON array; it
// returns an error unless the receiver answered 200. It is an error too
// when the fake accepted no message under requestID. Nothing is posted
// unless a test calls it, so a test decides when reports arrive.
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
	at := time.Now().In(ist).Format(time.DateTime)
	dlrs := make([]DLR, len(numbers))
	for i, n := range numbers {
		dlrs[i] = DLR{RequestID: requestID, Number: n, Status: status, ErrorCode: code, Description: description, DeliveredAt: at}
	}
	return PostDLR(ctx, callback, dlrs...)
}

// PostDLR posts dlrs to callback as one JSON array, as the vendor does,
// and returns an error unless the receiver answered 200.
func PostDLR(ctx context.Context, callback string, dlrs ...DLR) error {
	body, err := json.Marshal(dlrs)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callback, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("smsgatewaytest: the callback answered %s", resp.Status)
	}
	return nil
}
