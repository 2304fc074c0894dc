package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times (100 on
// every architecture Go supports on Linux).
const clockTicks = 100

// procStat reads /proc/PID/stat: the parent pid, the process's own CPU
// (utime + stime) and its reaped children's (cutime + cstime), in seconds.
func procStat(pid int) (ppid int, self, children float64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command may contain spaces
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	// after ")": state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
	if len(f) < 15 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	num := func(k int) float64 { v, _ := strconv.ParseFloat(f[k], 64); return v / clockTicks }
	return ppid, num(11) + num(12), num(13) + num(14), true
}

// treeCPU is the CPU used so far by process pid, its reaped children and
// its live children (PostgreSQL's backends are children of the postmaster;
// those that exited are in its cutime once reaped).
func treeCPU(pid int) (float64, bool) {
	_, self, reaped, ok := procStat(pid)
	if !ok {
		return 0, false
	}
	total := self + reaped
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		if ppid, cself, _, ok := procStat(child); ok && ppid == pid {
			total += cself
		}
	}
	return total, true
}

// machineCPU reads /proc/stat: busy and total CPU seconds of the machine
// since boot, over all CPUs. Busy is user, nice and system time: interrupt
// handling and stolen time are not any process's.
func machineCPU() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, x := range f[1:] {
		v, _ := strconv.ParseFloat(x, 64)
		if i >= 8 { // guest times are already in user and nice
			break
		}
		total += v
		if i <= 2 { // user, nice, system
			busy += v
		}
	}
	return busy / clockTicks, total / clockTicks
}

// kernelThreadsCPU is the CPU used so far by the kernel's threads (the
// children of kthreadd, pid 2): writeback and other work the servers'
// I/O causes, which is not other users' load.
func kernelThreadsCPU() float64 {
	var total float64
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, self, _, ok := procStat(pid); ok && (ppid == 2 || pid == 2) {
			total += self
		}
	}
	return total
}

// selfCPU is the runner's own CPU (sampler, scrapes, log parsing).
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// loadAvg is the 1-minute load average.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// pidFromFile reads the first line of a postmaster.pid-style file.
func pidFromFile(path string) int {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}
