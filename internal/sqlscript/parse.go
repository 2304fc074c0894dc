package sqlscript

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A script file is a flat list of nodes; cases and repeat blocks are
// ranges of it. Every node keeps the lines it was written as, so -rewrite
// can put the file back together with only the outputs changed.
type node struct {
	kind   nodeKind
	lineNo int
	text   []string // the node's own lines, as written (outputs excluded)

	// kindCase
	caseName string
	caseOpts caseOptions
	// kindSettings
	settings []string
	// kindRepeat
	count int
	// kindStep
	step *step

	// the expected output (steps that print), and what the run gave
	expected []string
	actual   []string
	ran      bool
}

type nodeKind int

const (
	kindVerbatim nodeKind = iota // comment or blank line
	kindSettings
	kindCase
	kindRepeat
	kindEnd
	kindStep
)

type caseOptions struct {
	fresh    bool
	settings []string
	verbose  bool
	txstatus bool
}

type stepKind int

const (
	stepStatement stepKind = iota
	stepAwait
	stepPoll
	stepRestart
	stepCrash
	stepCheckpoint
	stepFile
)

// prints reports whether the step has an output block.
func (k stepKind) prints() bool {
	return k == stepStatement || k == stepAwait || k == stepPoll
}

type step struct {
	kind    stepKind
	session string
	text    string   // statement text (continuation lines joined with \n); file name
	input   []string // the "< " lines without the prefix

	waits      bool
	eventually bool
	tookMin    time.Duration
	tookMax    time.Duration // 0: no upper bound
	hasTook    bool
}

var (
	stmtRE    = regexp.MustCompile(`^([a-z][a-z0-9_]*)((?: +[a-z]+(?:=\S*)?)*):(?: (.*))?$`)
	sessionRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

type parseError struct {
	line int
	msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// parse reads a script.
func parse(data string) ([]*node, error) {
	data = strings.TrimSuffix(data, "\n")
	var lines []string
	if data != "" {
		lines = strings.Split(data, "\n")
	}
	var nodes []*node
	seenCase := false
	caseNames := map[string]bool{}
	depth := 0
	for i := 0; i < len(lines); {
		l := lines[i]
		n := &node{lineNo: i + 1, text: []string{l}}
		fail := func(format string, args ...any) error {
			return &parseError{line: n.lineNo, msg: fmt.Sprintf(format, args...)}
		}
		i++
		fields := strings.Fields(l)
		switch {
		case strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#"):
			if strings.TrimSpace(l) == "" && l != "" {
				return nil, fail("a blank line with spaces in it")
			}
			n.kind = kindVerbatim
		case stmtRE.MatchString(l):
			st, err := parseStatementLine(l)
			if err != nil {
				return nil, fail("%v", err)
			}
			if !seenCase {
				return nil, fail("a statement before the first case")
			}
			for i < len(lines) && (strings.HasPrefix(lines[i], " ") || strings.HasPrefix(lines[i], "\t")) && strings.TrimSpace(lines[i]) != "" {
				st.text += "\n" + lines[i]
				n.text = append(n.text, lines[i])
				i++
			}
			n.kind, n.step = kindStep, st
		case fields[0] == "settings":
			if seenCase {
				return nil, fail("settings must come before the first case (or use case ... settings=)")
			}
			for _, kv := range fields[1:] {
				if !strings.Contains(kv, "=") {
					return nil, fail("setting %q is not NAME=VALUE", kv)
				}
			}
			n.kind, n.settings = kindSettings, fields[1:]
		case fields[0] == "case":
			if depth > 0 {
				return nil, fail("case inside a repeat block")
			}
			if len(fields) < 2 {
				return nil, fail("case without a name")
			}
			name := fields[1]
			if caseNames[name] {
				return nil, fail("a second case named %q", name)
			}
			caseNames[name] = true
			opts, err := parseCaseOptions(fields[2:])
			if err != nil {
				return nil, fail("%v", err)
			}
			n.kind, n.caseName, n.caseOpts = kindCase, name, opts
			seenCase = true
		case fields[0] == "repeat":
			if !seenCase {
				return nil, fail("repeat before the first case")
			}
			if depth > 0 {
				return nil, fail("nested repeat")
			}
			if len(fields) != 2 {
				return nil, fail("want: repeat N")
			}
			c, err := strconv.Atoi(fields[1])
			if err != nil || c < 1 {
				return nil, fail("want: repeat N, with N at least 1")
			}
			n.kind, n.count = kindRepeat, c
			depth++
		case l == "end":
			if depth == 0 {
				return nil, fail("end without repeat")
			}
			n.kind = kindEnd
			depth--
		default:
			if !seenCase {
				return nil, fail("unknown line %q before the first case", l)
			}
			st := &step{}
			switch {
			case (fields[0] == "await" || fields[0] == "poll") && len(fields) == 2 && sessionRE.MatchString(fields[1]):
				st.kind, st.session = stepAwait, fields[1]
				if fields[0] == "poll" {
					st.kind = stepPoll
				}
			case l == "restart":
				st.kind = stepRestart
			case l == "crash":
				st.kind = stepCrash
			case l == "checkpoint":
				st.kind = stepCheckpoint
			case fields[0] == "file" && len(fields) == 2:
				st.kind, st.text = stepFile, fields[1]
			default:
				return nil, fail("unknown step %q", l)
			}
			n.kind, n.step = kindStep, st
		}
		if n.kind == kindStep {
			for i < len(lines) && strings.HasPrefix(lines[i], "< ") {
				n.step.input = append(n.step.input, strings.TrimPrefix(lines[i], "< "))
				n.text = append(n.text, lines[i])
				i++
			}
			if n.step.kind.prints() {
				for i < len(lines) && lines[i] != "" {
					n.expected = append(n.expected, lines[i])
					i++
				}
			}
		}
		nodes = append(nodes, n)
	}
	if depth > 0 {
		return nil, &parseError{line: len(lines), msg: "repeat without end"}
	}
	if !seenCase {
		return nil, &parseError{line: len(lines), msg: "no case in the file"}
	}
	return nodes, nil
}

func parseStatementLine(l string) (*step, error) {
	m := stmtRE.FindStringSubmatch(l)
	st := &step{kind: stepStatement, session: m[1], text: m[3]}
	for _, mod := range strings.Fields(m[2]) {
		name, val, hasVal := strings.Cut(mod, "=")
		switch {
		case name == "waits" && !hasVal:
			st.waits = true
		case name == "eventually" && !hasVal:
			st.eventually = true
		case name == "took" && hasVal:
			lo, hi, ok := strings.Cut(val, "..")
			if !ok {
				return nil, fmt.Errorf("took=MIN..MAX: %q", val)
			}
			var err error
			if lo != "" {
				if st.tookMin, err = time.ParseDuration(lo); err != nil {
					return nil, err
				}
			}
			if hi != "" {
				if st.tookMax, err = time.ParseDuration(hi); err != nil {
					return nil, err
				}
			}
			st.hasTook = true
		default:
			return nil, fmt.Errorf("unknown modifier %q (want waits, eventually or took=MIN..MAX)", mod)
		}
	}
	if st.waits && (st.eventually || st.hasTook) {
		return nil, fmt.Errorf("waits goes with neither eventually nor took")
	}
	return st, nil
}

func parseCaseOptions(words []string) (caseOptions, error) {
	var o caseOptions
	for _, w := range words {
		name, val, hasVal := strings.Cut(w, "=")
		switch {
		case name == "fresh" && !hasVal:
			o.fresh = true
		case name == "verbose" && !hasVal:
			o.verbose = true
		case name == "txstatus" && !hasVal:
			o.txstatus = true
		case name == "settings" && hasVal:
			for _, kv := range strings.Split(val, ",") {
				if !strings.Contains(kv, "=") {
					return o, fmt.Errorf("setting %q is not NAME=VALUE", kv)
				}
				o.settings = append(o.settings, kv)
			}
			o.fresh = true
		default:
			return o, fmt.Errorf("unknown case option %q (want fresh, settings=..., verbose or txstatus)", w)
		}
	}
	return o, nil
}

// format puts a script back together, with the actual outputs of the
// steps that ran and the expected ones of those that did not.
func format(nodes []*node) string {
	var b strings.Builder
	for _, n := range nodes {
		for _, l := range n.text {
			b.WriteString(l + "\n")
		}
		if n.kind == kindStep && n.step.kind.prints() {
			out := n.expected
			if n.ran {
				out = n.actual
			}
			for _, l := range out {
				b.WriteString(l + "\n")
			}
		}
	}
	return b.String()
}

// splitParams splits psql-style meta-command arguments: words separated
// by spaces, single quotes around a word with spaces (a quote inside is doubled).
func splitParams(s string) ([]string, error) {
	var out []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		if s[0] == '\'' {
			w, rest, err := cutQuoted(s)
			if err != nil {
				return nil, err
			}
			out, s = append(out, w), rest
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		out, s = append(out, w), rest
	}
	return out, nil
}

// cutQuoted takes the single-quoted string s starts with.
func cutQuoted(s string) (word, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", fmt.Errorf("unterminated quote in %s", s)
}

// splitLiterals splits a \copy_binary row: comma-separated literals
// (NULL, integers, decimals, true, false, 'text').
func splitLiterals(s string) ([]any, error) {
	var out []any
	for {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "'") {
			w, rest, err := cutQuoted(s)
			if err != nil {
				return nil, err
			}
			out, s = append(out, w), rest
		} else {
			lit, rest, _ := strings.Cut(s, ",")
			if rest != "" || strings.HasSuffix(s, ",") {
				rest = "," + rest
			}
			lit = strings.TrimSpace(lit)
			var v any
			switch {
			case strings.EqualFold(lit, "null"):
				v = nil
			case lit == "true" || lit == "false":
				v = lit == "true"
			default:
				if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
					v = i
				} else if f, err := strconv.ParseFloat(lit, 64); err == nil {
					v = f
				} else {
					return nil, fmt.Errorf("literal %q: want NULL, a number, true, false or 'text'", lit)
				}
			}
			out, s = append(out, v), rest
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return out, nil
		}
		if s[0] != ',' {
			return nil, fmt.Errorf("want a comma before %q", s)
		}
		s = s[1:]
	}
}

// copyInput turns the "< " lines of a COPY FROM STDIN or a file step into
// the bytes to send.
func copyInput(lines []string) (string, error) {
	var b strings.Builder
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "seq "); ok {
			rng, f, _ := strings.Cut(rest, " ")
			lo, hi, ok := strings.Cut(rng, "..")
			a, err1 := strconv.Atoi(lo)
			z, err2 := strconv.Atoi(hi)
			format, err3 := strconv.Unquote(f)
			if !ok || err1 != nil || err2 != nil || err3 != nil {
				return "", fmt.Errorf(`want: seq A..B "FORMAT": %q`, l)
			}
			for i := a; i <= z; i++ {
				fmt.Fprintf(&b, format, i)
			}
			continue
		}
		s, err := strconv.Unquote(l)
		if err != nil {
			return "", fmt.Errorf("input line %s: want a Go-quoted string", l)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}
