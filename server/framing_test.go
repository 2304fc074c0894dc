package server

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/jackc/pgx/v5/pgproto3"
)

// chunks returns a reader that hands out b in pieces of n bytes (n = 0:
// all at once), as a connection may.
func chunks(b []byte, n int) io.Reader {
	if n == 0 {
		return bytes.NewReader(b)
	}
	return &chunkedReader{b: b, n: n}
}

type chunkedReader struct {
	b []byte
	n int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}

func encode(t *testing.T, msgs ...pgproto3.FrontendMessage) []byte {
	t.Helper()
	var out []byte
	for _, m := range msgs {
		var err error
		if out, err = m.Encode(out); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// receiveAll reads messages through a frameReader until an error and
// returns the messages' types and the error.
func receiveAll(r io.Reader, maxBody int) (string, error) {
	fr := &frameReader{r: r, maxBody: maxBody}
	be := pgproto3.NewBackend(fr, io.Discard)
	if maxBody > 0 {
		be.SetMaxBodyLen(maxBody)
	}
	var got []byte
	for {
		m, err := be.Receive()
		if err != nil {
			return string(got), err
		}
		switch m.(type) {
		case *pgproto3.Query:
			got = append(got, 'Q')
		case *pgproto3.Parse:
			got = append(got, 'P')
		case *pgproto3.Bind:
			got = append(got, 'B')
		case *pgproto3.Execute:
			got = append(got, 'E')
		case *pgproto3.Sync:
			got = append(got, 'S')
		case *pgproto3.CopyData:
			got = append(got, 'd')
		default:
			got = append(got, '?')
		}
	}
}

func TestFrameReader(t *testing.T) {
	valid := encode(t,
		&pgproto3.Query{String: "select 1"},
		&pgproto3.Parse{Name: "s", Query: "select $1::int"},
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("42")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.CopyData{Data: bytes.Repeat([]byte{'x'}, 9000)},
	)
	const validTypes = "QPBESd"
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name    string
		stream  []byte
		maxBody int
		check   func(error) bool
	}{
		{"valid stream ends at EOF", valid, 0, func(err error) bool {
			return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		}},
		{"unknown type byte", cat(valid, []byte{'Z', 0, 0, 0, 4}), 0, func(err error) bool {
			var e *invalidMessageTypeError
			return errors.As(err, &e) && e.typ == 'Z' && e.Error() == "invalid frontend message type 90"
		}},
		{"type byte 0xff", cat(valid, []byte{0xff, 0, 0, 0, 4, 'x'}), 0, func(err error) bool {
			var e *invalidMessageTypeError
			return errors.As(err, &e) && e.typ == 0xff
		}},
		{"length below 4", cat(valid, []byte{'Q', 0, 0, 0, 3}), 0, func(err error) bool {
			var e *invalidMessageLengthError
			return errors.As(err, &e) && e.length == 3
		}},
		{"negative length, unknown type: length first", cat(valid, []byte{'Z', 0xff, 0xff, 0xff, 0xff}), 0, func(err error) bool {
			var e *invalidMessageLengthError
			return errors.As(err, &e) && e.length == -1
		}},
		{"too long, unknown type: size first, as pgproto3", cat(valid, []byte{'Z', 0, 0x01, 0, 0}), 10000, func(err error) bool {
			var e *pgproto3.ExceededMaxBodyLenErr
			return errors.As(err, &e) && e.ActualBodyLen == 0x10000-4
		}},
	} {
		for _, n := range []int{0, 1, 2, 3, 5, 7, 4096} {
			var r io.Reader = chunks(tc.stream, n)
			if n == 1 {
				r = iotest.OneByteReader(bytes.NewReader(tc.stream))
			}
			got, err := receiveAll(r, tc.maxBody)
			if got != validTypes || !tc.check(err) {
				t.Errorf("%s, reads of %d: messages %q, error %v (%T); want %q and the expected error",
					tc.name, n, got, err, err, validTypes)
			}
		}
	}
}

// TestFrameReaderPassesErrors: a read error of the connection comes
// through unchanged, so timeouts and closed connections are still
// recognised.
func TestFrameReaderPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	fr := &frameReader{r: iotest.ErrReader(boom)}
	if _, err := fr.Read(make([]byte, 16)); err != boom {
		t.Fatalf("Read error = %v, want %v", err, boom)
	}
}
