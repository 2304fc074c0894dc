// Package pgerr holds the one error type that reaches a client: an
// SQLSTATE, a message and PostgreSQL's optional fields. Only server/ turns
// it into an ErrorResponse or NoticeResponse; every other package returns
// it (or an error that From can convert) and matches internal sentinels
// with errors.Is.
//
// pgerr imports nothing from lockd. The leaf packages guc/ and locks/ may
// not import it (they use the standard library only); their errors carry
// the same information through the SQLStater interface, and From converts
// them at the boundary.
package pgerr

import (
	"errors"
	"fmt"
)

// Severities as PostgreSQL spells them in the S and V fields.
const (
	SeverityError   = "ERROR"
	SeverityFatal   = "FATAL"
	SeverityWarning = "WARNING"
	SeverityNotice  = "NOTICE"
	SeverityInfo    = "INFO"
	SeverityLog     = "LOG"
)

// SQLSTATE codes lockd raises. Names follow PostgreSQL's errcodes.txt.
const (
	SuccessfulCompletion         = "00000"
	Warning                      = "01000"
	NoActiveSQLTransaction       = "25P01"
	ActiveSQLTransaction         = "25001"
	ReadOnlySQLTransaction       = "25006"
	InFailedSQLTransaction       = "25P02"
	InvalidSavepointSpec         = "3B001"
	FeatureNotSupported          = "0A000"
	InvalidParameterValue        = "22023"
	DivisionByZero               = "22012"
	NumericValueOutOfRange       = "22003"
	InvalidTextRepresentation    = "22P02"
	InvalidDatetimeFormat        = "22007"
	StringDataRightTruncation    = "22001"
	InvalidEscapeSequence        = "22025"
	CharacterNotInRepertoire     = "22021"
	UntranslatableCharacter      = "22P05"
	DatatypeMismatch             = "42804"
	UndefinedFunction            = "42883"
	UndefinedColumn              = "42703"
	UndefinedTable               = "42P01"
	UndefinedObject              = "42704"
	UndefinedParameter           = "42P02"
	AmbiguousColumn              = "42702"
	AmbiguousFunction            = "42725"
	IndeterminateDatatype        = "42P18"
	SyntaxError                  = "42601"
	GroupingError                = "42803"
	InvalidColumnReference       = "42P10"
	CantChangeRuntimeParam       = "55P02"
	LockNotAvailable             = "55P03"
	ObjectNotInPrerequisiteState = "55000"
	DiskFull                     = "53100"
	IOError                      = "58030"
	QueryCanceled                = "57014"
	AdminShutdown                = "57P01"
	CannotConnectNow             = "57P03"
	TooManyConnections           = "53300"
	OutOfMemory                  = "53200"
	ProtocolViolation            = "08P01"
	InvalidAuthorizationSpec     = "28000"
	InvalidPassword              = "28P01"
	InvalidSQLStatementName      = "26000"
	InvalidCursorName            = "34000"
	DuplicatePreparedStatement   = "42P05"
	DuplicateCursor              = "42P03"
	DeadlockDetected             = "40P01"
	SerializationFailure         = "40001"
	IdleInTransactionTimeout     = "25P03"
	InsufficientPrivilege        = "42501"
	InvalidCatalogName           = "3D000"
	InternalError                = "XX000"
	ProgramLimitExceeded         = "54000"
	CardinalityViolation         = "21000"
	InvalidTransactionState      = "25000"
	CannotCoerce                 = "42846"
	NullValueNotAllowed          = "22004"
	InvalidSchemaName            = "3F000"
	WrongObjectType              = "42809"
	InvalidBinaryRepresentation  = "22P03"
	NotNullViolation             = "23502"
	UniqueViolation              = "23505"
	ForeignKeyViolation          = "23503"
	CheckViolation               = "23514"
	DuplicateTable               = "42P07"
	DuplicateObject              = "42710"
	InvalidTableDefinition       = "42P16"
	InvalidObjectDefinition      = "42P17"
	UndefinedFile                = "58P01"
	DuplicateColumn              = "42701"
	BadCopyFileFormat            = "22P04"
)

// SQLSTATE codes of the query planner and catalog functions.
const (
	InvalidName          = "42602"
	UndefinedSchema      = "3F000"
	DuplicateAlias       = "42712"
	AmbiguousAlias       = "42P09"
	InvalidRegexp        = "2201B"
	InvalidRowCountLimit = "2201W"
	InvalidOffsetLimit   = "2201X"
	WindowingError       = "42P20"
	InvalidRecursion     = "42P19"
)

// SQLSTATE codes of roles and authentication.
const (
	ReservedName               = "42939"
	ObjectInUse                = "55006"
	DependentObjectsStillExist = "2BP01"
)

// Error is an error with PostgreSQL's fields. The zero Severity means ERROR.
// Position is the 1-based character position in the query text (0: none).
type Error struct {
	Severity string
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int32
	// Where is the context PostgreSQL reports with the error (the W
	// field, psql's CONTEXT:), such as the COPY input line.
	Where string
	// The object an integrity error concerns, as PostgreSQL reports it
	// (the s, t, c, d and n fields; psql shows them with VERBOSITY
	// verbose, drivers expose them).
	SchemaName     string
	TableName      string
	ColumnName     string
	DataTypeName   string
	ConstraintName string
}

func (e *Error) Error() string { return e.Message }

// SQLState reports the five-character SQLSTATE.
func (e *Error) SQLState() string { return e.Code }

// New returns an ERROR with the given code and formatted message.
func New(code, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Severity: SeverityError, Code: code, Message: format}
	}
	return &Error{Severity: SeverityError, Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set (e is modified and returned).
func (e *Error) WithHint(h string) *Error { e.Hint = h; return e }

// WithDetail returns e with its detail set.
func (e *Error) WithDetail(d string) *Error { e.Detail = d; return e }

// OnTable returns e naming the table it concerns (schema public).
func (e *Error) OnTable(table string) *Error { e.SchemaName, e.TableName = "public", table; return e }

// OnColumn returns e naming a column of a table.
func (e *Error) OnColumn(table, column string) *Error {
	e.SchemaName, e.TableName, e.ColumnName = "public", table, column
	return e
}

// OnConstraint returns e naming a constraint of a table.
func (e *Error) OnConstraint(table, constraint string) *Error {
	e.SchemaName, e.TableName, e.ConstraintName = "public", table, constraint
	return e
}

// WithPosition returns e with its cursor position set.
func (e *Error) WithPosition(p int32) *Error { e.Position = p; return e }

// NotSupported is the 0A000 error for a construct lockd does not execute.
func NotSupported(format string, args ...any) *Error {
	return New(FeatureNotSupported, format, args...)
}

// SQLStater is implemented by errors of packages that cannot import pgerr
// (guc, locks) but carry an SQLSTATE.
type SQLStater interface {
	error
	SQLState() string
}

type detailer interface{ ErrDetail() string }
type hinter interface{ ErrHint() string }

// From converts any error into an *Error: an *Error in the chain is
// returned as is, an SQLStater is copied with its detail and hint, and
// anything else becomes XX000 with the error's text.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var ss SQLStater
	if errors.As(err, &ss) {
		e := &Error{Severity: SeverityError, Code: ss.SQLState(), Message: ss.Error()}
		if d, ok := ss.(detailer); ok {
			e.Detail = d.ErrDetail()
		}
		if h, ok := ss.(hinter); ok {
			e.Hint = h.ErrHint()
		}
		return e
	}
	return &Error{Severity: SeverityError, Code: InternalError, Message: err.Error()}
}
