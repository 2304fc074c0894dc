package server_test

import (
	"context"
	"strings"
	"testing"

	"lockd/internal/lockdtest"
)

// Strings a client sends must be valid UTF-8 (the server encoding), as
// PostgreSQL verifies them on the way in: a query, a parameter's text
// and COPY input with an invalid byte get 22021 with PostgreSQL's
// message (and, for COPY, its context), and the session carries on.
func TestInvalidUTF8Refused(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	if _, err := pc.Exec(ctx, "create table enc (a char(5), b varchar(5), c text)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, msg, where string) {
		t.Helper()
		pe := pgErr(t, err)
		if pe.Code != "22021" || pe.Message != msg || pe.Where != where {
			t.Errorf("%s: %s %q (context %q), want 22021 %q (context %q)", what, pe.Code, pe.Message, pe.Where, msg, where)
		}
		var n int
		if err := c.QueryRow(ctx, "select count(*) from enc").Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: the session after: %d %v", what, n, err)
		}
	}

	_, err := pc.Exec(ctx, "select 'a\xffb'").ReadAll()
	check("simple query", err, `invalid byte sequence for encoding "UTF8": 0xff`, "")

	res := pc.ExecParams(ctx, "select 'x\xe2\x28\xa1'::text", nil, nil, nil, nil).Read()
	check("Parse", res.Err, `invalid byte sequence for encoding "UTF8": 0xe2 0x28 0xa1`, "")

	res = pc.ExecParams(ctx, "insert into enc (c) values ($1)", [][]byte{[]byte("ok\xc3")}, []uint32{25}, []int16{0}, nil).Read()
	check("text parameter", res.Err, `invalid byte sequence for encoding "UTF8": 0xc3`, "")

	res = pc.ExecParams(ctx, "insert into enc (c) values ($1)", [][]byte{[]byte("a\x00b")}, []uint32{25}, []int16{1}, nil).Read()
	check("binary text parameter", res.Err, `invalid byte sequence for encoding "UTF8": 0x00`, "")

	for _, format := range []string{"", " with (format csv)"} {
		_, err = pc.CopyFrom(ctx, strings.NewReader("abc\tde\tfg\nx\xfey\tz\tw\n"), "copy enc from stdin"+strings.ReplaceAll(format, "csv", "csv, delimiter E'\\t'"))
		check("COPY"+format, err, `invalid byte sequence for encoding "UTF8": 0xfe`, "COPY enc, line 2")
	}
}
