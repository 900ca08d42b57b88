package vendorhttptest

import (
	"encoding/json"
	"net/http"
)

// ReplyJSONAs answers status with v as JSON under contentType, for a
// vendor whose Content-Type says more than ReplyJSON's
// "application/json", such as "application/json; charset=UTF-8": a fake
// answers with the vendor's own header.
func ReplyJSONAs(w http.ResponseWriter, contentType string, status int, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
