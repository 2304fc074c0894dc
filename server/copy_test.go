package server_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

func copyOut(t *testing.T, pc *pgconn.PgConn, sql string) string {
	t.Helper()
	var buf bytes.Buffer
	tag, err := pc.CopyTo(context.Background(), &buf, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if !strings.HasPrefix(tag.String(), "COPY ") {
		t.Fatalf("%s: tag %q", sql, tag)
	}
	return buf.String()
}

func TestCopyFormats(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	mustExec(t, c, "create table cp (id int primary key, name text, note varchar(20), amount numeric, at timestamptz)")
	csv := "id,name,note,amount,at\n" +
		"1,plain,,1.50,2024-01-02 03:04:05+00\n" +
		"2,\"with, comma\",\"\",2,2024-01-02 03:04:05+00\n" +
		"3,\"two\nlines\",\"say \"\"hi\"\"\",3.25,\n"
	tag, err := pc.CopyFrom(ctx, strings.NewReader(csv), "copy cp from stdin with (format csv, header)")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("csv in: %v %v", tag, err)
	}
	if got := queryText(t, c, "select id, name, note is null, note, amount, at is null from cp order by id"); got != "1,plain,t,NULL,1.50,f|2,with, comma,f,,2,f|3,two\nlines,f,say \"hi\",3.25,t" {
		t.Fatalf("after csv: %q", got)
	}
	if got := copyOut(t, pc, "copy cp (id, name, note) to stdout"); got != "1\tplain\t\\N\n2\twith, comma\t\n3\ttwo\\nlines\tsay \"hi\"\n" {
		t.Fatalf("text out: %q", got)
	}
	if got := copyOut(t, pc, "copy (select id, name from cp where id > 1 order by id) to stdout with (format csv, header)"); got != "id,name\n2,\"with, comma\"\n3,\"two\nlines\"\n" {
		t.Fatalf("csv out: %q", got)
	}
	// binary out and back in, through a server-side file
	dir := t.TempDir()
	file := filepath.Join(dir, "data.bin")
	mustExec(t, c, "copy (select g.i::text from generate_series(1, 10000) g(i)) to '"+file+"' with binary")
	mustExec(t, c, "create table data2 (v text)")
	if tag, err := pc.Exec(ctx, "copy data2 from '"+file+"' with binary").ReadAll(); err != nil || tag[0].CommandTag.String() != "COPY 10000" {
		t.Fatalf("binary file in: %v %v", tag, err)
	}
	if got := queryText(t, c, "select count(*), sum(v::int), max(length(v)) from data2"); got != "10000,50005000,5" {
		t.Fatalf("after binary: %s", got)
	}
	bin := copyOut(t, pc, "copy (select 7::int4, 'x'::text, null::int8) to stdout with (format binary)")
	if !strings.HasPrefix(bin, "PGCOPY\n\xff\r\n\x00") || !strings.HasSuffix(bin, "\xff\xff") {
		t.Fatalf("binary out: %q", bin)
	}
	// pgx's CopyFrom speaks binary COPY FROM STDIN
	n, err := c.CopyFrom(ctx, pgx.Identifier{"cp"}, []string{"id", "name", "amount"},
		pgx.CopyFromRows([][]any{{10, "ten", 10.5}, {11, nil, 0}}))
	if err != nil || n != 2 {
		t.Fatalf("pgx CopyFrom: %v %v", n, err)
	}
	if got := queryText(t, c, "select id, name, amount from cp where id >= 10 order by id"); got != "10,ten,10.5|11,NULL,0" {
		t.Fatalf("after pgx copy: %s", got)
	}
	// errors: a missing file, and a bad row with its line number
	_, err = c.Exec(ctx, "copy cp from '/no/such/file'")
	if pe := pgErr(t, err); pe.Code != "58P01" || pe.Message != `could not open file "/no/such/file" for reading: No such file or directory` {
		t.Fatalf("missing file: %v", err)
	}
	_, err = pc.CopyFrom(ctx, strings.NewReader("20\tok\n21\tok\nx\tbad\n"), "copy cp (id, name) from stdin")
	if pe := pgErr(t, err); pe.Code != "22P02" || pe.Detail != "COPY cp, line 3" {
		t.Fatalf("bad row: %v %q", err, pe.Detail)
	}
	if got := queryText(t, c, "select count(*) from cp where id >= 20"); got != "0" {
		t.Fatalf("failed COPY left rows: %s", got)
	}
}
