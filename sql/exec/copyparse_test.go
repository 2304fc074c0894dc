package exec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// chunkSource hands out data in pieces of the given sizes (cycled), as a
// client's CopyData messages split it.
func chunkSource(data []byte, sizes []int) CopySource {
	k := 0
	return func() ([]byte, bool, error) {
		if len(data) == 0 {
			return nil, true, nil
		}
		n := min(sizes[k%len(sizes)], len(data))
		k++
		// a fresh copy each time, overwritten on the next call, as the
		// protocol's buffer is
		chunk := append([]byte(nil), data[:n]...)
		data = data[n:]
		return chunk, false, nil
	}
}

// readAll reads every row, rendering each as its fields joined by "|"
// (NULL as <null>), with the line each came from.
func readAll(t *testing.T, r *copyReader) []string {
	t.Helper()
	var rows []string
	var fields []copyField
	for {
		var more bool
		var err error
		fields, more, err = r.next(fields[:0])
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return rows
		}
		var b strings.Builder
		for i, f := range fields {
			if i > 0 {
				b.WriteByte('|')
			}
			if f.null {
				b.WriteString("<null>")
			} else {
				b.Write(f.data)
			}
		}
		rows = append(rows, b.String()+" @ "+string(r.line))
	}
}

// TestCopyReaderChunks reads the same text, CSV and binary input split
// into messages every way — a message per row as pgbench sends them, a
// byte at a time, rows spanning messages, messages larger than the
// reader's buffer — and checks every split reads the same rows.
func TestCopyReaderChunks(t *testing.T) {
	var text bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&text, "%d\t%d\t0\t\n", i+1, i/100+1)
		if i%500 == 0 {
			text.WriteString("a\\tb\\\\c\\101\t\\N\t\t" + strings.Repeat("x", 70000) + "\r\n")
		}
	}
	text.WriteString("\\.\n")
	csv := []byte("1,\"two\nlines\",,\"\"\n2,\"say \"\"hi\"\"\",x,y\r\n")
	bin := append([]byte(nil), binarySignature...)
	bin = append(bin, 0, 0, 0, 0, 0, 0, 0, 0)
	for i := range 2000 {
		bin = append(bin, 0, 2, 0, 0, 0, 4, 0, 0, byte(i>>8), byte(i), 0xff, 0xff, 0xff, 0xff)
	}
	bin = append(bin, 0xff, 0xff)

	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]int, 200)
	for i := range random {
		random[i] = 1 + rng.IntN(300)
	}
	splits := map[string][]int{
		"whole":    {1 << 30},
		"byte":     {1},
		"small":    {7, 3, 11},
		"random":   random,
		"64kB":     {64 << 10},
		"over64kB": {100 << 10, 5},
	}
	for _, in := range []struct {
		name string
		opts copyOptions
		data []byte
	}{
		{"text", copyOptions{format: 't', delim: '\t', null: `\N`}, text.Bytes()},
		{"csv", copyOptions{format: 'c', delim: ',', quote: '"', escape: '"'}, csv},
		{"binary", copyOptions{format: 'b'}, bin},
	} {
		want := readAll(t, &copyReader{src: chunkSource(in.data, []int{1 << 30}), opts: in.opts})
		if len(want) == 0 {
			t.Fatalf("%s: no rows", in.name)
		}
		for name, sizes := range splits {
			got := readAll(t, &copyReader{src: chunkSource(in.data, sizes), opts: in.opts})
			if len(got) != len(want) {
				t.Errorf("%s split %s: %d rows, want %d", in.name, name, len(got), len(want))
				continue
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s split %s: row %d = %.80q, want %.80q", in.name, name, i, got[i], want[i])
					break
				}
			}
		}
	}
	// a message per row: once the buffer has its size, reading a row
	// allocates nothing
	var rows bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&rows, "%d\t%d\t0\t\n", i+1, i/100+1)
	}
	lines := bytes.SplitAfter(rows.Bytes(), []byte("\n"))
	k := 0
	r := &copyReader{opts: copyOptions{format: 't', delim: '\t', null: `\N`}}
	r.src = func() ([]byte, bool, error) { k++; return lines[k%len(lines)], false, nil }
	fields := make([]copyField, 0, 4)
	allocs := testing.AllocsPerRun(10, func() {
		for range 1000 {
			var err error
			if fields, _, err = r.next(fields[:0]); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("reading 1,000 rows a message each: %v allocs, want 0", allocs)
	}
}

// TestSplitText checks text-format fields: escapes, escaped delimiters,
// NULL recognized on the raw text, the empty string against \N.
func TestSplitText(t *testing.T) {
	text := copyOptions{format: 't', delim: '\t', null: `\N`}
	for _, tc := range []struct {
		opts copyOptions
		line string
		want []string // "<null>" for NULL
	}{
		{text, "1\t1\t0\t", []string{"1", "1", "0", ""}},
		{text, "", []string{""}},
		{text, "\t", []string{"", ""}},
		{text, `\N`, []string{"<null>"}},
		{text, `\N` + "\t\t" + `\N`, []string{"<null>", "", "<null>"}},
		{text, `\\N`, []string{`\N`}},
		{text, `\Nx`, []string{"Nx"}},
		{text, `a\tb\nc\rd\be\ff\vg`, []string{"a\tb\nc\rd\be\ff\vg"}},
		{text, `\101\1010\08\7777`, []string{"AA0\x008\xff7"}},
		{text, "a\\\tb\tc", []string{"a\tb", "c"}},
		{text, `a\\` + "\tb", []string{`a\`, "b"}},
		{text, `x\`, []string{`x\`}},
		{text, `\q\.\\`, []string{`q.\`}},
		{text, " 12 \t-3", []string{" 12 ", "-3"}},
		{copyOptions{format: 't', delim: '|', null: ""}, "a||\\|b|", []string{"a", "<null>", "|b", "<null>"}},
		{copyOptions{format: 't', delim: ',', null: "NULL"}, `NULL,\NULL,N\ULL,`, []string{"<null>", "NULL", "NULL", ""}},
		{copyOptions{format: 't', delim: '\\', null: `\N`}, `a\b\\c`, []string{"a", "b", "", "c"}},
	} {
		r := &copyReader{opts: tc.opts}
		var got []string
		for _, f := range r.splitText([]byte(tc.line), nil) {
			if f.null {
				got = append(got, "<null>")
			} else {
				got = append(got, string(f.data))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("delimiter %q, null %q, line %q: %q, want %q", tc.opts.delim, tc.opts.null, tc.line, got, tc.want)
		}
	}
}

// splitTextSlow is text-format splitting written the plain way, a byte
// at a time into scratch, for TestSplitTextExhaustive to compare with.
func splitTextSlow(l []byte, o copyOptions) []string {
	var out []string
	var field []byte
	fieldStart := 0
	flush := func(end int) {
		if string(l[fieldStart:end]) == o.null {
			out = append(out, "<null>")
		} else {
			out = append(out, string(field))
		}
		field = field[:0]
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == o.delim:
			flush(i)
			fieldStart = i + 1
		case c == '\\' && i+1 < len(l):
			i++
			if e, ok := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f', 'v': '\v'}[l[i]]; ok {
				field = append(field, e)
			} else if l[i] >= '0' && l[i] <= '7' {
				v := int(l[i] - '0')
				for k := 0; k < 2 && i+1 < len(l) && l[i+1] >= '0' && l[i+1] <= '7'; k++ {
					i++
					v = v*8 + int(l[i]-'0')
				}
				field = append(field, byte(v))
			} else {
				field = append(field, l[i])
			}
		default:
			field = append(field, c)
		}
	}
	flush(len(l))
	return out
}

// TestSplitTextExhaustive compares splitText with splitTextSlow on every
// line of up to six characters from an alphabet of delimiters,
// backslashes, escape letters and octal digits.
func TestSplitTextExhaustive(t *testing.T) {
	for _, o := range []copyOptions{
		{format: 't', delim: '\t', null: `\N`},
		{format: 't', delim: ',', null: ""},
		{format: 't', delim: '\\', null: `\N`},
	} {
		alphabet := []byte{o.delim, '\\', 'N', 'n', 'x', '1', '7', '\t'}
		r := &copyReader{opts: o}
		var fields []copyField
		var gen func(line []byte, n int)
		gen = func(line []byte, n int) {
			fields = r.splitText(line, fields[:0])
			got := make([]string, len(fields))
			for i, f := range fields {
				got[i] = string(f.data)
				if f.null {
					got[i] = "<null>"
				}
			}
			if want := splitTextSlow(line, o); !slices.Equal(got, want) {
				t.Fatalf("delimiter %q, line %q: %q, want %q", o.delim, line, got, want)
			}
			if n > 0 {
				for _, c := range alphabet {
					gen(append(line, c), n-1)
				}
			}
		}
		gen(nil, 6)
	}
}
