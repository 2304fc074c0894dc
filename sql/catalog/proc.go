package catalog

import (
	_ "embed"
	"strconv"
	"strings"

	"lockd/sql/types"
)

// Built-in functions as pg_proc lists them. pg15_proc.tsv holds PostgreSQL
// 15's pg_proc entries for the function names lockd can call, with the
// texts pg_get_function_result, pg_get_function_arguments,
// pg_get_function_identity_arguments and pg_get_functiondef give for them
// (scripts/gen-pg-proc.sh dumps them from a real PostgreSQL 15). Procs
// keeps the entries whose argument and result types lockd has (or are
// PostgreSQL's polymorphic pseudo-types), so psql's \df and \sf show
// PostgreSQL's signatures for the functions lockd implements.

//go:embed pg15_proc.tsv
var pg15ProcTSV string

// Proc is one pg_proc entry.
type Proc struct {
	OID          uint32
	Name         string
	Lang         uint32
	Cost, Rows   float64
	Variadic     uint32
	Kind         byte // f function, a aggregate, w window, p procedure
	SecDef       bool
	Leakproof    bool
	Strict       bool
	RetSet       bool
	Volatile     byte // i, s, v
	Parallel     byte // s, r, u
	NArgs        int
	NArgDefaults int
	RetType      uint32
	ArgTypes     []uint32
	AllArgTypes  string // text form of proallargtypes, "" for NULL
	ArgModes     string // text form of proargmodes, "" for NULL
	ArgNames     string // text form of proargnames, "" for NULL
	Src          string
	Result       string // pg_get_function_result
	Arguments    string // pg_get_function_arguments
	Identity     string // pg_get_function_identity_arguments
	Def          string // pg_get_functiondef ("" for aggregates)
}

var (
	// Procs are the built-in functions, by OID.
	Procs     []*Proc
	procByOID = map[uint32]*Proc{}
)

// pseudoTypes are PostgreSQL's polymorphic and pseudo-types a built-in's
// signature may use: any, anyarray, anyelement, anynonarray,
// anycompatible, anycompatiblearray, record, void, cstring.
var pseudoTypes = map[uint32]bool{2276: true, 2277: true, 2283: true, 2776: true, 5077: true, 5078: true, 2249: true, 2278: true, 2275: true}

func knownType(oid uint32) bool {
	// name[] and pg_node_tree: catalog types lockd's catalog functions use
	if pseudoTypes[oid] || oid == 1003 || oid == types.OIDNodeTree {
		return true
	}
	_, ok := types.TypeByOID(oid)
	return ok
}

func init() {
	for _, line := range strings.Split(strings.TrimRight(pg15ProcTSV, "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 25 {
			panic("catalog: bad pg15_proc.tsv line: " + line)
		}
		for i := range f {
			f[i] = copyUnescape(f[i])
		}
		u := func(s string) uint32 { n, _ := strconv.ParseUint(s, 10, 32); return uint32(n) }
		fl := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
		b := func(s string) bool { return s == "t" }
		p := &Proc{OID: u(f[0]), Name: f[1], Lang: u(f[2]), Cost: fl(f[3]), Rows: fl(f[4]), Variadic: u(f[5]),
			Kind: f[6][0], SecDef: b(f[7]), Leakproof: b(f[8]), Strict: b(f[9]), RetSet: b(f[10]),
			Volatile: f[11][0], Parallel: f[12][0], RetType: u(f[15]), AllArgTypes: f[17], ArgModes: f[18],
			ArgNames: f[19], Src: f[20], Result: f[21], Arguments: f[22], Identity: f[23], Def: f[24]}
		p.NArgs, _ = strconv.Atoi(f[13])
		p.NArgDefaults, _ = strconv.Atoi(f[14])
		ok := knownType(p.RetType)
		for _, a := range strings.Fields(f[16]) {
			p.ArgTypes = append(p.ArgTypes, u(a))
			ok = ok && knownType(u(a))
		}
		if !ok {
			continue
		}
		Procs = append(Procs, p)
		procByOID[p.OID] = p
	}
}

// ProcByOID returns the built-in function with the given OID.
func ProcByOID(oid uint32) (*Proc, bool) {
	p, ok := procByOID[oid]
	return p, ok
}

// ProcsNamed returns the built-in functions named name.
func ProcsNamed(name string) []*Proc {
	var out []*Proc
	for _, p := range Procs {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// copyUnescape undoes COPY's text escapes (\N is NULL, read as "").
func copyUnescape(s string) string {
	if s == `\N` {
		return ""
	}
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
