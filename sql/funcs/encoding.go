package funcs

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Character set encodings (PostgreSQL's common/encnames.c and
// mb/mbutils.c): their numbers and names, and the conversions
// convert_from and convert_to make. lockd's server encoding is UTF8; it
// converts between UTF8, SQL_ASCII and LATIN1, and names every other
// encoding PostgreSQL knows but refuses to convert to or from it (0A000).

// Encoding numbers (pg_wchar.h's pg_enc).
const (
	encSQLASCII = 0
	encUTF8     = 6
	encLatin1   = 8
)

// encodingNames are PostgreSQL's encoding names by number (pg_enc2name_tbl).
var encodingNames = []string{
	"SQL_ASCII", "EUC_JP", "EUC_CN", "EUC_KR", "EUC_TW", "EUC_JIS_2004", "UTF8", "MULE_INTERNAL",
	"LATIN1", "LATIN2", "LATIN3", "LATIN4", "LATIN5", "LATIN6", "LATIN7", "LATIN8", "LATIN9", "LATIN10",
	"WIN1256", "WIN1258", "WIN866", "WIN874", "KOI8R", "WIN1251", "WIN1252", "ISO_8859_5", "ISO_8859_6",
	"ISO_8859_7", "ISO_8859_8", "WIN1250", "WIN1253", "WIN1254", "WIN1255", "WIN1257", "KOI8U",
	"SJIS", "BIG5", "GBK", "UHC", "GB18030", "JOHAB", "SHIFT_JIS_2004",
}

// encodingAliases are the other names pg_char_to_encoding accepts
// (pg_encname_tbl), cleaned as cleanEncodingName cleans them.
var encodingAliases = map[string]int{
	"unicode": encUTF8, "iso88591": 8, "iso88592": 9, "iso88593": 10, "iso88594": 11, "iso88599": 12,
	"iso885910": 13, "iso885913": 14, "iso885914": 15, "iso885915": 16, "iso885916": 17,
	"win1256": 18, "win1258": 19, "abc": 19, "tcvn": 19, "tcvn5712": 19, "vscii": 19, "alt": 20,
	"win866": 20, "win874": 21, "koi8": 22, "koi8r": 22, "win": 23, "win1251": 23, "win1252": 24,
	"windows1250": 29, "windows1251": 23, "windows1252": 24, "windows1253": 30, "windows1254": 31,
	"windows1255": 32, "windows1256": 18, "windows1257": 33, "windows1258": 19, "windows866": 20,
	"windows874": 21, "windows932": 35, "windows936": 37, "windows949": 38, "windows950": 36,
	"mskanji": 35, "shiftjis": 35, "sjis": 35, "koi8u": 34, "shiftjis2004": 41,
}

// cleanEncodingName lower-cases name and drops everything but letters
// and digits (clean_encoding_name).
func cleanEncodingName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		}
	}
	return b.String()
}

// EncodingNumber is pg_char_to_encoding: -1 for an unknown name.
func EncodingNumber(name string) int {
	c := cleanEncodingName(name)
	for i, n := range encodingNames {
		if cleanEncodingName(n) == c {
			return i
		}
	}
	if e, ok := encodingAliases[c]; ok {
		return e
	}
	return -1
}

// EncodingName is pg_encoding_to_char: "" for an unknown number.
func EncodingName(enc int64) string {
	if enc < 0 || enc >= int64(len(encodingNames)) {
		return ""
	}
	return encodingNames[enc]
}

func encodingByName(name string, what string) (int, error) {
	enc := EncodingNumber(name)
	if enc < 0 {
		return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid %s encoding name \"%s\"", what, name)
	}
	return enc, nil
}

func unsupportedConversion(from, to int) error {
	return pgerr.NotSupported("conversion from %s to %s is not supported by lockd", encodingNames[from], encodingNames[to])
}

// convertFrom is convert_from(bytea, name): the bytes in the named
// encoding, as text in the server encoding (UTF8).
func convertFrom(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	enc, err := encodingByName(a[1].S, "source")
	if err != nil {
		return types.Datum{}, err
	}
	s := a[0].S
	switch enc {
	case encUTF8, encSQLASCII:
		// the source is checked first (SQL_ASCII refuses only NUL); then,
		// as nothing converts, the bytes must be valid UTF8 as they are
		if i := strings.IndexByte(s, 0); i >= 0 && enc == encSQLASCII {
			return types.Datum{}, types.BadSequence("SQL_ASCII", s[i:], 1)
		}
		if err := types.VerifyUTF8(s); err != nil {
			return types.Datum{}, err
		}
		return types.TextDatum(s), nil
	case encLatin1:
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == 0 {
				return types.Datum{}, types.BadSequence("LATIN1", s[i:], 1)
			}
			b.WriteRune(rune(s[i]))
		}
		return types.TextDatum(b.String()), nil
	}
	return types.Datum{}, unsupportedConversion(enc, encUTF8)
}

// convertTo is convert_to(text, name): the text's bytes in the named
// encoding.
func convertTo(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	enc, err := encodingByName(a[1].S, "destination")
	if err != nil {
		return types.Datum{}, err
	}
	s := a[0].S
	switch enc {
	case encUTF8, encSQLASCII:
		return types.TextDatum(s), nil
	case encLatin1:
		b := make([]byte, 0, len(s))
		for i, r := range s {
			if r > 0xff {
				n := utf8.RuneLen(r)
				parts := make([]string, n)
				for j := range parts {
					parts[j] = fmt.Sprintf("0x%02x", s[i+j])
				}
				return types.Datum{}, pgerr.New(pgerr.UntranslatableCharacter, "character with byte sequence %s in encoding \"UTF8\" has no equivalent in encoding \"LATIN1\"", strings.Join(parts, " "))
			}
			b = append(b, byte(r))
		}
		return types.TextDatum(string(b)), nil
	}
	return types.Datum{}, unsupportedConversion(encUTF8, enc)
}
