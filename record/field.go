package record

// FieldError names one bad field of a request or a call and the rule it
// breaks. Field uses the names the caller knows: the HTTP API's JSON
// names for a request ("to", "dlt_template_id", "variables.OTP"), the
// argument's for a store call ("amount", "api_key").
type FieldError struct {
	Field   string
	Message string
}
