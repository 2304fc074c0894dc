package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config is one invocation of the runner.
type Config struct {
	Spec     *Spec
	OutDir   string
	Quick    bool
	Only     []string // variant names (and "postgres") to run; empty = all
	Postgres string   // --postgres: "" (the spec's), "none", a bindir or a DSN
	LockdBin string   // the lockd binary to run as the lockd target
	Keep     bool     // keep the work directory (data directories)
	Progress io.Writer
	Terminal bool // Progress is a terminal: draw a bar
}

// arm is one column of the table: a lockd variant or the PostgreSQL target.
type arm struct {
	target   string // "lockd" or "postgres"
	variant  string
	title    string
	settings map[string]string
}

// Results is everything a sweep produced; output.go writes it.
type Results struct {
	Spec      *Spec                        `json:"spec"`
	Quick     bool                         `json:"quick"`
	Partial   bool                         `json:"partial"`
	Order     string                       `json:"order"`
	Started   time.Time                    `json:"started"`
	Finished  time.Time                    `json:"finished"`
	Versions  map[string]string            `json:"versions"`
	Machine   map[string]string            `json:"machine"`
	Settings  map[string]map[string]string `json:"settings_in_force"` // by arm (variant name or "postgres")
	Arms      []string                     `json:"arms"`              // table columns, baseline first
	Warnings  []string                     `json:"warnings,omitempty"`
	Runs      []*Run                       `json:"runs"`
	armTitles map[string]string
}

// noiseShare is the share of the machine's CPU used by other processes
// during a run above which the run is flagged.
const noiseShare = 0.10

// Execute runs the sweep and writes its files; it returns an error when
// nothing could be measured or the files could not be written. A
// cancelled ctx ends the sweep early with partial results written.
func Execute(ctx context.Context, cfg Config) (*Results, error) {
	spec := cfg.Spec
	if cfg.Quick {
		spec = spec.ApplyQuick()
	}
	arms, err := buildArms(spec, cfg)
	if err != nil {
		return nil, err
	}
	pgbench, err := lookBin("pgbench", pgBindirs(spec, cfg)...)
	if err != nil {
		return nil, err
	}
	psql, err := lookBin("psql", pgBindirs(spec, cfg)...)
	if err != nil {
		return nil, err
	}
	pgMode, pgWhere, warn, err := resolvePostgres(spec, cfg)
	if err != nil {
		return nil, err
	}
	if pgMode == "" {
		arms = slices.DeleteFunc(arms, func(a arm) bool { return a.target == "postgres" })
	}
	if len(arms) == 0 {
		return nil, errors.New("nothing to run: --only left no variant")
	}
	logDir := filepath.Join(cfg.OutDir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	prog := newProgress(cfg.Progress, cfg.Terminal)
	if warn != "" {
		prog.warn(warn)
	}
	res := &Results{Spec: spec, Quick: cfg.Quick, Order: spec.Order, Started: time.Now(),
		Settings: map[string]map[string]string{}, armTitles: map[string]string{}}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	for _, a := range arms {
		res.Arms = append(res.Arms, a.variant)
		res.armTitles[a.variant] = a.title
	}
	res.Machine = machineInfo()
	res.Versions = map[string]string{"go": runtime.Version(), "pgbench": firstLine(pgbench, "--version"), "lockd": firstLine(cfg.LockdBin, "version")}

	r := &runner{cfg: cfg, spec: spec, arms: arms, res: res, prog: prog, logDir: logDir, pgbench: pgbench, psql: psql, scale: map[string]int{}}
	err = r.sweep(ctx, pgMode, pgWhere)
	res.Finished = time.Now()
	prog.finish()
	if werr := writeOutputs(cfg.OutDir, res); werr != nil {
		return res, werr
	}
	return res, err
}

type runner struct {
	cfg     Config
	spec    *Spec
	arms    []arm
	res     *Results
	prog    *progress
	logDir  string
	pgbench string
	psql    string
	targets map[string]target
	scale   map[string]int // :scale for custom scripts, by target
	current string         // the variant whose settings lockd has in force
	names   []string       // every setting any variant sets
}

// sweep starts the targets, sets up the data, runs the plan and stops the
// targets. It returns ctx's error when interrupted.
func (r *runner) sweep(ctx context.Context, pgMode, pgWhere string) (err error) {
	workDir, err := os.MkdirTemp("", "lockd-bench-")
	if err != nil {
		return err
	}
	_ = os.Chmod(workDir, 0o711)
	r.targets = map[string]target{}
	defer func() {
		if lt := r.targets["lockd"]; lt != nil && r.spec.Lockd.DataDir != "" && lt.Alive() == nil {
			// an existing data directory keeps no variant's ALTER SYSTEM
			var resets []string
			for _, n := range r.names {
				resets = append(resets, "alter system reset "+n)
			}
			if err := execSQL(context.Background(), lt.ConnInfo(), resets...); err != nil {
				r.prog.warn("resetting the variants' settings in " + r.spec.Lockd.DataDir + ": " + err.Error())
			}
		}
		for _, k := range []string{"lockd", "postgres"} {
			if t := r.targets[k]; t != nil {
				if serr := t.Stop(); serr != nil {
					r.prog.warn(serr.Error())
				}
			}
		}
		if r.cfg.Keep {
			r.prog.warn("work directory kept: " + workDir)
		} else {
			os.RemoveAll(workDir)
		}
		if ctx.Err() != nil {
			r.res.Partial = true
			err = ctx.Err()
		}
	}()
	for _, v := range r.spec.Variants {
		for n := range v.Values {
			if !slices.Contains(r.names, n) {
				r.names = append(r.names, n)
			}
		}
	}
	sort.Strings(r.names)

	r.prog.status("starting lockd")
	lt, err := startLockd(ctx, r.cfg.LockdBin, workDir, r.spec.Lockd.DataDir, r.spec.Lockd.Values, r.logDir)
	if err != nil {
		return err
	}
	r.targets["lockd"] = lt
	switch pgMode {
	case "bindir":
		r.prog.status("starting PostgreSQL (initdb)")
		pt, err := startPostgres(ctx, pgWhere, workDir, r.spec.Postgres.Values, r.logDir)
		if err != nil {
			return err
		}
		r.targets["postgres"] = pt
	case "dsn":
		pt, err := connectPostgres(ctx, pgWhere)
		if err != nil {
			return err
		}
		r.targets["postgres"] = pt
	}
	for _, k := range []string{"lockd", "postgres"} {
		if t := r.targets[k]; t != nil {
			r.prog.status("setting up the data on " + k)
			if err := r.setup(ctx, t); err != nil {
				return err
			}
			if v := serverVersion(ctx, t); v != "" {
				r.res.Versions[k+"_server"] = v
			}
		}
	}
	plan := r.plan()
	r.prog.start(len(plan), r.spec.Warmup.Duration+r.spec.Duration.Duration)
	for _, run := range plan {
		if ctx.Err() != nil {
			break
		}
		r.prog.runStart(run)
		r.measure(ctx, run)
		r.res.Runs = append(r.res.Runs, run)
		r.prog.runEnd(run)
		if run.Warning != "" {
			r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("run %d: %s", run.Index, run.Warning))
		}
	}
	return nil
}

// plan orders the runs: for each workload, repetition and client count a
// block holds every arm once, in the spec's order for odd repetitions and
// reversed for even ones (ABBA), or shuffled (order = "random", seeded).
func (r *runner) plan() []*Run {
	var out []*Run
	rng := rand.New(rand.NewPCG(uint64(r.spec.RandomSeed), 0x6c6f636b64))
	block := 0
	for _, w := range r.spec.Workloads {
		for rep := 1; rep <= r.spec.Repetitions; rep++ {
			for _, c := range r.spec.Clients {
				block++
				order := slices.Clone(r.arms)
				switch {
				case r.spec.Order == "random":
					rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				case rep%2 == 0:
					slices.Reverse(order)
				}
				for i, a := range order {
					out = append(out, &Run{Index: len(out) + 1, Workload: w.Name, Target: a.target, Variant: a.variant,
						Clients: c, Repetition: rep, Block: block, Position: i + 1})
				}
			}
		}
	}
	return out
}

func (r *runner) workload(name string) *Workload {
	for i := range r.spec.Workloads {
		if r.spec.Workloads[i].Name == name {
			return &r.spec.Workloads[i]
		}
	}
	return nil
}

func (r *runner) arm(variant string) arm {
	for _, a := range r.arms {
		if a.variant == variant {
			return a
		}
	}
	return arm{}
}

// setup runs pgbench -i and the SQL files on a target.
func (r *runner) setup(ctx context.Context, t target) error {
	log := filepath.Join(r.logDir, "setup-"+t.Kind()+".log")
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	run := func(prog string, args ...string) error {
		fmt.Fprintf(f, "$ %s %s\n", filepath.Base(prog), strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, prog, args...)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = childAttr()
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("setup on %s failed (%s: %v); %s ends:\n%s", t.Kind(), filepath.Base(prog), err, log, tail(log, 8))
		}
		return nil
	}
	if init := strings.TrimSpace(r.spec.Setup.PgbenchInit); init != "" {
		args := append([]string{"-i", "-q"}, strings.Fields(init)...)
		if err := run(r.pgbench, append(args, t.ConnInfo())...); err != nil {
			return err
		}
	}
	for _, s := range r.spec.Setup.SQL {
		if err := run(r.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", r.spec.Path(s), "-d", t.ConnInfo()); err != nil {
			return err
		}
	}
	if rows, err := query(ctx, t.ConnInfo(), "select count(*) from pgbench_branches"); err == nil && len(rows) == 1 {
		r.scale[t.Kind()], _ = strconv.Atoi(rows[0][0])
	}
	return nil
}

// prepare puts the run's arm in force on its target.
func (r *runner) prepare(ctx context.Context, run *Run, t target) error {
	down := t.Alive()
	if down != nil {
		r.prog.warn(fmt.Sprintf("%s is down before run %d; restarting it and setting up the data again", t.Kind(), run.Index))
		if err := t.Restart(ctx); err != nil {
			return err
		}
		run.Restarted = true
		r.current = ""
	}
	if run.Target == "lockd" && r.current != run.Variant {
		a := r.arm(run.Variant)
		restarted, err := t.Apply(ctx, a.settings, r.names)
		run.Restarted = run.Restarted || restarted
		if err != nil {
			r.current = ""
			return err
		}
		r.current = run.Variant
	}
	if down != nil {
		// after the variant's settings, so none left from the run that
		// crashed (a statement_timeout, say) gets in setup's way
		if err := r.setup(ctx, t); err != nil {
			return err
		}
	}
	if _, ok := r.res.Settings[run.Variant]; !ok {
		if s, err := settingsInForce(ctx, t.ConnInfo()); err == nil {
			r.res.Settings[run.Variant] = s
		}
	}
	if w := r.workload(run.Workload); len(w.Reset) > 0 {
		if err := execSQL(ctx, t.ConnInfo(), w.Reset...); err != nil {
			return fmt.Errorf("reset_sql: %w", err)
		}
	}
	return nil
}

// measure does one run: settings, reset, warm-up (discarded), reset, the
// measured pgbench with counters, CPU and wait-event samples around it.
func (r *runner) measure(ctx context.Context, run *Run) {
	t := r.targets[run.Target]
	w := r.workload(run.Workload)
	run.Started = time.Now()
	run.Status = StatusFailed
	run.ServerCPU, run.PgbenchCPU, run.OtherCPU, run.OtherCPUShare = nan, nan, nan, nan
	run.LatMeanMs, run.LatP50Ms, run.LatP90Ms, run.LatP99Ms = nan, nan, nan, nan
	logName := fmt.Sprintf("run-%04d-%s-%s-c%d-r%d.log", run.Index, run.Workload, run.Variant, run.Clients, run.Repetition)
	run.Log = filepath.Join("logs", logName)
	fail := func(err error) {
		if ctx.Err() != nil {
			run.Status, run.Error = StatusInterrupted, "interrupted"
			return
		}
		run.Error = err.Error()
		if aerr := t.Alive(); aerr != nil && !strings.Contains(run.Error, aerr.Error()) {
			run.Error += "; " + aerr.Error()
		}
		// after pgbench's own output, if it got that far
		if f, err := os.OpenFile(filepath.Join(r.cfg.OutDir, run.Log), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintf(f, "\n--- lockd bench: run %d failed:\n%s\n", run.Index, run.Error)
			f.Close()
		}
	}
	if err := r.prepare(ctx, run, t); err != nil {
		fail(err)
		return
	}
	if r.spec.Warmup.Duration > 0 {
		args := r.spec.pgbenchArgs(w, run.Clients, r.spec.Warmup.Duration, r.scale[run.Target], "", t.ConnInfo())
		if out, _, err := runPgbench(ctx, r.pgbench, args); err != nil {
			fail(fmt.Errorf("warm-up: pgbench: %v\n%s", err, pgbenchErrors(out)))
			return
		}
		if len(w.Reset) > 0 {
			if err := execSQL(ctx, t.ConnInfo(), w.Reset...); err != nil {
				fail(fmt.Errorf("reset_sql: %w", err))
				return
			}
		}
	}
	txDir, err := os.MkdirTemp("", "lockd-bench-txlog-")
	if err != nil {
		fail(err)
		return
	}
	defer os.RemoveAll(txDir)
	prefix := filepath.Join(txDir, "tx")
	args := r.spec.pgbenchArgs(w, run.Clients, r.spec.Duration.Duration, r.scale[run.Target], prefix, t.ConnInfo())

	before, mErr := t.Metrics(ctx)
	cpu0, cpuOK0 := t.CPU()
	others0 := r.otherServersCPU(run.Target)
	busy0, total0 := machineCPU()
	self0, kernel0 := selfCPU(), kernelThreadsCPU()
	run.Load1 = loadAvg()
	start := time.Now()
	stopSampler := startSampler(ctx, t.ConnInfo())
	out, pgbenchCPU, err := runPgbench(ctx, r.pgbench, args)
	sampler := stopSampler()
	elapsed := time.Since(start).Seconds()
	busy1, total1 := machineCPU()
	cpu1, cpuOK1 := t.CPU()
	others1 := r.otherServersCPU(run.Target)
	self1, kernel1 := selfCPU(), kernelThreadsCPU()
	after, mErr2 := t.Metrics(ctx)
	_ = os.WriteFile(filepath.Join(r.cfg.OutDir, run.Log), []byte("$ pgbench "+strings.Join(args, " ")+"\n"+out), 0o644)
	run.ElapsedS = elapsed
	run.PgbenchCPU = pgbenchCPU
	if cpuOK0 && cpuOK1 {
		run.ServerCPU = cpu1 - cpu0
		other := (busy1 - busy0) - run.ServerCPU - pgbenchCPU - (self1 - self0) - (others1 - others0) - (kernel1 - kernel0)
		run.OtherCPU = max(0, other)
		if total1 > total0 {
			run.OtherCPUShare = run.OtherCPU / (total1 - total0)
		}
		if run.OtherCPUShare > noiseShare {
			run.Warning = fmt.Sprintf("other processes used %.0f%% of the machine's CPU during this run (load average %.1f): the figure is noisy", 100*run.OtherCPUShare, run.Load1)
		}
	}
	run.Samples = sampler.samples
	run.WaitShares = sampler.shares()
	if err != nil {
		fail(fmt.Errorf("pgbench: %v\n%s", err, pgbenchErrors(out)))
		return
	}
	rep, perr := parsePgbench(out)
	if perr != nil {
		fail(fmt.Errorf("%v\n%s", perr, pgbenchErrors(out)))
		return
	}
	run.TPS, run.Transactions, run.Failed, run.Retried = rep.TPS, rep.Transactions, rep.Failed, rep.Retried
	lat, lerr := readTxLogs(prefix, w.ThinkTime.Duration)
	if lerr == nil && len(lat.ms) > 0 {
		run.LatMeanMs, run.LatP50Ms = mean(lat.ms), quantile(lat.ms, 0.50)
		run.LatP90Ms, run.LatP99Ms = quantile(lat.ms, 0.90), quantile(lat.ms, 0.99)
	}
	if before != nil && after != nil && mErr == nil && mErr2 == nil {
		run.Counters = after.delta(before)
		run.Derived = derive(run.Counters, run.Clients, elapsed)
	}
	if sampler.err != nil {
		run.Warning = strings.TrimPrefix(run.Warning+"; wait-event sampling failed: "+sampler.err.Error(), "; ")
	}
	run.Status = StatusOK
}

// otherServersCPU is the CPU of the targets not being measured (idle, but
// not "other processes").
func (r *runner) otherServersCPU(measured string) float64 {
	var s float64
	for k, t := range r.targets {
		if k != measured {
			if v, ok := t.CPU(); ok {
				s += v
			}
		}
	}
	return s
}

// runPgbench runs pgbench and returns its output and CPU time. On
// cancellation pgbench gets SIGINT, then SIGKILL.
func runPgbench(ctx context.Context, bin string, args []string) (string, float64, error) {
	var buf bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.SysProcAttr = childAttr()
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	if err := cmd.Start(); err != nil {
		return "", 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err = <-done:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
			err = <-done
		}
		err = ctx.Err()
	}
	var cpu float64
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime().Seconds() + ps.SystemTime().Seconds()
	}
	return buf.String(), cpu, err
}

// pgbenchErrors picks pgbench's error lines (at most three) and its last
// line from its output, for a failed run's error.
func pgbenchErrors(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var keep []string
	for _, l := range lines[:len(lines)-1] {
		if len(keep) < 3 && (strings.Contains(l, "error") || strings.Contains(l, "ERROR") || strings.Contains(l, "FATAL")) {
			keep = append(keep, l)
		}
	}
	return strings.Join(append(keep, lines[len(lines)-1]), "\n")
}

// buildArms lists the table's columns: the spec's variants, then the
// PostgreSQL target; --only keeps the named ones.
func buildArms(spec *Spec, cfg Config) ([]arm, error) {
	var arms []arm
	for _, v := range spec.Variants {
		arms = append(arms, arm{target: "lockd", variant: v.Name, title: v.Title, settings: v.Values})
	}
	if spec.Postgres != nil || (cfg.Postgres != "" && cfg.Postgres != "none") {
		title := "PostgreSQL"
		if spec.Postgres != nil {
			title = spec.Postgres.Title
		}
		arms = append(arms, arm{target: "postgres", variant: PostgresArm, title: title})
	}
	if len(cfg.Only) == 0 {
		return arms, nil
	}
	var out []arm
	for _, name := range cfg.Only {
		i := slices.IndexFunc(arms, func(a arm) bool { return a.variant == name })
		if i < 0 {
			var names []string
			for _, a := range arms {
				names = append(names, a.variant)
			}
			return nil, fmt.Errorf("--only %s: no such variant (the spec has %s)", name, strings.Join(names, ", "))
		}
		out = append(out, arms[i])
	}
	// keep the spec's order
	sort.SliceStable(out, func(i, j int) bool {
		return slices.IndexFunc(arms, func(a arm) bool { return a.variant == out[i].variant }) <
			slices.IndexFunc(arms, func(a arm) bool { return a.variant == out[j].variant })
	})
	return out, nil
}

// resolvePostgres decides how PostgreSQL runs: mode "" (not at all),
// "bindir" or "dsn", with where. A spec's PostgreSQL that is not
// installed is a warning; one asked for with --postgres is an error.
func resolvePostgres(spec *Spec, cfg Config) (mode, where, warning string, err error) {
	switch {
	case cfg.Postgres == "none":
		return "", "", "", nil
	case isDSN(cfg.Postgres):
		return "dsn", cfg.Postgres, "", nil
	case cfg.Postgres != "":
		if err := checkPGBin(cfg.Postgres); err != nil {
			return "", "", "", err
		}
		return "bindir", cfg.Postgres, "", nil
	case spec.Postgres == nil:
		return "", "", "", nil
	case spec.Postgres.DSN != "":
		return "dsn", spec.Postgres.DSN, "", nil
	}
	if err := checkPGBin(spec.Postgres.Bindir); err != nil {
		return "", "", "running lockd only: " + err.Error(), nil
	}
	return "bindir", spec.Postgres.Bindir, "", nil
}

func isDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") || strings.Contains(s, "=")
}

func pgBindirs(spec *Spec, cfg Config) []string {
	dirs := []string{}
	if cfg.Postgres != "" && cfg.Postgres != "none" && !isDSN(cfg.Postgres) {
		dirs = append(dirs, cfg.Postgres)
	}
	if spec.Postgres != nil {
		dirs = append(dirs, spec.Postgres.Bindir)
	}
	return append(dirs, "/usr/lib/postgresql/15/bin")
}

func serverVersion(ctx context.Context, t target) string {
	rows, err := query(ctx, t.ConnInfo(), "show server_version")
	if err != nil || len(rows) != 1 {
		return ""
	}
	return rows[0][0]
}

func firstLine(bin string, args ...string) string {
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

func machineInfo() map[string]string {
	m := map[string]string{"cpus": strconv.Itoa(runtime.NumCPU()), "goos": runtime.GOOS, "goarch": runtime.GOARCH}
	if h, err := os.Hostname(); err == nil {
		m["hostname"] = h
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m["cpu_model"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		m["memory"] = strings.Join(strings.Fields(line)[1:], " ")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m["kernel"] = strings.TrimSpace(string(b))
	}
	m["loadavg_at_start"] = strconv.FormatFloat(loadAvg(), 'f', 2, 64)
	return m
}
