// Package phone reads phone numbers into E.164 form ("+919876543210")
// and says what kind of line each is, so that the channels can refuse a
// number that cannot take their message before anything is charged.
//
// Indian numbers, the bulk of the traffic, take a fast path of tens of
// nanoseconds and no metadata: the 10-digit national form and its +91,
// 91 and 0 prefixes, with spaces and dashes. Every other country needs a
// Plan, usually phone/world's, which reads any number with Google's
// libphonenumber metadata (some 20 µs a number and 7.5 MB of binary,
// which is why it is a package of its own: a program that sends only to
// India never links it). The plan is given once: phone/world registers
// its own when it is imported (RegisterPlan), and every Parse given no
// plan, so every channel and verify, reads with it.
//
// A number written without a country code is of the account's region
// (record.Account.Region, India by default); one that does not read as
// such is refused with an error that says to write it with its country
// code (+1 415 555 0100).
//
// Which countries an account may send to is its own decision
// (record.Account.Region and Countries); Allowed applies it.
package phone
