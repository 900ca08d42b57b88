package notify

import "github.com/notifykit/notify/record"

// The root names three values of package record, the ones nearly every
// caller meets, so that a send reads without a second import. Every other
// shared value (record.Message, the durable record of a message;
// record.State and its constants, record.Balance,
// record.Currency, record.INR, record.FieldError, ...) is named by
// package record alone.

// Kind names a channel: what sort of message a request asks for. Each
// channel package names its own (sms.Kind is "sms", chat.Kind "chat",
// email.Kind "email"; otp.Kind "otp" names the dual OTP's combined
// receipt, which no Channel has); any package may define another.
type Kind = record.Kind

// Account is a customer of the notifier: the owner of a wallet and of the
// messages sent on its behalf (record.Account, which documents each
// field). Accounts come from a store.Accounts; the Notifier never changes
// one.
type Account = record.Account

// Money is an exact amount: an int64 count of the currency's minor units
// (paise for INR), never a float (record.Money).
type Money = record.Money
