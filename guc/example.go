package guc

import (
	"fmt"
	"strconv"
	"strings"
)

// ExampleFile returns the content of lockd.conf.example: every setting that
// belongs in a configuration file, commented out at its boot value, grouped
// by category in Table order, with its description, when a change takes
// effect and its valid values.
func ExampleFile() string {
	var b strings.Builder
	b.WriteString(`# lockd configuration file (TOML)
#
# Generated from the settings table in guc/; do not edit by hand. Regenerate
# with: go test ./guc -run TestExampleFile -update
#
# Start lockd with --config FILE to use a file like this one. Every setting is
# listed below, commented out, at its default value. Names are PostgreSQL's
# and case-insensitive. A value is either a TOML value (true, 64) or a string
# in PostgreSQL's spelling ("on", "128MB", "200ms"); a bare integer for a
# setting with a unit is in its base unit (shown below as "unit").
#
# Memory units: B, kB, MB, GB, TB; time units: us, ms, s, min, h, d.
#
# "(change requires restart)": read at server start only.
# "(reload)": also applied on SIGHUP or SELECT pg_reload_conf().
# Other settings are re-read on reload too, and can be changed per session
# with SET. ALTER SYSTEM writes lockd.auto.conf in the data directory,
# which is read after this file and wins over it; -c name=value on the
# command line wins over both.
`)
	var cats []string
	byCat := map[string][]*Def{}
	for i := range Table {
		d := &Table[i]
		if d.Context == Internal || d.flags&flagNotInSample != 0 {
			continue
		}
		if _, ok := byCat[d.Category]; !ok {
			cats = append(cats, d.Category)
		}
		byCat[d.Category] = append(byCat[d.Category], d)
	}
	for _, c := range cats {
		fmt.Fprintf(&b, "\n# --- %s ---\n", c)
		for _, d := range byCat[c] {
			b.WriteString("\n")
			writeComment(&b, d.Short)
			if d.Extra != "" {
				writeComment(&b, d.Extra)
			}
			var facts []string
			switch d.Context {
			case Postmaster:
				facts = append(facts, "(change requires restart)")
			case Sighup:
				facts = append(facts, "(reload)")
			case Backend, SuperuserBackend:
				facts = append(facts, "(reload; applies to new sessions)")
			}
			switch d.Type {
			case Bool:
				facts = append(facts, "on or off")
			case Int, Real:
				lo, hi := strconv.FormatFloat(d.Min, 'f', -1, 64), strconv.FormatFloat(d.Max, 'f', -1, 64)
				facts = append(facts, fmt.Sprintf("range %s .. %s", lo, hi))
			case Enum:
				facts = append(facts, "one of: "+strings.Join(d.EnumValues, ", "))
			}
			if d.Unit != "" {
				facts = append(facts, "unit "+d.Unit)
			}
			if len(facts) > 0 {
				writeComment(&b, strings.Join(facts, "; "))
			}
			fmt.Fprintf(&b, "#%s = %s\n", tomlKey(d.Name), tomlLiteral(d, d.boot))
		}
	}
	return b.String()
}

// writeComment wraps text into "# " lines of at most 78 characters.
func writeComment(b *strings.Builder, text string) {
	line := "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 78 && line != "#" {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}
