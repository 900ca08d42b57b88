// Package world is the phone.Plan of every country: it reads numbers
// with github.com/nyaruka/phonenumbers, the Go port of Google's
// libphonenumber, whose metadata knows each country's lengths, ranges and
// line types.
//
// Importing it is the one setting a program needs to send anywhere: its
// init registers Plan (phone.RegisterPlan), so every SMS and chat channel
// and verify whose Config leaves Numbers nil, and notifytest, read every
// country's numbers:
//
//	import _ "github.com/notifykit/notify/phone/world"
//
// It costs some 20 µs a number and 7.5 MB of binary, so it is a package
// of its own: a program that sends only to India never links it. Indian
// numbers never reach it: phone.Parse reads them by its fast path. A
// channel given phone.IndiaOnly stays with India's numbers.
package world
