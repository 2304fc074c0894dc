package auth

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// SASLprep (RFC 4013, the stringprep profile for passwords) as PostgreSQL
// applies it to a password before SCRAM, in the server when it builds a
// verifier and in libpq when it answers the exchange: a password of
// ASCII is used as it is; any other is mapped (non-ASCII spaces to a
// space, the characters "commonly mapped to nothing" removed), normalised
// to NFKC and checked for prohibited characters; a password that is not
// valid UTF-8 or holds a prohibited character is used as its raw bytes,
// which is PostgreSQL's fallback. lockd checks the prohibited tables with
// Go's Unicode categories and does not check the bidirectional rule or
// unassigned code points (Unicode 3.2's), so a password that only those
// would reject is normalised where PostgreSQL uses it raw; the two agree
// whenever normalisation leaves the password unchanged.

// saslprep returns the string a password is hashed as.
func saslprep(p string) string {
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii || !utf8.ValidString(p) {
		return p
	}
	mapped := make([]rune, 0, len(p))
	for _, r := range p {
		switch {
		case mappedToNothing(r):
		case nonASCIISpace(r):
			mapped = append(mapped, ' ')
		default:
			mapped = append(mapped, r)
		}
	}
	out := norm.NFKC.String(string(mapped))
	for _, r := range out {
		if prohibited(r) {
			return p
		}
	}
	return out
}

// mappedToNothing is RFC 3454's table B.1.
func mappedToNothing(r rune) bool {
	switch r {
	case 0x00AD, 0x034F, 0x1806, 0x180B, 0x180C, 0x180D, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF:
		return true
	}
	return r >= 0xFE00 && r <= 0xFE0F
}

// nonASCIISpace is table C.1.2.
func nonASCIISpace(r rune) bool {
	switch r {
	case 0x00A0, 0x1680, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200B
}

// prohibited is RFC 4013's prohibited output: non-ASCII spaces, control
// characters, private use, non-characters, surrogates, characters
// inappropriate for plain text or canonical representation, those that
// change display properties, and tagging characters (tables C.1.2 and
// C.2 to C.9).
func prohibited(r rune) bool {
	switch {
	case nonASCIISpace(r):
		return true
	case r < 0x20 || r == 0x7F || unicode.Is(unicode.Cc, r): // C.2.1, C.2.2
		return true
	case r >= 0x80 && r <= 0x9F, r == 0x06DD, r == 0x070F, r == 0x180E, r >= 0x200C && r <= 0x200D,
		r >= 0x2028 && r <= 0x2029, r >= 0x2060 && r <= 0x2063, r >= 0x206A && r <= 0x206F, r == 0xFEFF,
		r >= 0xFFF9 && r <= 0xFFFC, r >= 0x1D173 && r <= 0x1D17A: // C.2.2
		return true
	case unicode.Is(unicode.Co, r): // C.3 private use
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE: // C.4 non-characters
		return true
	case r >= 0xD800 && r <= 0xDFFF: // C.5
		return true
	case r >= 0xFFF9 && r <= 0xFFFD: // C.6
		return true
	case r >= 0x2FF0 && r <= 0x2FFB: // C.7
		return true
	case r == 0x0340, r == 0x0341, r == 0x200E, r == 0x200F, r >= 0x202A && r <= 0x202E: // C.8
		return true
	case r == 0xE0001, r >= 0xE0020 && r <= 0xE007F: // C.9
		return true
	}
	return false
}
