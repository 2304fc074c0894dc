package exec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
