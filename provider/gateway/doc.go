// Package gateway is a notify.Provider that sends through a remote
// notification gateway speaking the API of spec/gateway-api.md: the hosted
// service, or another instance of this module's examples/gateway. A host
// application can then keep its own Notifier, wallet and channels and use
// a remote gateway as the provider of every channel:
//
//	p, err := gateway.New(gateway.Config{
//		BaseURL: "https://gateway.example.com/api/v1",
//		APIKey:  os.Getenv("GATEWAY_KEY"),
//	})
//	smsCh, err := sms.New(sms.Config{Provider: p})
//
// # Mapping
//
// Each envelope becomes one request, authenticated with
// "Authorization: Bearer <APIKey>" and carrying Idempotency-Key: env.ID, so
// that a retried send (by the Notifier, after a timeout or a lost answer)
// never sends twice when the remote keeps idempotency keys (ours does when
// it has an IdempotencyStore):
//
//   - SMS: POST /sms with to, route, sender_id and domain; message is the
//     rendered text on the sms and dlt routes (with dlt_template_id and
//     dlt_entity_id), and the code on the otp route, where the remote
//     renders its own OTP text.
//   - Chat: POST /messenger/send with to, gateway (the one the local
//     channel chose), type and domain, and the content as prepared: a
//     template as template_name, language, positional variables and
//     header_url; a file as media_url, file_name and message (the
//     caption); else message.
//   - E-mail: POST /email/send with to, subject, message (the HTML body, or
//     the text when there is none; the remote builds the text
//     alternative), from_name, reply_to, purpose and domain.
//
// The remote's message_id becomes Result.ProviderMessageID, and its gateway
// and note are passed on.
//
// # Errors
//
// The remote's HTTP status decides the code:
//
//	400                  CodeInvalidArgument, with the remote's fields
//	401, 403             CodeRejected (check Config.APIKey)
//	402                  CodeRejected (the remote wallet needs a top-up)
//	404, 405, 415        CodeRejected (check Config.BaseURL)
//	409                  CodeUnavailable: the first attempt is still in flight
//	429                  CodeRateLimited, RetryAfter from Retry-After
//	502, 413, other 4xx  CodeRejected
//	500, 503, 504        CodeUnavailable
//	transport failure    CodeUnavailable (the Idempotency-Key makes retries safe)
//
// An ended context returns the context's error. Errors never contain the
// API key.
package gateway
