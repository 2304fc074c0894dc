package plan

import ()

// CopyInColumns reports, for a COPY FROM STDIN statement, how many
// columns the client must send (0 for any other statement).
func (st *Stmt) CopyInColumns() int {
	if st.FromStdin {
		return st.CopyCols
	}
	return 0
}

// CopyIn reports whether st is COPY FROM STDIN, and its format (0 text
// or csv, 1 binary).
func (st *Stmt) CopyIn() (bool, int16) { return st.FromStdin, st.CopyFormat }

// CopyOut reports whether st is COPY TO STDOUT.
func (st *Stmt) CopyOut() bool { return st.ToStdout }
