package guc

import (
	"errors"
	"testing"
)

func mustDef(t testing.TB, name string) *Def {
	t.Helper()
	d, ok := Lookup(name)
	if !ok {
		t.Fatalf("no setting %s", name)
	}
	return d
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // display form, if no error
		raw      string // pg_settings.setting form, if set
		code     string
		msg      string
		hint     string
	}{
		// Booleans: prefixes, case, on/off need two letters, 1/0 alone.
		{name: "log_lock_waits", in: "on", want: "on"},
		{name: "log_lock_waits", in: "OFF", want: "off"},
		{name: "log_lock_waits", in: "of", want: "off"},
		{name: "log_lock_waits", in: "t", want: "on"},
		{name: "log_lock_waits", in: "TrU", want: "on"},
		{name: "log_lock_waits", in: "fals", want: "off"},
		{name: "log_lock_waits", in: "y", want: "on"},
		{name: "log_lock_waits", in: "no", want: "off"},
		{name: "log_lock_waits", in: "1", want: "on"},
		{name: "log_lock_waits", in: "0", want: "off"},
		{name: "log_lock_waits", in: "o", code: "22023", msg: `parameter "log_lock_waits" requires a Boolean value`},
		{name: "log_lock_waits", in: "10", code: "22023", msg: `parameter "log_lock_waits" requires a Boolean value`},
		{name: "log_lock_waits", in: "truee", code: "22023", msg: `parameter "log_lock_waits" requires a Boolean value`},
		{name: "log_lock_waits", in: "", code: "22023", msg: `parameter "log_lock_waits" requires a Boolean value`},
		{name: "log_lock_waits", in: " on", code: "22023", msg: `parameter "log_lock_waits" requires a Boolean value`},

		// Integers: decimal, hex, octal, rounding.
		{name: "max_connections", in: "200", want: "200"},
		{name: "max_connections", in: " 0x10 ", want: "16"},
		{name: "max_connections", in: "010", want: "8"},
		{name: "max_connections", in: "2.5", want: "2"},
		{name: "max_connections", in: "3.5", want: "4"},
		{name: "max_connections", in: "1e2", want: "100"},
		{name: "max_connections", in: "+7", want: "7"},
		{name: "max_connections", in: "08", code: "22023", msg: `invalid value for parameter "max_connections": "08"`},
		{name: "max_connections", in: "abc", code: "22023", msg: `invalid value for parameter "max_connections": "abc"`},
		{name: "max_connections", in: "10MB", code: "22023", msg: `invalid value for parameter "max_connections": "10MB"`},
		{name: "max_connections", in: "0", code: "22023", msg: `0 is outside the valid range for parameter "max_connections" (1 .. 262143)`},
		{name: "max_connections", in: "99999999999", code: "22023", msg: `invalid value for parameter "max_connections": "99999999999"`, hint: "Value exceeds integer range."},
		{name: "extra_float_digits", in: "-15", want: "-15"},
		{name: "extra_float_digits", in: "4", code: "22023", msg: `4 is outside the valid range for parameter "extra_float_digits" (-15 .. 3)`},
		{name: "fastpath_lock_slots", in: "-1", want: "-1"},

		// Time units.
		{name: "deadlock_timeout", in: "1000", want: "1s", raw: "1000"},
		{name: "deadlock_timeout", in: "1s", want: "1s", raw: "1000"},
		{name: "deadlock_timeout", in: "200 ms", want: "200ms", raw: "200"},
		{name: "deadlock_timeout", in: "1.5s", want: "1500ms", raw: "1500"},
		{name: "deadlock_timeout", in: "1min", want: "1min", raw: "60000"},
		{name: "deadlock_timeout", in: "2h", want: "2h", raw: "7200000"},
		{name: "deadlock_timeout", in: "1d", want: "1d", raw: "86400000"},
		{name: "deadlock_timeout", in: "1500us", want: "2ms", raw: "2"},
		{name: "deadlock_timeout", in: "0.5min ", want: "30s", raw: "30000"},
		{name: "deadlock_timeout", in: "1S", code: "22023", msg: `invalid value for parameter "deadlock_timeout": "1S"`,
			hint: `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`},
		{name: "deadlock_timeout", in: "1 sec", code: "22023", msg: `invalid value for parameter "deadlock_timeout": "1 sec"`,
			hint: `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`},
		{name: "deadlock_timeout", in: "1s x", code: "22023", msg: `invalid value for parameter "deadlock_timeout": "1s x"`,
			hint: `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`},
		{name: "deadlock_timeout", in: "-5", code: "22023", msg: `-5 ms is outside the valid range for parameter "deadlock_timeout" (1 ms .. 2147483647 ms)`},
		{name: "deadlock_timeout", in: "0", code: "22023", msg: `0 ms is outside the valid range for parameter "deadlock_timeout" (1 ms .. 2147483647 ms)`},
		{name: "deadlock_timeout", in: "100us", code: "22023", msg: `0 ms is outside the valid range for parameter "deadlock_timeout" (1 ms .. 2147483647 ms)`},
		{name: "lock_timeout", in: "0", want: "0", raw: "0"},
		{name: "authentication_timeout", in: "2min", want: "2min", raw: "120"},
		{name: "authentication_timeout", in: "90", want: "90s", raw: "90"},
		{name: "authentication_timeout", in: "1500ms", want: "2s", raw: "2"},
		{name: "checkpoint_timeout", in: "1h", want: "1h", raw: "3600"},

		// Memory units.
		{name: "shared_buffers", in: "128MB", want: "128MB", raw: "16384"},
		{name: "shared_buffers", in: "16384", want: "128MB", raw: "16384"},
		{name: "shared_buffers", in: "1GB", want: "1GB", raw: "131072"},
		{name: "shared_buffers", in: "100", want: "800kB", raw: "100"},
		{name: "shared_buffers", in: "1000kB", want: "1000kB", raw: "125"},
		{name: "shared_buffers", in: "1001kB", want: "1000kB", raw: "125"},
		{name: "shared_buffers", in: "1mb", code: "22023", msg: `invalid value for parameter "shared_buffers": "1mb"`,
			hint: `Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".`},
		{name: "shared_buffers", in: "64kB", code: "22023", msg: `8 8kB is outside the valid range for parameter "shared_buffers" (16 8kB .. 1073741823 8kB)`},
		{name: "max_message_size", in: "64MB", want: "64MB", raw: "67108864"},
		{name: "max_message_size", in: "1.5kB", want: "1536B", raw: "1536"},
		{name: "max_message_size", in: "1000", code: "22023", msg: `1000 B is outside the valid range for parameter "max_message_size" (1024 B .. 1073741823 B)`},
		{name: "work_mem", in: "30.1GB", want: "30822MB", raw: "31561728"}, // rounded to MB first, as PostgreSQL does
		{name: "work_mem", in: "4MB", want: "4MB", raw: "4096"},

		// Enums: case-insensitive, exact.
		{name: "relation_extension_mode", in: "FIXED", want: "fixed"},
		{name: "relation_extension_mode", in: "fix", code: "22023", msg: `invalid value for parameter "relation_extension_mode": "fix"`,
			hint: "Available values: single, fixed, group."},
		{name: "default_transaction_isolation", in: "Repeatable Read", want: "repeatable read"},
		{name: "log_min_messages", in: "debug1", want: "debug1"},

		// Strings and their checks.
		{name: "application_name", in: "pgbench", want: "pgbench"},
		{name: "application_name", in: "héllo", want: "h??llo"},
		{name: "client_encoding", in: "utf-8", want: "UTF8"},
		{name: "client_encoding", in: "Unicode", want: "UTF8"},
		{name: "client_encoding", in: "SQL_ASCII", want: "SQL_ASCII"},
		{name: "client_encoding", in: "LATIN1", code: "22023", msg: `invalid value for parameter "client_encoding": "LATIN1"`, hint: "lockd supports only the UTF8 encoding."},
		{name: "TimeZone", in: "utc", want: "UTC"},
		{name: "TimeZone", in: "Europe/Berlin", want: "Europe/Berlin"},
		{name: "TimeZone", in: "Mars/Olympus", code: "22023", msg: `invalid value for parameter "TimeZone": "Mars/Olympus"`},
		{name: "DateStyle", in: "iso", want: "ISO, MDY"},
		{name: "DateStyle", in: "ISO, DMY", want: "ISO, DMY"},
		{name: "DateStyle", in: "german", want: "German, DMY"},
		{name: "DateStyle", in: "sql, euro", want: "SQL, DMY"},
		{name: "DateStyle", in: "ISO, SQL", code: "22023", msg: `invalid value for parameter "DateStyle": "ISO, SQL"`},
		{name: "DateStyle", in: "fancy", code: "22023", msg: `invalid value for parameter "DateStyle": "fancy"`},
		{name: "lock_partitions", in: "64", want: "64"},
		{name: "lock_partitions", in: "12", code: "22023", msg: `invalid value for parameter "lock_partitions": "12"`, hint: "The value must be a power of two."},
		{name: "lock_partitions", in: "2048", code: "22023", msg: `2048 is outside the valid range for parameter "lock_partitions" (1 .. 1024)`},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.in, func(t *testing.T) {
			d := mustDef(t, tt.name)
			v, err := ParseValue(d, tt.in)
			if tt.code != "" {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("ParseValue(%q) = %+v, %v; want error %s %q", tt.in, v, err, tt.code, tt.msg)
				}
				if e.Code != tt.code || e.Message != tt.msg || e.Hint != tt.hint {
					t.Fatalf("ParseValue(%q) error = %s %q hint %q; want %s %q hint %q", tt.in, e.Code, e.Message, e.Hint, tt.code, tt.msg, tt.hint)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseValue(%q): %v", tt.in, err)
			}
			if got := FormatValue(d, v); got != tt.want {
				t.Errorf("FormatValue(ParseValue(%q)) = %q, want %q", tt.in, got, tt.want)
			}
			if tt.raw != "" {
				if got := rawSetting(d, v); got != tt.raw {
					t.Errorf("raw setting of %q = %q, want %q", tt.in, got, tt.raw)
				}
			}
		})
	}
}

// TestBootValues checks that every boot value parses, displays and
// round-trips through its display form.
func TestBootValues(t *testing.T) {
	for i := range Table {
		d := &Table[i]
		if got := rawSetting(d, d.boot); got != d.Boot {
			t.Errorf("%s: boot value %q is shown as %q in pg_settings", d.Name, d.Boot, got)
		}
		v, err := ParseValue(d, FormatValue(d, d.boot))
		if err != nil || v != d.boot {
			t.Errorf("%s: display form %q does not parse back: %v, %v", d.Name, FormatValue(d, d.boot), v, err)
		}
		if d.Short == "" || d.Category == "" {
			t.Errorf("%s: missing description or category", d.Name)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"datestyle", "DateStyle", "DATESTYLE", "deadlock_timeout", "Deadlock_Timeout"} {
		d, ok := Lookup(name)
		if !ok {
			t.Fatalf("Lookup(%q) failed", name)
		}
		if d.Name != "DateStyle" && d.Name != "deadlock_timeout" {
			t.Errorf("Lookup(%q).Name = %q", name, d.Name)
		}
	}
	if _, ok := Lookup("no_such_setting"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
}

func TestStringers(t *testing.T) {
	if Int.String() != "integer" || Enum.String() != "enum" || Bool.String() != "bool" || Real.String() != "real" || String.String() != "string" {
		t.Error("VarType names")
	}
	if SuperuserBackend.String() != "superuser-backend" || Sighup.String() != "sighup" || User.String() != "user" {
		t.Error("Context names")
	}
	if SourceFile.String() != "configuration file" || SourceCommandLine.String() != "command line" || SourceSession.String() != "session" {
		t.Error("Source names")
	}
	if !(SourceDefault < SourceFile && SourceFile < SourceCommandLine && SourceCommandLine < SourceClient && SourceClient < SourceSession) {
		t.Error("Source priority order")
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"on", "of", "1", "0x1F", "010", "1.5", "1e3", "128MB", "1 s", "30.1GB", "-5", "fixed", "ISO, DMY", "utc", "", " ", "9999999999999999999", "inf", "nan", "1e400"} {
		for _, name := range []string{"log_lock_waits", "deadlock_timeout", "shared_buffers", "relation_extension_mode", "DateStyle", "lock_partitions", "extra_float_digits", "max_message_size"} {
			f.Add(name, s)
		}
	}
	f.Fuzz(func(t *testing.T, name, s string) {
		d, ok := Lookup(name)
		if !ok {
			return
		}
		v, err := ParseValue(d, s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidParameterValue {
				t.Fatalf("ParseValue(%s, %q): error %v is not a 22023 *Error", name, s, err)
			}
			return
		}
		if d.Type == Int && (float64(v.Int) < d.Min || float64(v.Int) > d.Max) {
			t.Fatalf("ParseValue(%s, %q) = %d, outside %v .. %v", name, s, v.Int, d.Min, d.Max)
		}
		// The display form must parse back to the same value.
		disp := FormatValue(d, v)
		v2, err := ParseValue(d, disp)
		if err != nil || v2 != v {
			t.Fatalf("ParseValue(%s, %q) = %+v shown as %q, which parses to %+v, %v", name, s, v, disp, v2, err)
		}
	})
}
