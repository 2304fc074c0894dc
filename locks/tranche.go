package locks

import (
	"fmt"
	"sync"
)

// Tranche names a family of LWLocks, as pg_stat_activity.wait_event shows it
// for wait_event_type "LWLock". Names follow PostgreSQL 13+ (no "Lock"
// suffix; CamelCase tranches). Stats are kept per tranche, so a tranche is
// the unit an experiment observes: all 16 LockManager partition locks, every
// BufferContent lock, and so on.
type Tranche uint16

// Built-in tranches. TrancheOther is the tranche of a zero-value LWLock.
const (
	TrancheOther Tranche = iota
	TrancheShmemIndex
	TrancheOidGen
	TrancheXidGen
	TrancheProcArray
	TrancheSInvalRead
	TrancheSInvalWrite
	TrancheWALBufMapping
	TrancheWALWrite
	TrancheControlFile
	TrancheCheckpointerComm
	TrancheXactSLRU
	TrancheXactBuffer
	TrancheWALInsert
	TrancheBufferContent
	TrancheBufferMapping
	TrancheLockManager
	TrancheLockFastPath
	TranchePredicateLockManager
	TrancheRelationExtension
	numBuiltinTranches
)

// MaxTranches bounds the number of tranches (built-in plus registered);
// per-backend stats are arrays of this size.
const MaxTranches = 48

var builtinTrancheNames = [numBuiltinTranches]string{
	"Other", "ShmemIndex", "OidGen", "XidGen", "ProcArray", "SInvalRead", "SInvalWrite",
	"WALBufMapping", "WALWrite", "ControlFile", "CheckpointerComm", "XactSLRU", "XactBuffer",
	"WALInsert", "BufferContent", "BufferMapping", "LockManager", "LockFastPath",
	"PredicateLockManager", "RelationExtension",
}

var trancheReg struct {
	mu    sync.RWMutex
	names []string // registered tranches, numBuiltinTranches onwards
}

// RegisterTranche returns a new tranche with the given wait-event name, or
// the existing one with that name. It fails once MaxTranches are in use.
// Call it at initialisation, not per lock.
func RegisterTranche(name string) (Tranche, error) {
	for i, n := range builtinTrancheNames {
		if n == name {
			return Tranche(i), nil
		}
	}
	trancheReg.mu.Lock()
	defer trancheReg.mu.Unlock()
	for i, n := range trancheReg.names {
		if n == name {
			return Tranche(int(numBuiltinTranches) + i), nil
		}
	}
	if int(numBuiltinTranches)+len(trancheReg.names) >= MaxTranches {
		return 0, fmt.Errorf("locks: too many LWLock tranches (max %d)", MaxTranches)
	}
	trancheReg.names = append(trancheReg.names, name)
	return Tranche(int(numBuiltinTranches) + len(trancheReg.names) - 1), nil
}

// String returns the tranche's wait-event name, e.g. "LockManager".
func (t Tranche) String() string {
	if t < numBuiltinTranches {
		return builtinTrancheNames[t]
	}
	trancheReg.mu.RLock()
	defer trancheReg.mu.RUnlock()
	if i := int(t - numBuiltinTranches); i < len(trancheReg.names) {
		return trancheReg.names[i]
	}
	return fmt.Sprintf("tranche%d", t)
}

// NumTranches returns how many tranches exist now (built-in + registered);
// valid tranches are 0 .. NumTranches()-1.
func NumTranches() int {
	trancheReg.mu.RLock()
	defer trancheReg.mu.RUnlock()
	return int(numBuiltinTranches) + len(trancheReg.names)
}
