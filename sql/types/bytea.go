package types

import (
	"encoding/base64"
	"strings"

	"lockd/pgerr"
)

// The bytea type (PostgreSQL's utils/adt/varlena.c and encode.c): a
// binary string, held in Datum.S byte for byte. It compares byte by byte
// (byteacmp's memcmp), prints in the format bytea_output names — hex
// (\x and two lower-case digits per byte, the default) or escape — and
// reads both formats; its binary wire form is the bytes themselves.

const hexDigits = "0123456789abcdef"

// appendBytea is byteaout.
func appendBytea(buf []byte, s string, escape bool) []byte {
	if !escape {
		buf = append(buf, '\\', 'x')
		for i := 0; i < len(s); i++ {
			buf = append(buf, hexDigits[s[i]>>4], hexDigits[s[i]&15])
		}
		return buf
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			buf = append(buf, '\\', '\\')
		case c < 0x20 || c > 0x7e:
			buf = append(buf, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// parseBytea is byteain: \x and hexadecimal digit pairs (white space
// allowed between pairs), or the escape format, where \\ is a backslash
// and \ooo an octal byte.
func parseBytea(s string) (Datum, error) {
	if strings.HasPrefix(s, `\x`) {
		b, err := hexDecode(s[2:])
		if err != nil {
			return Datum{}, err
		}
		return TextDatum(string(b)), nil
	}
	var b []byte
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			b = append(b, '\\')
			i += 2
		case i+3 < len(s) && isOctal(s[i+1]) && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
			b = append(b, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		default:
			return Datum{}, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
		}
	}
	return TextDatum(string(b)), nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hexDecode is encode.c's hex_decode: digit pairs, white space between
// them ignored.
func hexDecode(s string) ([]byte, error) {
	out := make([]byte, 0, len(s)/2)
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			i++
			continue
		}
		hi, ok := hexValue(c)
		if !ok {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid hexadecimal digit: \"%s\"", s[i:i+utf8Len(s[i:])])
		}
		if i+1 >= len(s) {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
		}
		lo, ok := hexValue(s[i+1])
		if !ok {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid hexadecimal digit: \"%s\"", s[i+1:i+1+utf8Len(s[i+1:])])
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	return out, nil
}

// utf8Len is the length of the character s starts with.
func utf8Len(s string) int {
	for n := 1; n < len(s) && n < 4; n++ {
		if s[n]&0xc0 != 0x80 {
			return n
		}
	}
	return min(len(s), 4)
}

// Encode is encode(bytea, format): hex, base64 (lines of 76 characters)
// or escape.
func Encode(data, format string) (string, error) {
	switch strings.ToLower(format) {
	case "hex":
		return string(appendBytea(nil, data, false)[2:]), nil
	case "base64":
		enc := base64.StdEncoding.EncodeToString([]byte(data))
		var b strings.Builder
		for len(enc) > 76 {
			b.WriteString(enc[:76])
			b.WriteByte('\n')
			enc = enc[76:]
		}
		b.WriteString(enc)
		return b.String(), nil
	case "escape":
		// esc_encode: like escape output, but only NUL and bytes with
		// the high bit set are written in octal
		var b []byte
		for i := 0; i < len(data); i++ {
			c := data[i]
			switch {
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == 0 || c >= 0x80:
				b = append(b, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
			default:
				b = append(b, c)
			}
		}
		return string(b), nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "unrecognized encoding: \"%s\"", format)
}

// Decode is decode(text, format), the inverse of Encode.
func Decode(s, format string) (string, error) {
	switch strings.ToLower(format) {
	case "hex":
		b, err := hexDecode(s)
		return string(b), err
	case "base64":
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
				return -1
			}
			return r
		}, s)
		b, err := base64.StdEncoding.DecodeString(clean)
		if err != nil {
			return "", pgerr.New(pgerr.InvalidParameterValue, "invalid base64 end sequence").
				WithHint("Input data is missing padding, is truncated, or is otherwise corrupted.")
		}
		return string(b), nil
	case "escape":
		var b []byte
		for i := 0; i < len(s); {
			c := s[i]
			switch {
			case c != '\\':
				b = append(b, c)
				i++
			case i+1 < len(s) && s[i+1] == '\\':
				b = append(b, '\\')
				i += 2
			case i+3 < len(s) && isOctal(s[i+1]) && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
				b = append(b, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
				i += 4
			default:
				return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
			}
		}
		return string(b), nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "unrecognized encoding: \"%s\"", format)
}
