package exec

import (
	"bytes"
	"encoding/binary"

	"lockd/pgerr"
	"lockd/sql/types"
)

// copyField is one field of one input row; data is valid until the next
// call of next.
type copyField struct {
	data []byte
	null bool
}

// copyReader splits COPY input into rows in text, csv or binary format.
type copyReader struct {
	src     CopySource
	opts    copyOptions
	mem     []byte // the input buffer: buf is its unconsumed tail
	buf     []byte // unconsumed input
	scratch []byte
	done    bool
	binHdr  bool
	ended   bool
	line    []byte // the raw text of the row last read (text and CSV)
}

// fill reads more input; it reports false at the end of the data.
func (r *copyReader) fill() (bool, error) {
	if r.done {
		return false, nil
	}
	data, done, err := r.src()
	if err != nil {
		r.done = true
		return false, err
	}
	if done {
		r.done = true
		return false, nil
	}
	r.buf = r.appendInput(data)
	return true, nil
}

// appendInput returns buf with data appended, reusing mem: pgbench sends
// a CopyData message per row, and letting append grow the ever shorter
// tail of the buffer would allocate for nearly every one. The unconsumed
// input moves to the front of mem when data does not fit after it, and
// mem grows only when it cannot hold both. Moving is safe because
// nothing outlives the row it was read with: text and CSV fields are
// copied into scratch, binary ones are converted into Datums (which copy
// the bytes) before the next row is read, and line is reset by next.
func (r *copyReader) appendInput(data []byte) []byte {
	n := len(r.buf)
	switch {
	case n+len(data) > cap(r.mem):
		mem := make([]byte, n, max(2*cap(r.mem), n+len(data), 64<<10))
		copy(mem, r.buf)
		r.mem = mem[:0]
		r.buf = mem
	case cap(r.buf)-n < len(data):
		r.buf = r.mem[:copy(r.mem[:n], r.buf)]
	}
	return append(r.buf, data...)
}

// next returns the fields of the next row, or more=false at the end.
func (r *copyReader) next(out []copyField) ([]copyField, bool, error) {
	if r.ended {
		return out, false, nil
	}
	r.line = nil
	switch r.opts.format {
	case 'b':
		return r.nextBinary(out)
	case 'c':
		return r.nextCSV(out)
	}
	return r.nextText(out)
}

func (r *copyReader) nextText(out []copyField) ([]copyField, bool, error) {
	for {
		if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
			line := r.buf[:i]
			r.buf = r.buf[i+1:]
			if len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			if string(line) == `\.` {
				r.ended = true
				return out, false, nil
			}
			if err := types.VerifyUTF8Bytes(line); err != nil {
				return out, false, err
			}
			r.line = line
			return r.splitText(line, out), true, nil
		}
		more, err := r.fill()
		if err != nil {
			return out, false, err
		}
		if !more {
			if len(r.buf) == 0 {
				return out, false, nil
			}
			line := r.buf
			r.buf = nil
			if string(line) == `\.` {
				return out, false, nil
			}
			if err := types.VerifyUTF8Bytes(line); err != nil {
				return out, false, err
			}
			r.line = line
			return r.splitText(line, out), true, nil
		}
	}
}

// splitText splits one text-format line into fields. A field without a
// backslash is handed out where it lies in the line; one with escapes is
// de-escaped into scratch. Either stays valid until the next call of
// next. NULL is recognized on the field's raw text, before de-escaping,
// as PostgreSQL does.
func (r *copyReader) splitText(l []byte, out []copyField) []copyField {
	r.scratch = r.scratch[:0]
	delim := r.opts.delim
	for start := 0; ; {
		i := start
		for i < len(l) && l[i] != delim && l[i] != '\\' {
			i++
		}
		var data []byte
		if i < len(l) && l[i] != delim {
			data, i = r.unescapeText(l, start)
		} else {
			data = l[start:i:i]
		}
		if string(l[start:i]) == r.opts.null {
			out = append(out, copyField{null: true})
		} else {
			out = append(out, copyField{data: data})
		}
		if i == len(l) {
			return out
		}
		start = i + 1
	}
}

// unescapeText de-escapes the field of l that begins at start into
// scratch, returning its value and where it ends (at the delimiter or
// the end of the line). A backslash escapes the character after it,
// the delimiter included; \n, \t, \r, \b, \f, \v and up to three octal
// digits name characters; a backslash ending the line is kept.
func (r *copyReader) unescapeText(l []byte, start int) ([]byte, int) {
	from := len(r.scratch)
	delim := r.opts.delim
	i := start
	for ; i < len(l); i++ {
		c := l[i]
		switch {
		case c == delim:
			return r.scratch[from:len(r.scratch):len(r.scratch)], i
		case c == '\\' && i+1 < len(l):
			i++
			e := l[i]
			switch e {
			case 'n':
				r.scratch = append(r.scratch, '\n')
			case 't':
				r.scratch = append(r.scratch, '\t')
			case 'r':
				r.scratch = append(r.scratch, '\r')
			case 'b':
				r.scratch = append(r.scratch, '\b')
			case 'f':
				r.scratch = append(r.scratch, '\f')
			case 'v':
				r.scratch = append(r.scratch, '\v')
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && i+1 < len(l) && l[i+1] >= '0' && l[i+1] <= '7'; k++ {
						i++
						v = v*8 + int(l[i]-'0')
					}
					r.scratch = append(r.scratch, byte(v))
				} else {
					r.scratch = append(r.scratch, e)
				}
			}
		default:
			r.scratch = append(r.scratch, c)
		}
	}
	return r.scratch[from:len(r.scratch):len(r.scratch)], i
}

// nextCSV reads one CSV record, which may span lines inside quotes.
func (r *copyReader) nextCSV(out []copyField) ([]copyField, bool, error) {
	for {
		end, ok := r.csvRecordEnd()
		if ok {
			rec := r.buf[:end]
			r.buf = r.buf[end:]
			if len(r.buf) > 0 && r.buf[0] == '\n' {
				r.buf = r.buf[1:]
			}
			if len(rec) > 0 && rec[len(rec)-1] == '\r' {
				rec = rec[:len(rec)-1]
			}
			if string(rec) == `\.` {
				r.ended = true
				return out, false, nil
			}
			if err := types.VerifyUTF8Bytes(rec); err != nil {
				return out, false, err
			}
			r.line = rec
			return r.splitCSV(rec, out)
		}
		more, err := r.fill()
		if err != nil {
			return out, false, err
		}
		if !more {
			if len(r.buf) == 0 {
				return out, false, nil
			}
			if _, ok := r.csvRecordEnd(); !ok && r.inQuote() {
				return out, false, pgerr.New(pgerr.BadCopyFileFormat, "unterminated CSV quoted field")
			}
			rec := r.buf
			r.buf = nil
			if string(rec) == `\.` {
				return out, false, nil
			}
			if err := types.VerifyUTF8Bytes(rec); err != nil {
				return out, false, err
			}
			r.line = rec
			return r.splitCSV(rec, out)
		}
	}
}

// csvRecordEnd finds the newline that ends the first record in buf.
func (r *copyReader) csvRecordEnd() (int, bool) {
	inq := false
	q, esc := r.opts.quote, r.opts.escape
	for i := 0; i < len(r.buf); i++ {
		c := r.buf[i]
		switch {
		case inq && c == esc && esc != q && i+1 < len(r.buf) && (r.buf[i+1] == q || r.buf[i+1] == esc):
			i++
		case c == q:
			if inq && esc == q && i+1 < len(r.buf) && r.buf[i+1] == q {
				i++
				continue
			}
			inq = !inq
		case c == '\n' && !inq:
			return i, true
		}
	}
	return 0, false
}

func (r *copyReader) inQuote() bool {
	inq := false
	for _, c := range r.buf {
		if c == r.opts.quote {
			inq = !inq
		}
	}
	return inq
}

func (r *copyReader) splitCSV(rec []byte, out []copyField) ([]copyField, bool, error) {
	r.scratch = r.scratch[:0]
	q, esc, delim := r.opts.quote, r.opts.escape, r.opts.delim
	start := 0
	quoted := false
	rawStart := 0
	inq := false
	flush := func(end int) {
		raw := rec[rawStart:end]
		if !quoted && string(raw) == r.opts.null {
			out = append(out, copyField{null: true})
		} else {
			out = append(out, copyField{data: r.scratch[start:len(r.scratch):len(r.scratch)]})
		}
		start = len(r.scratch)
		quoted = false
	}
	for i := 0; i < len(rec); i++ {
		c := rec[i]
		switch {
		case inq && c == esc && i+1 < len(rec) && (rec[i+1] == q || rec[i+1] == esc) && (esc != q || rec[i+1] == q):
			r.scratch = append(r.scratch, rec[i+1])
			i++
		case c == q:
			inq = !inq
			quoted = true
		case c == delim && !inq:
			flush(i)
			rawStart = i + 1
		default:
			r.scratch = append(r.scratch, c)
		}
	}
	if inq {
		return out, false, pgerr.New(pgerr.BadCopyFileFormat, "unterminated CSV quoted field")
	}
	flush(len(rec))
	return out, true, nil
}

var binarySignature = []byte("PGCOPY\n\xff\r\n\x00")

// need makes sure n bytes are buffered.
func (r *copyReader) need(n int) (bool, error) {
	for len(r.buf) < n {
		more, err := r.fill()
		if err != nil {
			return false, err
		}
		if !more {
			return false, nil
		}
	}
	return true, nil
}

func (r *copyReader) nextBinary(out []copyField) ([]copyField, bool, error) {
	bad := func(msg string) ([]copyField, bool, error) {
		return out, false, pgerr.New(pgerr.BadCopyFileFormat, "%s", msg)
	}
	if !r.binHdr {
		ok, err := r.need(19)
		if err != nil {
			return out, false, err
		}
		if !ok || !bytes.Equal(r.buf[:11], binarySignature) {
			return bad("COPY file signature not recognized")
		}
		ext := int(binary.BigEndian.Uint32(r.buf[15:19]))
		if ok, err := r.need(19 + ext); err != nil || !ok {
			return bad("invalid COPY file header (missing length)")
		}
		r.buf = r.buf[19+ext:]
		r.binHdr = true
	}
	ok, err := r.need(2)
	if err != nil {
		return out, false, err
	}
	if !ok {
		if len(r.buf) == 0 {
			return out, false, nil
		}
		return bad("unexpected EOF in COPY data")
	}
	nf := int(int16(binary.BigEndian.Uint16(r.buf)))
	if nf == -1 {
		r.ended = true
		return out, false, nil
	}
	pos := 2
	// the row's fields point into buf, which must not move while they are
	// used: gather the whole row first
	for f := 0; f < nf; f++ {
		if ok, err := r.need(pos + 4); err != nil || !ok {
			return bad("unexpected EOF in COPY data")
		}
		l := int(int32(binary.BigEndian.Uint32(r.buf[pos:])))
		pos += 4
		if l == -1 {
			continue
		}
		if l < 0 {
			return bad("invalid field size")
		}
		if ok, err := r.need(pos + l); err != nil || !ok {
			return bad("unexpected EOF in COPY data")
		}
		pos += l
	}
	row := r.buf[:pos]
	r.buf = r.buf[pos:]
	p := 2
	for f := 0; f < nf; f++ {
		l := int(int32(binary.BigEndian.Uint32(row[p:])))
		p += 4
		if l == -1 {
			out = append(out, copyField{null: true})
			continue
		}
		out = append(out, copyField{data: row[p : p+l]})
		p += l
	}
	return out, true, nil
}
