package locks

import (
	"fmt"
	"sync"
)

// WaitEvent is a compact code for a (wait_event_type, wait_event) pair as
// pg_stat_activity shows them. The top byte is the class, the rest an index
// within it, so setting a wait event is one atomic store with no allocation.
// The zero WaitEvent means "not waiting".
type WaitEvent uint32

// Wait event classes (wait_event_type).
const (
	waitClassNone uint32 = iota
	waitClassLWLock
	waitClassLock
	waitClassActivity
	waitClassBufferPin
	waitClassClient
	waitClassExtension
	waitClassIPC
	waitClassTimeout
	waitClassIO
	numWaitClasses
)

var waitClassNames = [numWaitClasses]string{
	"", "LWLock", "Lock", "Activity", "BufferPin", "Client", "Extension", "IPC", "Timeout", "IO",
}

func makeWaitEvent(class, id uint32) WaitEvent { return WaitEvent(class<<24 | id&0xffffff) }

// LWLockWaitEvent is the wait event of a backend sleeping on an LWLock of
// tranche t: ("LWLock", t.String()).
func LWLockWaitEvent(t Tranche) WaitEvent { return makeWaitEvent(waitClassLWLock, uint32(t)) }

// LockWaitEvent is the wait event of a backend sleeping on a heavyweight
// lock of type t: ("Lock", t.String()), e.g. ("Lock", "transactionid").
func LockWaitEvent(t LockTagType) WaitEvent { return makeWaitEvent(waitClassLock, uint32(t)) }

// Wait events other packages report through Proc.SetWaitEvent.
var (
	WaitEventClientRead           = NewWaitEvent("Client", "ClientRead")
	WaitEventClientWrite          = NewWaitEvent("Client", "ClientWrite")
	WaitEventPgSleep              = NewWaitEvent("Timeout", "PgSleep")
	WaitEventSpinDelay            = NewWaitEvent("Timeout", "SpinDelay")
	WaitEventVacuumDelay          = NewWaitEvent("Timeout", "VacuumDelay")
	WaitEventProcArrayGroupUpdate = NewWaitEvent("IPC", "ProcArrayGroupUpdate")
	WaitEventXactGroupUpdate      = NewWaitEvent("IPC", "XactGroupUpdate")
	WaitEventBufferPin            = NewWaitEvent("BufferPin", "BufferPin")
	WaitEventDataFileRead         = NewWaitEvent("IO", "DataFileRead")
	WaitEventDataFileWrite        = NewWaitEvent("IO", "DataFileWrite")
	WaitEventDataFileExtend       = NewWaitEvent("IO", "DataFileExtend")
	WaitEventDataFileSync         = NewWaitEvent("IO", "DataFileSync")
)

var waitEventReg struct {
	mu    sync.RWMutex
	names [numWaitClasses][]string
}

// NewWaitEvent returns the code for (typ, name), registering it if new. typ
// must be one of PostgreSQL's wait event types other than LWLock and Lock
// (those are derived from tranches and lock tag types): Activity, BufferPin,
// Client, Extension, IPC, Timeout or IO. It panics on an unknown type. Call
// it at initialisation and keep the code.
func NewWaitEvent(typ, name string) WaitEvent {
	class := uint32(0)
	for i := waitClassActivity; i < numWaitClasses; i++ {
		if waitClassNames[i] == typ {
			class = i
		}
	}
	if class == 0 {
		panic(fmt.Sprintf("locks: unknown wait event type %q", typ))
	}
	waitEventReg.mu.Lock()
	defer waitEventReg.mu.Unlock()
	for i, n := range waitEventReg.names[class] {
		if n == name {
			return makeWaitEvent(class, uint32(i))
		}
	}
	waitEventReg.names[class] = append(waitEventReg.names[class], name)
	return makeWaitEvent(class, uint32(len(waitEventReg.names[class])-1))
}

// Type returns wait_event_type ("" for no wait).
func (e WaitEvent) Type() string {
	c := uint32(e) >> 24
	if c < numWaitClasses {
		return waitClassNames[c]
	}
	return ""
}

// Name returns wait_event ("" for no wait).
func (e WaitEvent) Name() string {
	c, id := uint32(e)>>24, uint32(e)&0xffffff
	switch c {
	case waitClassNone:
		return ""
	case waitClassLWLock:
		return Tranche(id).String()
	case waitClassLock:
		return LockTagType(id).String()
	}
	if c >= numWaitClasses {
		return ""
	}
	waitEventReg.mu.RLock()
	defer waitEventReg.mu.RUnlock()
	if int(id) < len(waitEventReg.names[c]) {
		return waitEventReg.names[c][id]
	}
	return ""
}
