package server

// SetTestHook installs a function every simple Query passes through
// before it runs (tests use it to make a session panic).
func SetTestHook(f func(query string)) { testHook = f }
