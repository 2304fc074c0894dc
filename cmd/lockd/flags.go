package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

const usage = `lockd is a PostgreSQL-protocol server that re-implements PostgreSQL's
locking subsystem so its scalability tunables can be studied live.

Usage:
  lockd [OPTION]...
  lockd version
  lockd bench FILE.toml [--out DIR] [--quick] [--only VARIANT] [--postgres BINDIR | DSN]
                      run an experiment (lockd bench --help)
  lockd metrics-web-config USER PASSWORD_FILE
                      print a metrics_web_config_file asking for that basic-auth user

Options:
  -D DATADIR          data directory (default ./lockd-data)
  -p PORT             port to listen on (setting "port", default 5433)
  -c NAME=VALUE       set a setting (also --NAME=VALUE)
  -C NAME             print the value of a setting and exit
  -U NAME             superuser a new data directory gets (default postgres)
  --pwfile FILE       its password, from the first line of FILE (new data directory only)
  --config FILE       configuration file, TOML or postgresql.conf syntax
                      (default DATADIR/lockd.conf if present)
  -V, --version       print the version and exit
  --help              show this help and exit

Settings are documented in lockd.conf.example. Signals: SIGHUP reloads the
configuration, SIGTERM shuts down after sessions end, SIGINT aborts sessions
and shuts down, SIGQUIT shuts down immediately.
`

// options are what the command line asks for.
type options struct {
	dataDir  string
	config   string
	settings [][2]string // -p, -c and --name=value, in command-line order
	show     string
	user     string // -U: the bootstrap superuser of a new data directory
	pwfile   string // --pwfile: its password
}

// usageError is a command line that cannot be run (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseArgs parses the options with the flag package. postgres takes
// forms that package does not (a value glued to its letter, -DDATADIR, and
// --name=value for any setting), so normalize rewrites those first and
// refuses anything else that is not an option, in postgres' words.
func parseArgs(args []string) (*options, error) {
	o := &options{dataDir: "lockd-data"}
	var bad error // the first -c without a value
	fs := flag.NewFlagSet("lockd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.dataDir, "D", o.dataDir, "data directory")
	fs.StringVar(&o.show, "C", "", "print the value of a setting and exit")
	fs.StringVar(&o.user, "U", "", "bootstrap superuser")
	fs.StringVar(&o.pwfile, "pwfile", "", "bootstrap superuser's password file")
	fs.StringVar(&o.config, "config", "", "configuration file")
	fs.Func("p", "port", func(v string) error {
		o.settings = append(o.settings, [2]string{"port", v})
		return nil
	})
	fs.Func("c", "NAME=VALUE", func(v string) error {
		name, value, ok := strings.Cut(v, "=")
		if !ok {
			bad = &usageError{fmt.Sprintf("-c %s requires a value", v)}
			return bad
		}
		o.settings = append(o.settings, [2]string{strings.ReplaceAll(name, "-", "_"), value})
		return nil
	})
	// Options before the first bad argument are parsed first, so that an
	// earlier error is the one reported.
	norm, normErr := normalize(args)
	if err := fs.Parse(norm); err != nil {
		if bad != nil {
			return nil, bad
		}
		return nil, &usageError{err.Error()}
	}
	if normErr != nil {
		return nil, normErr
	}
	return o, nil
}

// normalize turns postgres-style arguments into the flag package's
// "-name value" pairs. It stops at the first argument that is not an
// option lockd has, returning the pairs before it and the error.
func normalize(args []string) ([]string, error) {
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-D" || a == "-p" || a == "-c" || a == "-C" || a == "-U" || a == "--config" || a == "--pwfile":
			if i+1 >= len(args) {
				return out, &usageError{fmt.Sprintf("option %s requires an argument", a)}
			}
			out = append(out, a, args[i+1])
			i++
		case len(a) > 2 && (strings.HasPrefix(a, "-D") || strings.HasPrefix(a, "-p") || strings.HasPrefix(a, "-c") || strings.HasPrefix(a, "-U")):
			out = append(out, a[:2], a[2:])
		case strings.HasPrefix(a, "--config="):
			out = append(out, "--config", strings.TrimPrefix(a, "--config="))
		case strings.HasPrefix(a, "--pwfile="):
			out = append(out, "--pwfile", strings.TrimPrefix(a, "--pwfile="))
		case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
			out = append(out, "-c", strings.TrimPrefix(a, "--"))
		default:
			return out, &usageError{fmt.Sprintf("invalid argument: \"%s\"", a)}
		}
	}
	return out, nil
}
