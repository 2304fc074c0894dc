package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"lockd/bench"
)

const benchUsage = `Usage:
  lockd bench FILE.toml [--out DIR] [--quick] [--only VARIANT[,VARIANT...]] [--postgres BINDIR | DSN | none] [--keep]

Runs the experiment FILE.toml: starts lockd (and PostgreSQL beside it when
the spec has a [postgres] table and PostgreSQL is installed), sweeps the
variants × clients with pgbench, and writes results.csv, results.json,
table.txt and the plots (PNG and SVG) into DIR (default
bench-results/NAME). The specs in experiments/ reproduce the mailing-list
results; docs/experiments/README.md describes the format.

Options:
  --out DIR           where to write the results (created if missing)
  --quick             the short version of the sweep (the spec's [quick] table)
  --only LIST         run only these variants ("postgres" is the PostgreSQL target)
  --postgres WHERE    PostgreSQL's bin directory, a DSN of a running server, or
                      "none"; default: the spec's bindir, skipped with a warning
                      when PostgreSQL is not installed there
  --keep              keep the work directory (data directories, PostgreSQL's files)
  --replot DIR        draw the table and plots again from DIR/results.json, with
                      FILE's [[plot]] and table_metrics (nothing is run)

Ctrl-C stops the current run and the servers, and writes what was
measured so far, flagged partial. Exit codes: 0 done, 1 failed or
interrupted, 2 usage error or invalid spec.
`

// runBench is `lockd bench`.
func runBench(args []string, stdout, stderr io.Writer) int {
	var out, only, postgres, replot string
	var quick, keep, help bool
	fs := flag.NewFlagSet("lockd bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&out, "out", "", "output directory")
	fs.BoolVar(&quick, "quick", false, "short sweep")
	fs.StringVar(&only, "only", "", "variants to run")
	fs.StringVar(&postgres, "postgres", "", "PostgreSQL bindir, DSN or none")
	fs.BoolVar(&keep, "keep", false, "keep the work directory")
	fs.BoolVar(&help, "help", false, "help")
	fs.StringVar(&replot, "replot", "", "redraw from DIR/results.json")
	// The spec file may come before, between or after the options.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			fmt.Fprintf(stderr, "lockd bench: %v\n%s", err, benchUsage)
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if help {
		fmt.Fprint(stdout, benchUsage)
		return 0
	}
	if len(files) != 1 {
		fmt.Fprintf(stderr, "lockd bench: give one experiment spec (FILE.toml)\n%s", benchUsage)
		return 2
	}
	spec, err := bench.LoadSpec(files[0])
	if err != nil {
		fmt.Fprintf(stderr, "lockd bench: invalid spec, nothing was run:\n%v\n", err)
		return 2
	}
	if replot != "" {
		res, err := bench.Replot(spec, replot)
		if err != nil {
			fmt.Fprintf(stderr, "lockd bench: %v\n", err)
			return 1
		}
		fmt.Fprint(stdout, res.Table())
		return 0
	}
	if out == "" {
		name := strings.TrimSuffix(filepath.Base(files[0]), filepath.Ext(files[0]))
		if quick {
			name += "-quick"
		}
		out = filepath.Join("bench-results", name)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "lockd bench: cannot find the lockd binary to run: %v\n", err)
		return 1
	}
	cfg := bench.Config{Spec: spec, OutDir: out, Quick: quick, Postgres: postgres, LockdBin: self, Keep: keep, Progress: stderr}
	if only != "" {
		cfg.Only = strings.Split(only, ",")
	}
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			cfg.Terminal = true
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Execute(ctx, cfg)
	if res == nil {
		fmt.Fprintf(stderr, "lockd bench: %v\n", err)
		return 1
	}
	if len(res.Runs) > 0 {
		fmt.Fprint(stdout, res.Table())
		fmt.Fprintf(stdout, "\nResults in %s: table.txt, results.csv, results.json, plots (PNG and SVG), logs/\n", out)
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "lockd bench: interrupted; the runs measured so far are in %s (flagged partial)\n", out)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "lockd bench: %v\n", err)
		return 1
	}
	return 0
}
