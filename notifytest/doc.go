// Package notifytest gives the tests of an application that sends through
// notify a ready Notifier in one call: in-memory stores, capture providers
// instead of vendors, the real SMS, e-mail and chat channels with the stock
// templates, the stock INR prices, and a funded account.
//
//	func TestSignupSendsOTP(t *testing.T) {
//		kit := notifytest.New(t)
//		app := myapp.New(kit.Notifier) // the code under test
//		app.Signup(ctx, "98765 43210")
//
//		env := kit.LastSMS(t)
//		if env.To != "9876543210" || sms.MessageOf(env).Route != sms.RouteOTP { ... }
//		kit.AssertBalance(t, notifytest.DefaultBalance-env.Price.Minor)
//	}
//
// Everything the kit holds is exported, so a test can reach past the
// helpers: make a provider fail (kit.SMS.FailNext), add accounts
// (kit.Accounts.Add), read the wallet's debits and credits
// (kit.Wallet.Ledger) or a message's record (kit.Message, or
// kit.Notifier.Message; the records are kept in kit.Ledger, the
// Notifier's store.Ledger). Nothing touches the network: media URLs are
// checked as usual, but every host name resolves to one public address without a
// DNS lookup (WithResolver changes that).
//
// For authors of providers, SentGate holds a send between the vendor's
// acceptance and the Notifier's record of it, the moment a fast delivery
// report can outrun: a webhook must answer it "retry later".
package notifytest
