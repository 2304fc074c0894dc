package guc

import (
	"fmt"
	"strings"
)

// VarType is the type of a setting, as pg_settings.vartype shows it.
type VarType uint8

// Setting types.
const (
	Bool VarType = iota
	Int
	Real
	String
	Enum
)

func (t VarType) String() string {
	switch t {
	case Bool:
		return "bool"
	case Int:
		return "integer"
	case Real:
		return "real"
	case String:
		return "string"
	case Enum:
		return "enum"
	}
	return fmt.Sprintf("VarType(%d)", uint8(t))
}

// Context says when a setting may change, as pg_settings.context shows it.
// The constants are ordered from most to least restrictive, as PostgreSQL's
// GucContext is.
type Context uint8

// Setting contexts.
const (
	Internal         Context = iota // never: compile- or initdb-time facts
	Postmaster                      // server start only
	Sighup                          // configuration files and reload
	SuperuserBackend                // files, or the startup packet; fixed for the session life
	Backend                         // same, for any user
	Superuser                       // SET by superusers (every lockd user, for now)
	User                            // SET by anyone
)

func (c Context) String() string {
	switch c {
	case Internal:
		return "internal"
	case Postmaster:
		return "postmaster"
	case Sighup:
		return "sighup"
	case SuperuserBackend:
		return "superuser-backend"
	case Backend:
		return "backend"
	case Superuser:
		return "superuser"
	case User:
		return "user"
	}
	return fmt.Sprintf("Context(%d)", uint8(c))
}

// Source says where a value came from, as pg_settings.source shows it. The
// constants are ordered by priority: a value from a lower source never
// replaces one from a higher source (PostgreSQL's GucSource, less the sources
// lockd has no use for).
type Source uint8

// Value sources, ascending priority.
const (
	SourceDefault     Source = iota // boot value
	SourceFile                      // lockd.conf (--config) or lockd.auto.conf (ALTER SYSTEM)
	SourceCommandLine               // -c name=value
	SourceClient                    // startup packet, including its options
	SourceOverride                  // set by the server itself (data_directory, config_file)
	SourceSession                   // SET, SET LOCAL, set_config()
)

func (s Source) String() string {
	switch s {
	case SourceDefault:
		return "default"
	case SourceFile:
		return "configuration file"
	case SourceCommandLine:
		return "command line"
	case SourceClient:
		return "client"
	case SourceOverride:
		return "override"
	case SourceSession:
		return "session"
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// flag bits of a Def, after PostgreSQL's GUC_* flags.
const (
	flagNoShowAll      = 1 << iota // hidden from SHOW ALL and pg_settings
	flagNoResetAll                 // untouched by RESET ALL
	flagNotInSample                // left out of lockd.conf.example
	flagDisallowInFile             // may not be set in a configuration file or by ALTER SYSTEM
)

// Def defines one setting. The zero value is not useful; Defs live in [Table]
// and must not be modified.
type Def struct {
	Name       string   // canonical spelling, e.g. "DateStyle", "deadlock_timeout"
	Type       VarType  //
	Unit       string   // base unit: "", "B", "kB", "MB", "8kB" (blocks), "ms", "s", "min"
	Boot       string   // boot value as pg_settings.boot_val shows it (base units: "1000" for deadlock_timeout)
	Min, Max   float64  // range, for Int and Real
	EnumValues []string // accepted values, for Enum (canonical spelling)
	Context    Context  //
	Category   string   // e.g. "Lock Management"
	Short      string   // pg_settings.short_desc
	Extra      string   // pg_settings.extra_desc; "" is NULL
	Reported   bool     // sent as ParameterStatus at startup and when it changes

	flags uint8
	// enumAliases are accepted spellings of Enum values that pg_settings
	// does not list (PostgreSQL's hidden enum entries, such as "true" for
	// synchronous_commit's "on"): alias → canonical value.
	enumAliases map[string]string
	// check validates (and may normalise) a value that passed the type's
	// parsing, like a PostgreSQL check hook.
	check func(d *Def, v *Value) *Error

	idx  int   // position in Table
	boot Value // parsed Boot
}

// Value is a typed setting value. Which fields are meaningful depends on the
// setting's type: Bool for Bool; Int (base units) for Int; Real for Real; Str
// for String; Enum uses Str (canonical spelling) and Int (index into
// Def.EnumValues). Values are comparable with ==.
type Value struct {
	Bool bool
	Int  int64
	Real float64
	Str  string
}

// SQLSTATE codes guc reports.
const (
	CodeInvalidParameterValue = "22023"
	CodeUndefinedObject       = "42704"
	CodeCantChangeRuntime     = "55P02"
	CodeSyntaxError           = "42601"
	CodeConfigFileError       = "F0000"
	CodeInternalError         = "XX000"
)

// Error is an error with a PostgreSQL SQLSTATE, message, detail and hint, as
// a client would see them in an ErrorResponse.
type Error struct {
	Code, Message, Detail, Hint string
}

func (e *Error) Error() string { return e.Message }

// SQLState returns the five-character SQLSTATE.
func (e *Error) SQLState() string { return e.Code }

// ErrDetail returns the DETAIL text, or "".
func (e *Error) ErrDetail() string { return e.Detail }

// ErrHint returns the HINT text, or "".
func (e *Error) ErrHint() string { return e.Hint }

func errUnknown(name string) *Error {
	return &Error{Code: CodeUndefinedObject, Message: fmt.Sprintf("unrecognized configuration parameter \"%s\"", name)}
}

func errInvalid(name, value string) *Error {
	return &Error{Code: CodeInvalidParameterValue, Message: fmt.Sprintf("invalid value for parameter \"%s\": \"%s\"", name, value)}
}

func errCantChange(name, how string) *Error {
	return &Error{Code: CodeCantChangeRuntime, Message: fmt.Sprintf("parameter \"%s\" %s", name, how)}
}

const (
	cantChange        = "cannot be changed"
	cantChangeRestart = "cannot be changed without restarting the server"
	cantChangeNow     = "cannot be changed now"
	cantSetAfterStart = "cannot be set after connection start"
)

// FileError is a problem with one entry (or the syntax) of a configuration
// file. Err carries the SQLSTATE and the message without the location.
type FileError struct {
	File string
	Line int // 0 if unknown
	Err  *Error
	msg  string
}

func (e *FileError) Error() string { return e.msg }

// Unwrap returns the underlying *Error.
func (e *FileError) Unwrap() error { return e.Err }

// newFileError places err in file at line. Unknown names and syntax errors
// use PostgreSQL's "... in file \"%s\" line %d" wording; other errors are
// prefixed with "file:line: ".
func newFileError(file string, line int, err *Error, pgStyle bool) *FileError {
	fe := &FileError{File: file, Line: line, Err: err}
	switch {
	case pgStyle && line > 0:
		fe.msg = fmt.Sprintf("%s in file \"%s\" line %d", err.Message, file, line)
	case pgStyle:
		fe.msg = fmt.Sprintf("%s in file \"%s\"", err.Message, file)
	case line > 0:
		fe.msg = fmt.Sprintf("%s:%d: %s", file, line, err.Message)
	default:
		fe.msg = fmt.Sprintf("%s: %s", file, err.Message)
	}
	return fe
}

// lowerASCII returns s in lower case, without allocating when s already is.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
