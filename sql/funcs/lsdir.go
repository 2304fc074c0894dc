package funcs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// The directory-listing functions (PostgreSQL's utils/adt/genfile.c and
// misc.c): pg_ls_tmpdir and pg_ls_waldir list the regular files of a
// directory of the data directory, with their sizes and modification
// times. lockd sorts and joins in memory and writes no temporary files,
// so base/pgsql_tmp does not exist and pg_ls_tmpdir returns no rows; it
// would list the directory if something put files there.

// LsDirCols are the pg_ls_*dir functions' OUT parameters.
var LsDirCols = []types.Column{
	{Name: "name", Type: types.TypeText}, {Name: "size", Type: types.TypeInt8}, {Name: "modification", Type: types.TypeTimestamptz},
}

var lsDirTypes = []types.Type{types.TypeText, types.TypeInt8, types.TypeTimestamptz}

// Tablespace OIDs (pg_tablespace.dat).
const (
	defaultTablespace = 1663
	globalTablespace  = 1664
)

// LsDir describes a pg_ls_*dir function: the arguments it takes (at most
// one, the tablespace OID) and the directory it lists.
type LsDir struct {
	MaxArgs int
	dir     func(ec *expr.EvalCtx, args []types.Datum) (path string, missingOK bool, err error)
}

// LsDirs are the pg_ls_*dir functions by name.
var LsDirs = map[string]LsDir{
	"pg_ls_tmpdir": {MaxArgs: 1, dir: func(ec *expr.EvalCtx, args []types.Datum) (string, bool, error) {
		if len(args) == 1 {
			if o := args[0].I; o != defaultTablespace && o != globalTablespace {
				return "", false, pgerr.New(pgerr.UndefinedObject, "tablespace with OID %d does not exist", o)
			}
		}
		// TempTablespacePath of pg_default and pg_global
		return filepath.Join(ec.B.DataDir, "base", "pgsql_tmp"), true, nil
	}},
	"pg_ls_waldir": {dir: func(ec *expr.EvalCtx, _ []types.Datum) (string, bool, error) {
		return filepath.Join(ec.B.DataDir, "pg_wal"), false, nil
	}},
}

// Gen lists the directory: one record (name, size, modification) per
// regular file whose name does not start with a dot (pg_ls_dir_files).
// Only superusers may (PostgreSQL grants them to pg_monitor).
func (l LsDir) Gen(name string) func(ec *expr.EvalCtx, args []types.Datum, emit func(types.Datum) error) error {
	return func(ec *expr.EvalCtx, args []types.Datum, emit func(types.Datum) error) error {
		if !ec.B.Superuser() {
			return pgerr.New(pgerr.InsufficientPrivilege, "permission denied for function %s", name)
		}
		dir, missingOK, err := l.dir(ec, args)
		if err != nil {
			return err
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			if missingOK && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return pgerr.New(pgerr.IOError, "could not open directory \"%s\": %v", dir, errors.Unwrap(err))
		}
		for _, de := range ents {
			if strings.HasPrefix(de.Name(), ".") {
				continue
			}
			info, err := de.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed since the directory was read
				}
				return pgerr.New(pgerr.IOError, "could not stat file \"%s\": %v", filepath.Join(dir, de.Name()), err)
			}
			if !info.Mode().IsRegular() {
				continue
			}
			vals := []types.Datum{types.TextDatum(de.Name()), types.IntDatum(info.Size()), types.IntDatum(info.ModTime().UnixMicro())}
			if err := emit(expr.MakeRecord(ec, lsDirTypes, vals)); err != nil {
				return err
			}
		}
		return nil
	}
}
