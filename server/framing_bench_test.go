package server

import (
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// loopReader hands out the same bytes on every Read, as a client repeating
// one pgbench step does.
type loopReader struct{ b []byte }

func (l *loopReader) Read(p []byte) (int, error) { return copy(p, l.b), nil }

// BenchmarkFrameReader measures what the framing check adds to receiving
// one pgbench -M prepared step (Bind, Execute, Sync in one read).
func BenchmarkFrameReader(b *testing.B) {
	step, err := (&pgproto3.Bind{PreparedStatement: "P0_1", Parameters: [][]byte{[]byte("123456")}}).Encode(nil)
	if err != nil {
		b.Fatal(err)
	}
	step, _ = (&pgproto3.Execute{}).Encode(step)
	step, _ = (&pgproto3.Sync{}).Encode(step)
	for _, framed := range []bool{false, true} {
		name := "pgproto3"
		var r io.Reader = &loopReader{b: step}
		if framed {
			name = "frameReader+pgproto3"
			r = &frameReader{r: r}
		}
		b.Run(name, func(b *testing.B) {
			be := pgproto3.NewBackend(r, io.Discard)
			b.ReportAllocs()
			for b.Loop() {
				for range 3 {
					if _, err := be.Receive(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
