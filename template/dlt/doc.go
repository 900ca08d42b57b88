// Package dlt checks SMS text against templates registered under India's
// DLT (Distributed Ledger Technology) scheme, before a message is charged.
//
// Operators deliver a DLT-route SMS only when its text is the registered
// template content with each {#var#} placeholder replaced by a value of at
// most 30 characters; any other difference (a changed word, a missing full
// stop, an extra space) makes the operator's scrubber drop the message.
// Match applies the same rule and, on a mismatch, says where the text first
// departs from the template; Fill builds a text from values.
//
// Rules, as the operators apply them:
//   - the placeholder is exactly "{#var#}" (lower case); anything else in
//     the content, braces included, is literal text;
//   - a value may hold any characters, spaces and punctuation included, and
//     may be empty; its length is counted in characters (Unicode code
//     points), at most MaxValueLen;
//   - literal text must match byte for byte: case, spaces and punctuation
//     count.
//
// The functions are pure and safe for concurrent use.
package dlt
