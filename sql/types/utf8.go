package types

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"lockd/pgerr"
)

// VerifyUTF8 is pg_verify_mbstr for UTF8, the server encoding: every
// string a client sends — a query, a parameter in text form, COPY
// input — must be valid UTF-8 without NUL bytes, as PostgreSQL checks it
// on the way in (pg_client_to_server verifies even when nothing
// converts). The error is 22021 with report_invalid_encoding's text.
func VerifyUTF8(s string) error {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return nil
	}
	return badUTF8(s)
}

// VerifyUTF8Bytes is VerifyUTF8 of bytes.
func VerifyUTF8Bytes(b []byte) error {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return nil
	}
	return badUTF8(string(b))
}

// badUTF8 reports the first invalid sequence (or NUL) of s.
func badUTF8(s string) error {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || r == utf8.RuneError && n <= 1 {
			return BadSequence("UTF8", s[i:], UTF8Mblen(s[i]))
		}
		i += n
	}
	return nil
}

// UTF8Mblen is pg_utf_mblen: the length a UTF-8 sequence starting with
// c claims.
func UTF8Mblen(c byte) int {
	switch {
	case c < 0x80:
		return 1
	case c&0xe0 == 0xc0:
		return 2
	case c&0xf0 == 0xe0:
		return 3
	case c&0xf8 == 0xf0:
		return 4
	}
	return 1
}

// BadSequence is report_invalid_encoding for the sequence at s, which
// claims mblen bytes in encoding enc.
func BadSequence(enc string, s string, mblen int) error {
	n := min(mblen, len(s), 8)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("0x%02x", s[i])
	}
	return pgerr.New(pgerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"%s\": %s", enc, strings.Join(parts, " "))
}
