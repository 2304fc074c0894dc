package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// writeOutputs writes results.csv, results.json, table.txt and the plots
// into dir.
func writeOutputs(dir string, res *Results) error {
	if err := writeCSV(filepath.Join(dir, "results.csv"), res); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.txt"), []byte(res.Table()), 0o644); err != nil {
		return err
	}
	return writePlots(dir, res)
}

// csvFixed are the columns every run has, in order; derived metrics,
// sampled wait-event shares and lockd's raw /metrics deltas follow.
var csvFixed = []string{
	"index", "workload", "target", "variant", "clients", "repetition", "block", "position", "started",
	"status", "error", "log", "restarted", "elapsed_s",
	"tps", "transactions", "failed", "retried",
	"latency_mean_ms", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms",
	"server_cpu_s", "pgbench_cpu_s", "other_cpu_s", "other_cpu_share", "loadavg_1m", "warning", "wait_samples",
}

func writeCSV(path string, res *Results) error {
	derived, shares, counters := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, r := range res.Runs {
		for k := range r.Derived {
			derived[k] = true
		}
		for k := range r.WaitShares {
			shares["wait_share:"+k] = true
		}
		for k := range r.Counters {
			counters[k] = true
		}
	}
	header := append([]string{}, csvFixed...)
	header = append(header, sortedKeys(derived)...)
	header = append(header, sortedKeys(shares)...)
	header = append(header, sortedKeys(counters)...)

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	for _, r := range res.Runs {
		row := []string{
			strconv.Itoa(r.Index), r.Workload, r.Target, r.Variant, strconv.Itoa(r.Clients), strconv.Itoa(r.Repetition),
			strconv.Itoa(r.Block), strconv.Itoa(r.Position), r.Started.Format(time.RFC3339),
			r.Status, r.Error, r.Log, strconv.FormatBool(r.Restarted), num(r.ElapsedS),
			num(r.TPS), strconv.FormatInt(r.Transactions, 10), strconv.FormatInt(r.Failed, 10), strconv.FormatInt(r.Retried, 10),
			num(r.LatMeanMs), num(r.LatP50Ms), num(r.LatP90Ms), num(r.LatP99Ms),
			num(r.ServerCPU), num(r.PgbenchCPU), num(r.OtherCPU), num(r.OtherCPUShare), num(r.Load1), r.Warning, strconv.Itoa(r.Samples),
		}
		for _, k := range header[len(csvFixed):] {
			var v float64
			var ok bool
			switch {
			case strings.HasPrefix(k, "lockd_"):
				v, ok = r.Counters[k]
			case strings.HasPrefix(k, "wait_share:"):
				v, ok = r.WaitShares[strings.TrimPrefix(k, "wait_share:")]
				if !ok && r.Samples > 0 {
					v, ok = 0, true
				}
			default:
				v, ok = r.Derived[k]
				if !ok && r.Derived != nil && hasParamFamily(k) {
					v, ok = 0, true
				}
			}
			if ok {
				row = append(row, num(v))
			} else {
				row = append(row, "")
			}
		}
		_ = w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MarshalJSON writes a run with unmeasured (NaN) figures as null.
func (r *Run) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonSafe(reflect.ValueOf(*r)))
}

// jsonSafe turns a struct into a map by its json tags, with NaN and
// infinite floats as nil.
func jsonSafe(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[fmt.Sprint(k.Interface())] = jsonSafe(v.MapIndex(k))
		}
		return out
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			return t
		}
		out := map[string]any{}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fv := v.Field(i)
			if strings.Contains(opts, "omitempty") && fv.IsZero() {
				continue
			}
			out[name] = jsonSafe(fv)
		}
		return out
	}
	return v.Interface()
}

// UnmarshalJSON reads a run written by MarshalJSON (null figures become NaN).
func (r *Run) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	v := reflect.ValueOf(r).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := m[name]
		if name == "" || name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Float64 && (!ok || string(raw) == "null") {
			fv.SetFloat(math.NaN())
			continue
		}
		if !ok {
			continue
		}
		if f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Float64 {
			var mm map[string]*float64
			if err := json.Unmarshal(raw, &mm); err != nil {
				return fmt.Errorf("run field %s: %w", name, err)
			}
			out := make(map[string]float64, len(mm))
			for k, p := range mm {
				if p == nil {
					out[k] = math.NaN()
				} else {
					out[k] = *p
				}
			}
			fv.Set(reflect.ValueOf(out))
			continue
		}
		if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
			return fmt.Errorf("run field %s: %w", name, err)
		}
	}
	return nil
}

// Replot writes the table, the plots and the CSV again from dir's
// results.json, with spec's tables and plots (the same experiment, its
// [[plot]] and table_metrics perhaps changed since the run).
func Replot(spec *Spec, dir string) (*Results, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	if res.Quick {
		spec = spec.ApplyQuick()
	}
	res.Spec = spec
	for _, r := range res.Runs {
		if r.Counters != nil {
			r.Derived = derive(r.Counters, r.Clients, r.ElapsedS) // as this version derives them
		}
	}
	res.armTitles = map[string]string{}
	for _, v := range spec.Variants {
		res.armTitles[v.Name] = v.Title
	}
	if spec.Postgres != nil {
		res.armTitles[PostgresArm] = spec.Postgres.Title
	}
	for _, a := range res.Arms {
		if _, ok := res.armTitles[a]; !ok {
			return nil, fmt.Errorf("%s has column %q, which the spec does not define", dir, a)
		}
	}
	return &res, writeOutputs(dir, &res)
}
