package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"lockd/guc"
)

// Spec is an experiment: what it reproduces, the data it sets up, the
// pgbench workloads, the clients swept, the run lengths, the variants
// (named sets of lockd settings) and the targets. docs/experiments/README.md
// documents every field.
type Spec struct {
	Title       string     `toml:"title" json:"title"`
	Reproduces  string     `toml:"reproduces" json:"reproduces"`
	Clients     []int      `toml:"clients" json:"clients"`
	Duration    Duration   `toml:"duration" json:"duration"`
	Warmup      Duration   `toml:"warmup" json:"warmup"`
	Repetitions int        `toml:"repetitions" json:"repetitions"`
	Order       string     `toml:"order" json:"order"`             // "abba" (default) or "random"
	RandomSeed  int64      `toml:"random_seed" json:"random_seed"` // for order = "random"
	Threads     int        `toml:"threads" json:"threads"`         // pgbench -j ceiling (default 2)
	Setup       Setup      `toml:"setup" json:"setup"`
	Workloads   []Workload `toml:"workload" json:"workloads"`
	Lockd       LockdSpec  `toml:"lockd" json:"lockd"`
	Postgres    *PGSpec    `toml:"postgres" json:"postgres,omitempty"`
	Quick       Quick      `toml:"quick" json:"quick"`
	Plots       []PlotSpec `toml:"plot" json:"plots,omitempty"`
	// TableMetrics are derived metrics printed in table.txt after tps and
	// p99 latency, in the same layout.
	TableMetrics []string `toml:"table_metrics" json:"table_metrics,omitempty"`

	// Variants in the order the file lists them; the first is the
	// baseline of every ratio.
	Variants    []Variant          `toml:"-" json:"variants"`
	RawVariants map[string]Variant `toml:"variants" json:"-"`

	File string `toml:"-" json:"file"` // path the spec was read from
	Text string `toml:"-" json:"text"` // the file as read
}

// Setup prepares the data, once per target, before the sweep.
type Setup struct {
	PgbenchInit string   `toml:"pgbench_init" json:"pgbench_init,omitempty"` // options of pgbench -i ("" = no pgbench -i)
	SQL         []string `toml:"sql" json:"sql,omitempty"`                   // SQL files run with psql, relative to the spec
}

// Workload is one pgbench invocation pattern.
type Workload struct {
	Name    string     `toml:"name" json:"name"`
	Title   string     `toml:"title" json:"title,omitempty"`
	Builtin StringList `toml:"builtin" json:"builtin,omitempty"` // pgbench -b NAME[@WEIGHT]
	File    StringList `toml:"file" json:"file,omitempty"`       // pgbench -f FILE[@WEIGHT], relative to the spec
	Mode    string     `toml:"mode" json:"mode"`                 // pgbench -M: simple, extended, prepared
	Options StringList `toml:"options" json:"options,omitempty"` // further pgbench options
	Reset   StringList `toml:"reset_sql" json:"reset_sql,omitempty"`
	// ThinkTime is the script's constant \sleep per transaction; it is
	// subtracted from each transaction's latency, so latencies are
	// response times (as the 2009 table reports them).
	ThinkTime Duration `toml:"think_time" json:"think_time"`
}

// Variant is a named set of lockd settings.
type Variant struct {
	Name     string            `toml:"-" json:"name"`
	Title    string            `toml:"title" json:"title"`
	Settings map[string]any    `toml:"settings" json:"-"`
	Values   map[string]string `toml:"-" json:"settings"` // Settings in PostgreSQL's spelling
}

// LockdSpec configures the lockd target.
type LockdSpec struct {
	Settings map[string]any    `toml:"settings" json:"-"`
	Values   map[string]string `toml:"-" json:"settings"`
	DataDir  string            `toml:"data_dir" json:"data_dir,omitempty"` // an existing data directory to use
}

// PGSpec configures the PostgreSQL target.
type PGSpec struct {
	Title    string            `toml:"title" json:"title"`
	Settings map[string]any    `toml:"settings" json:"-"`
	Values   map[string]string `toml:"-" json:"settings"`
	Bindir   string            `toml:"bindir" json:"bindir,omitempty"`
	DSN      string            `toml:"dsn" json:"dsn,omitempty"`
}

// Quick overrides fields for --quick, the bounded run CI executes.
type Quick struct {
	Clients     []int    `toml:"clients" json:"clients,omitempty"`
	Duration    Duration `toml:"duration" json:"duration"`
	Warmup      Duration `toml:"warmup" json:"warmup"`
	Repetitions int      `toml:"repetitions" json:"repetitions,omitempty"`
	PgbenchInit *string  `toml:"pgbench_init" json:"pgbench_init,omitempty"`
	SQL         []string `toml:"sql" json:"sql,omitempty"`
	Variants    []string `toml:"variants" json:"variants,omitempty"`
	Workloads   []string `toml:"workloads" json:"workloads,omitempty"`
}

// PlotSpec is a mechanism plot: derived metrics against clients (one line
// per variant) or against the variants (bars), or the sampled wait-event
// shares stacked per variant.
type PlotSpec struct {
	Name     string   `toml:"name" json:"name"`
	Title    string   `toml:"title" json:"title"`
	Kind     string   `toml:"kind" json:"kind"` // "metric" (default) or "wait_shares"
	X        string   `toml:"x" json:"x"`       // "clients" (default) or "variant"
	Y        []string `toml:"y" json:"y,omitempty"`
	Workload string   `toml:"workload" json:"workload,omitempty"` // default: every workload, one panel each
	Clients  int      `toml:"clients" json:"clients,omitempty"`   // for x = "variant" and wait_shares: default the largest
}

// Duration is a time.Duration written as "15s", "2m".
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler for TOML.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (write it as \"15s\" or \"2m\")", b)
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// StringList is a TOML string or array of strings.
type StringList []string

// UnmarshalTOML implements toml.Unmarshaler.
func (l *StringList) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*l = StringList{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("expected a string or a list of strings, found %T in the list", e)
			}
			*l = append(*l, s)
		}
	default:
		return fmt.Errorf("expected a string or a list of strings, found %T", v)
	}
	return nil
}

// SpecError is a spec that cannot be run; it names the file, the line and
// the field.
type SpecError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *SpecError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// SpecErrors are all the problems found in one spec.
type SpecErrors []*SpecError

func (es SpecErrors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Builtin scripts and modes pgbench knows.
var (
	builtins = []string{"tpcb-like", "simple-update", "select-only"}
	modes    = []string{"simple", "extended", "prepared"}
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

	decodeErrRE = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)
)

// runnerOwned settings are set by the runner itself (where lockd listens,
// its data directory), so a spec may not set them.
var runnerOwned = []string{"port", "listen_addresses", "data_directory", "config_file", "metrics_listen_address"}

// PostgresArm is the variant name of the PostgreSQL target.
const PostgresArm = "postgres"

// LoadSpec reads and checks the spec in file. Every problem is reported,
// each with file:line and the field.
func LoadSpec(file string) (*Spec, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParseSpec(file, string(data))
}

// ParseSpec checks a spec given as text; file names it in errors and
// anchors the relative paths in it.
func ParseSpec(file, text string) (*Spec, error) {
	s := &Spec{File: file, Text: text}
	md, err := toml.Decode(text, s)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			field := pe.LastKey
			return nil, SpecErrors{{File: file, Line: pe.Position.Line, Field: field, Msg: pe.Message}}
		}
		// type mismatches: "toml: line N (last key "k"): message"
		if m := decodeErrRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, SpecErrors{{File: file, Line: line, Field: m[2], Msg: m[3]}}
		}
		return nil, SpecErrors{{File: file, Msg: err.Error()}}
	}
	c := &checker{file: file, pos: locateKeys(text)}
	for _, k := range md.Undecoded() {
		key := k.String()
		if strings.HasPrefix(key, "variants.") && len(k) > 2 && k[2] == "settings" {
			continue // settings maps are decoded whole
		}
		c.errf(key, "unknown field %q", k[len(k)-1])
	}
	// Variants in file order.
	for _, k := range md.Keys() {
		if len(k) == 2 && k[0] == "variants" {
			v := s.RawVariants[k[1]]
			v.Name = k[1]
			s.Variants = append(s.Variants, v)
		}
	}
	s.defaults()
	s.check(c)
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return s, nil
}

type checker struct {
	file string
	pos  keyPositions
	errs SpecErrors
}

func (c *checker) errf(key, format string, args ...any) {
	c.errs = append(c.errs, &SpecError{File: c.file, Line: c.pos.line(key), Field: stripIndices(key), Msg: fmt.Sprintf(format, args...)})
}

func (s *Spec) defaults() {
	if s.Order == "" {
		s.Order = "abba"
	}
	if s.Threads == 0 {
		s.Threads = 2
	}
	if s.Repetitions == 0 {
		s.Repetitions = 1
	}
	for i := range s.Workloads {
		if s.Workloads[i].Mode == "" {
			s.Workloads[i].Mode = "simple"
		}
	}
	if s.Postgres != nil && s.Postgres.Bindir == "" {
		s.Postgres.Bindir = "/usr/lib/postgresql/15/bin"
	}
	if s.Postgres != nil && s.Postgres.Title == "" {
		s.Postgres.Title = "PostgreSQL"
	}
}

// Path resolves a path written in the spec (relative to the spec's
// directory).
func (s *Spec) Path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.File), p)
}

func (s *Spec) check(c *checker) {
	if strings.TrimSpace(s.Title) == "" {
		c.errf("title", "missing: say what the experiment is")
	}
	if strings.TrimSpace(s.Reproduces) == "" {
		c.errf("reproduces", "missing: name the mailing-list result and table this reproduces")
	}
	checkClients(c, "clients", s.Clients)
	if s.Duration.Duration <= 0 {
		c.errf("duration", "must be positive (for example \"15s\")")
	}
	if s.Warmup.Duration < 0 {
		c.errf("warmup", "must not be negative")
	}
	if s.Repetitions < 1 {
		c.errf("repetitions", "must be at least 1")
	}
	if s.Order != "abba" && s.Order != "random" {
		c.errf("order", "must be \"abba\" or \"random\", not %q", s.Order)
	}
	if s.Threads < 1 {
		c.errf("threads", "must be at least 1")
	}
	s.checkSetup(c)
	s.checkWorkloads(c)
	s.checkVariants(c)
	s.Lockd.Values = checkSettings(c, "lockd.settings", s.Lockd.Settings, true)
	if s.Postgres != nil {
		s.Postgres.Values = checkSettings(c, "postgres.settings", s.Postgres.Settings, false)
	}
	s.checkQuick(c)
	s.checkPlots(c)
	for i, m := range s.TableMetrics {
		if err := checkMetricName(m); err != nil {
			c.errf("table_metrics", "entry %d: %v", i+1, err)
		}
	}
}

func checkClients(c *checker, key string, clients []int) {
	if len(clients) == 0 {
		c.errf(key, "missing: list the client counts, for example [1, 4, 16]")
	}
	seen := map[int]bool{}
	for _, n := range clients {
		if n < 1 {
			c.errf(key, "client count %d: must be at least 1", n)
		}
		if seen[n] {
			c.errf(key, "client count %d is listed twice", n)
		}
		seen[n] = true
	}
}

func (s *Spec) checkSetup(c *checker) {
	for _, f := range s.Setup.SQL {
		if _, err := os.Stat(s.Path(f)); err != nil {
			c.errf("setup.sql", "SQL file %q: %v", f, errors.Unwrap(err))
		}
	}
}

func (s *Spec) checkWorkloads(c *checker) {
	if len(s.Workloads) == 0 {
		c.errf("workload", "missing: add at least one [[workload]]")
	}
	names := map[string]bool{}
	for i, w := range s.Workloads {
		key := func(f string) string { return "workload." + strconv.Itoa(i) + "." + f }
		if !nameRE.MatchString(w.Name) {
			c.errf(key("name"), "workload %d: name %q must be letters, digits, '_', '-' or '.'", i+1, w.Name)
		} else if names[w.Name] {
			c.errf(key("name"), "workload name %q is used twice", w.Name)
		}
		names[w.Name] = true
		if len(w.Builtin) == 0 && len(w.File) == 0 {
			c.errf(key("name"), "workload %q: give a builtin script or a script file", w.Name)
		}
		for _, b := range w.Builtin {
			name, _, err := splitWeight(b)
			if err != nil {
				c.errf(key("builtin"), "%v", err)
			} else if !slices.Contains(builtins, name) {
				c.errf(key("builtin"), "unknown builtin script %q (pgbench has %s)", name, strings.Join(builtins, ", "))
			}
		}
		for _, f := range w.File {
			name, _, err := splitWeight(f)
			if err != nil {
				c.errf(key("file"), "%v", err)
			} else if _, err := os.Stat(s.Path(name)); err != nil {
				c.errf(key("file"), "script file %q: %v", name, errors.Unwrap(err))
			}
		}
		if !slices.Contains(modes, w.Mode) {
			c.errf(key("mode"), "unknown mode %q (pgbench -M takes simple, extended or prepared)", w.Mode)
		}
		for _, o := range w.Options {
			for _, owned := range []string{"-c", "-j", "-T", "-t", "-M", "-h", "-p", "-U", "-l", "-f", "-b", "--log-prefix", "--client", "--jobs", "--time", "--protocol"} {
				if o == owned || strings.HasPrefix(o, owned+"=") {
					c.errf(key("options"), "option %q is set by the runner (clients, duration, mode, scripts, connection, logs)", o)
				}
			}
		}
	}
}

// splitWeight splits pgbench's NAME[@WEIGHT].
func splitWeight(s string) (string, int, error) {
	name, w, ok := strings.Cut(s, "@")
	if !ok {
		return s, 1, nil
	}
	n, err := strconv.Atoi(w)
	if err != nil || n < 0 {
		return "", 0, fmt.Errorf("weight in %q must be a non-negative integer", s)
	}
	return name, n, nil
}

func (s *Spec) checkVariants(c *checker) {
	if len(s.Variants) == 0 {
		c.errf("variants", "missing: add at least one [variants.NAME] table")
	}
	for i := range s.Variants {
		v := &s.Variants[i]
		key := "variants." + v.Name
		if !nameRE.MatchString(v.Name) {
			c.errf(key, "variant name %q must be letters, digits, '_', '-' or '.'", v.Name)
		}
		if v.Name == PostgresArm {
			c.errf(key, "the variant name %q is the PostgreSQL target's", PostgresArm)
		}
		if v.Title == "" {
			v.Title = v.Name
		}
		v.Values = checkSettings(c, key+".settings", v.Settings, true)
	}
}

// checkSettings turns settings into PostgreSQL's spelling and, for lockd,
// checks each name and value against lockd's settings table.
func checkSettings(c *checker, key string, m map[string]any, lockd bool) map[string]string {
	out := map[string]string{}
	for name, raw := range m {
		k := key + "." + name
		val, err := settingString(raw)
		if err != nil {
			c.errf(k, "%v", err)
			continue
		}
		if lockd {
			d, ok := guc.Lookup(name)
			switch {
			case !ok:
				c.errf(k, "unknown setting %q (not in lockd's settings table; see lockd.conf.example)", name)
				continue
			case d.Context == guc.Internal:
				c.errf(k, "setting %q cannot be changed (it is internal)", name)
				continue
			case slices.Contains(runnerOwned, d.Name):
				c.errf(k, "setting %q is set by the runner", name)
				continue
			}
			if _, err := guc.ParseValue(d, val); err != nil {
				c.errf(k, "%v", err)
				continue
			}
			name = d.Name
		}
		out[name] = val
	}
	return out
}

// settingString spells a TOML value as PostgreSQL would take it.
func settingString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		if x {
			return "on", nil
		}
		return "off", nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("a setting's value must be a string, number or boolean, not %T", v)
}

func (s *Spec) checkQuick(c *checker) {
	q := &s.Quick
	if len(q.Clients) > 0 {
		checkClients(c, "quick.clients", q.Clients)
	}
	if q.Duration.Duration < 0 || q.Warmup.Duration < 0 || q.Repetitions < 0 {
		c.errf("quick", "durations and repetitions must not be negative")
	}
	for _, f := range q.SQL {
		if _, err := os.Stat(s.Path(f)); err != nil {
			c.errf("quick.sql", "SQL file %q: %v", f, errors.Unwrap(err))
		}
	}
	for _, v := range q.Variants {
		if !slices.ContainsFunc(s.Variants, func(x Variant) bool { return x.Name == v }) && v != PostgresArm {
			c.errf("quick.variants", "no variant named %q", v)
		}
	}
	for _, w := range q.Workloads {
		if !slices.ContainsFunc(s.Workloads, func(x Workload) bool { return x.Name == w }) {
			c.errf("quick.workloads", "no workload named %q", w)
		}
	}
}

func (s *Spec) checkPlots(c *checker) {
	names := map[string]bool{"throughput": true, "latency_p99": true}
	for i := range s.Plots {
		p := &s.Plots[i]
		key := func(f string) string { return "plot." + strconv.Itoa(i) + "." + f }
		if !nameRE.MatchString(p.Name) {
			c.errf(key("name"), "plot %d: name %q must be letters, digits, '_', '-' or '.'", i+1, p.Name)
		} else if names[p.Name] {
			c.errf(key("name"), "plot name %q is used twice (throughput and latency_p99 are always drawn)", p.Name)
		}
		names[p.Name] = true
		if p.Kind == "" {
			p.Kind = "metric"
		}
		if p.X == "" {
			p.X = "clients"
		}
		switch p.Kind {
		case "metric":
			if len(p.Y) == 0 {
				c.errf(key("y"), "plot %q: list the metrics to draw", p.Name)
			}
			for _, y := range p.Y {
				if err := checkMetricName(y); err != nil {
					c.errf(key("y"), "plot %q: %v", p.Name, err)
				}
			}
		case "wait_shares":
		default:
			c.errf(key("kind"), "plot %q: kind must be \"metric\" or \"wait_shares\", not %q", p.Name, p.Kind)
		}
		if p.X != "clients" && p.X != "variant" {
			c.errf(key("x"), "plot %q: x must be \"clients\" or \"variant\", not %q", p.Name, p.X)
		}
		if p.Workload != "" && !slices.ContainsFunc(s.Workloads, func(w Workload) bool { return w.Name == p.Workload }) {
			c.errf(key("workload"), "plot %q: no workload named %q", p.Name, p.Workload)
		}
		if p.Clients != 0 && !slices.Contains(s.Clients, p.Clients) {
			c.errf(key("clients"), "plot %q: %d is not in clients", p.Name, p.Clients)
		}
	}
}

// ApplyQuick returns the spec as --quick runs it.
func (s *Spec) ApplyQuick() *Spec {
	q := *s
	if len(s.Quick.Clients) > 0 {
		q.Clients = s.Quick.Clients
	}
	if s.Quick.Duration.Duration > 0 {
		q.Duration = s.Quick.Duration
	}
	if s.Quick.Warmup.Duration > 0 {
		q.Warmup = s.Quick.Warmup
	}
	if s.Quick.Repetitions > 0 {
		q.Repetitions = s.Quick.Repetitions
	}
	if s.Quick.PgbenchInit != nil {
		q.Setup.PgbenchInit = *s.Quick.PgbenchInit
	}
	if len(s.Quick.SQL) > 0 {
		q.Setup.SQL = s.Quick.SQL
	}
	if len(s.Quick.Variants) > 0 {
		q.Variants = nil
		for _, v := range s.Variants {
			if slices.Contains(s.Quick.Variants, v.Name) {
				q.Variants = append(q.Variants, v)
			}
		}
	}
	if len(s.Quick.Workloads) > 0 {
		q.Workloads = nil
		for _, w := range s.Workloads {
			if slices.Contains(s.Quick.Workloads, w.Name) {
				q.Workloads = append(q.Workloads, w)
			}
		}
	}
	// Plots pinned to a client count the quick run lacks draw at its largest.
	q.Plots = slices.Clone(s.Plots)
	for i := range q.Plots {
		if q.Plots[i].Clients != 0 && !slices.Contains(q.Clients, q.Plots[i].Clients) {
			q.Plots[i].Clients = 0
		}
	}
	return &q
}
