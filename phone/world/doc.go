// Package world is the phone.Plan of every country: it reads numbers
// with github.com/nyaruka/phonenumbers, the Go port of Google's
// libphonenumber, whose metadata knows each country's lengths, ranges and
// line types.
//
// It costs some 20 µs a number and 7.5 MB of binary, so it is a package
// of its own: a program links it only when it sends beyond India, by
// giving Plan{} to the channels (sms.Config.Numbers, chat.Config.Numbers).
// Indian numbers never reach it: phone.Parse reads them by its fast path.
package world
