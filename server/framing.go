package server

import (
	"fmt"
	"io"
)

// Message framing. A frontend message after startup is a type byte, a
// 4-byte big-endian length that counts itself, and the body. pgproto3
// decodes the messages, but reports a bad type byte or a bad length only as
// untyped text; frameReader, between the connection and pgproto3, follows
// the same framing and turns those two into typed errors that the message
// loop classifies with errors.As.
//
// Cost: it adds no system call and no allocation. Each Read of the
// connection (one per pgbench round trip) walks the headers in the bytes
// read — a handful of comparisons per message — and skips bodies by
// counting.

// frameReader is the io.Reader pgproto3 reads frontend messages from. It
// passes the connection's bytes through unchanged up to a malformed header
// and then returns the header's typed error, so pgproto3 handles every
// message before it and fails on exactly that one. It belongs to one
// backend's goroutine; the zero value (with r set) is ready to use.
type frameReader struct {
	r io.Reader
	// maxBody is max_message_size as given to pgproto3: a longer body is
	// left to pgproto3, which reports it as *pgproto3.ExceededMaxBodyLenErr
	// before it looks at the type byte, so the order of the checks is
	// PostgreSQL's and pgproto3's: length, size, type.
	maxBody int

	hdr  [5]byte // the header being read
	nhdr int     // bytes of hdr seen; 0 at a message boundary
	body int     // body bytes still to pass before the next header
	err  error   // a framing error, returned once the bytes before it are read
}

// invalidMessageTypeError is a frontend message whose type byte no message
// of protocol 3.0 has.
type invalidMessageTypeError struct{ typ byte }

func (e *invalidMessageTypeError) Error() string {
	return fmt.Sprintf("invalid frontend message type %d", e.typ)
}

// invalidMessageLengthError is a frontend message whose length is below
// the 4 bytes of the length itself.
type invalidMessageLengthError struct{ length int32 }

func (e *invalidMessageLengthError) Error() string {
	return fmt.Sprintf("invalid message length %d", e.length)
}

// Read reads from the connection. Bytes before a malformed header are
// returned with no error; the header's error comes on the next call (and
// every call after it). An error must not come with the bytes before it:
// pgproto3 reads through io.ReadAtLeast, which drops an error that comes
// with enough bytes.
func (f *frameReader) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.r.Read(p)
	if k, ferr := f.scan(p[:n]); ferr != nil {
		f.err = ferr
		if k == 0 {
			return 0, ferr
		}
		return k, nil
	}
	return n, err
}

// scan advances the framing over b. For a malformed header it returns the
// length of b before that header's first byte in b, and the header's error.
func (f *frameReader) scan(b []byte) (int, error) {
	for i := 0; i < len(b); {
		if f.body > 0 {
			skip := min(f.body, len(b)-i)
			f.body -= skip
			i += skip
			continue
		}
		start := i
		take := min(len(f.hdr)-f.nhdr, len(b)-i)
		copy(f.hdr[f.nhdr:], b[i:i+take])
		f.nhdr += take
		i += take
		if f.nhdr < len(f.hdr) {
			break // the header continues in the next read
		}
		f.nhdr = 0
		length := int32(uint32(f.hdr[1])<<24 | uint32(f.hdr[2])<<16 | uint32(f.hdr[3])<<8 | uint32(f.hdr[4]))
		switch {
		case length < 4:
			return start, &invalidMessageLengthError{length: length}
		case f.maxBody > 0 && int(length)-4 > f.maxBody:
			// pgproto3 reports it; nothing after it is read.
		case !frontendMessageType(f.hdr[0]):
			return start, &invalidMessageTypeError{typ: f.hdr[0]}
		}
		f.body = int(length) - 4
	}
	return len(b), nil
}

// frontendMessageType reports whether typ is the type byte of a frontend
// message of protocol 3.0 (the ones pgproto3's Backend decodes).
func frontendMessageType(typ byte) bool {
	switch typ {
	case 'B', 'C', 'D', 'E', 'F', 'H', 'P', 'Q', 'S', 'X', 'c', 'd', 'f', 'p':
		return true
	}
	return false
}
