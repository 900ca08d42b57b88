package sms

import (
	"unicode/utf8"
)

// Segment sizes of GSM 03.38 and UCS-2 messages. A concatenated message
// loses part of each segment to the user data header that numbers it.
const (
	gsmSingle = 160 // septets in a message of one segment
	gsmPart   = 153 // septets per segment of a concatenated message
	ucsSingle = 70  // UTF-16 code units in a message of one segment
	ucsPart   = 67  // UTF-16 code units per segment of a concatenated message
)

// GSM 03.38 membership of the ASCII range as bit sets: bit c of the
// Lo word (c < 64) or bit c-64 of the Hi word. Constants, so there is no
// table anyone could change.
const (
	// Basic: LF, CR, space through '?', '@', A-Z, '_', a-z.
	gsmBasicLo uint64 = 1<<'\n' | 1<<'\r' | 0xFFFFFFFF00000000
	gsmBasicHi uint64 = 1<<('@'-64) | 0x07FFFFFE<<0 | 1<<('_'-64) | 0x07FFFFFE<<32
	// Extension (escape + one septet, so two septets): form feed,
	// [ \ ] ^ { | } ~.
	gsmExtLo uint64 = 1 << '\f'
	gsmExtHi uint64 = 1<<('['-64) | 1<<('\\'-64) | 1<<(']'-64) | 1<<('^'-64) |
		1<<('{'-64) | 1<<('|'-64) | 1<<('}'-64) | 1<<('~'-64)
)

// gsmSeptets returns how many septets r takes in GSM 03.38: 1 for the basic
// alphabet, 2 for the extension table (escape + character), 0 when r is
// not in GSM 03.38 at all.
func gsmSeptets(r rune) int {
	switch {
	case r < 64:
		if gsmBasicLo&(1<<r) != 0 {
			return 1
		}
		if gsmExtLo&(1<<r) != 0 {
			return 2
		}
		return 0
	case r < 128:
		if gsmBasicHi&(1<<(r-64)) != 0 {
			return 1
		}
		if gsmExtHi&(1<<(r-64)) != 0 {
			return 2
		}
		return 0
	}
	switch r {
	case '£', '¥', 'è', 'é', 'ù', 'ì', 'ò', 'Ç', 'Ø', 'ø', 'Å', 'å',
		'Δ', 'Φ', 'Γ', 'Λ', 'Ω', 'Π', 'Ψ', 'Σ', 'Θ', 'Ξ',
		'Æ', 'æ', 'ß', 'É', '¤', '¡', 'Ä', 'Ö', 'Ñ', 'Ü', '§', '¿',
		'ä', 'ö', 'ñ', 'ü', 'à':
		return 1
	case '€':
		return 2
	}
	return 0
}

// Segments returns the encoding an SMS with this text travels in, the
// number of segments it takes and its length in units of that encoding:
// septets for GSM-7 (extension characters ^ { } \ [ ~ ] | € and form feed
// count 2), UTF-16 code units for UCS-2 (characters outside the Basic
// Multilingual Plane, such as most emoji, count 2).
//
// A text made only of GSM 03.38 characters is GSM-7: 160 septets fit one
// segment, longer texts take 153 per segment. One character outside it
// switches the whole text to UCS-2: 70 code units in one segment, 67 per
// segment beyond. Parts are packed the way senders split them: an
// extension character's two septets, or a surrogate pair, never straddle
// two segments, so a part may hold one unit less. Invalid UTF-8 bytes
// count as one UCS-2 unit each (they are sent as U+FFFD). The empty text
// is one segment.
//
// Segments does not allocate and is safe for concurrent use.
func Segments(text string) (enc Encoding, segments, units int) {
	// One pass finds the encoding and both lengths; parts are packed one
	// character at a time only when a two-unit character could straddle a
	// boundary, which is rare.
	gsm := true
	var septets, ucs int
	var ext, pairs bool
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1 // ASCII, the common case, needs no decoding
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		if r > 0xFFFF {
			ucs += 2
			pairs = true
		} else {
			ucs++
		}
		if gsm {
			switch s := gsmSeptets(r); s {
			case 0:
				gsm = false
			case 2:
				ext = true
				septets += 2
			default:
				septets++
			}
		}
	}
	switch {
	case gsm && septets <= gsmSingle:
		return GSM7, 1, septets
	case gsm && !ext:
		return GSM7, (septets + gsmPart - 1) / gsmPart, septets
	case gsm:
		return GSM7, packParts(text, gsmPart, true), septets
	case ucs <= ucsSingle:
		return UCS2, 1, ucs
	case !pairs:
		return UCS2, (ucs + ucsPart - 1) / ucsPart, ucs
	}
	return UCS2, packParts(text, ucsPart, false), ucs
}

// packParts counts the parts of size units each that text fills when no
// character is split between two parts; gsm selects septets or UTF-16
// code units as the unit.
func packParts(text string, size int, gsm bool) int {
	parts, fill := 1, 0
	for _, r := range text {
		w := 1
		if gsm {
			w = gsmSeptets(r)
		} else if r > 0xFFFF {
			w = 2
		}
		if fill+w > size {
			parts++
			fill = 0
		}
		fill += w
	}
	return parts
}
