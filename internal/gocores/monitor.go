package gocores

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The Go runtime's system monitor (sysmon) is a thread of its own that
// wakes every 20 us to 10 ms. It shares the core the launcher bound the
// rank to, and as an ordinary thread each of its wakeups preempts the
// rank's main thread at once. A rank of a C program that writes a shared
// file is then preempted while it holds the file's inode lock; the other
// ranks' writes of that file go to sleep instead of spinning, and their
// wakeup costs 100-400 us. Under SCHED_BATCH a waking thread does not
// preempt a running one: the monitor runs at the next tick or when the
// core is free, and keeps its fair share of the core. (Not nice 19: the
// threads the monitor starts for the runtime inherit its settings, and
// at nice 19 they would run the library's goroutines on a sliver of the
// core; under SCHED_BATCH they only wait for the next tick instead of
// preempting, with their share intact.)

// Telling the monitor apart: the runtime creates it before any package's
// init runs, so it is among the threads that exist at init and were
// created after the thread running init (larger thread ids; a C program's
// own threads may be among them). While the runtime runs Go code (the C
// library initialising, or in MPI_Init; a Go program's ShareCores), the
// monitor is the one of these found sleeping in nanosleep (runtime.usleep)
// in a good share of the samples (nearly all on an idle core, a third or
// more on a loaded one, where it waits to run); idle Go threads wait on
// futexes, C libraries' threads in poll or epoll_wait, and other Go
// threads nanosleep for microseconds only. (When the runtime has been
// idle, the monitor sleeps on a futex instead and is not told apart.)
const (
	monitorSamples = 32
	monitorShare   = 1.0 / 6
)

// Monitor holds the candidates for the monitor thread.
type Monitor []int

// FindMonitor lists the candidates. It must be called from an init
// function: the runtime runs them on the thread it created before the
// monitor.
func FindMonitor() Monitor {
	if runtime.GOOS != "linux" {
		return nil
	}
	self, pid := unix.Gettid(), unix.Getpid()
	var m Monitor
	for _, tid := range tasks() {
		if tid > self && tid != pid {
			m = append(m, tid)
		}
	}
	return m
}

// Quiet finds the monitor among the candidates and moves it to
// SCHED_BATCH, its nice value unchanged, unless RestoreMonitor was called
// already. It returns its thread id, 0 if it was not told apart or could
// not be moved.
func (m Monitor) Quiet() int {
	quieted.Lock()
	done, tid := quieted.restored, quieted.tid
	quieted.Unlock()
	if done || tid != 0 {
		return tid // given back for good, or quieted already
	}
	// On a loaded node one round of samples may not tell the monitor
	// apart (it waits to run, or another thread happens to nanosleep
	// too): two more, spread wider, before giving up.
	for gap := 50 * time.Microsecond; tid == 0 && gap <= 800*time.Microsecond; gap *= 4 {
		tid = m.find(monitorSamples, gap, taskSyscall)
	}
	if tid == 0 {
		return 0
	}
	quieted.Lock()
	defer quieted.Unlock()
	if quieted.restored || quieted.tid != 0 {
		return quieted.tid
	}
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil || attr.Policy != unix.SCHED_NORMAL {
		return 0 // the program set a policy of its own: leave it
	}
	attr.Policy, attr.Flags = unix.SCHED_BATCH, 0
	if unix.SchedSetAttr(tid, attr, 0) != nil {
		return 0
	}
	quieted.tid = tid
	return tid
}

// quieted is the monitor Quiet moved, for RestoreMonitor.
var quieted struct {
	sync.Mutex
	tid      int
	restored bool
}

// RestoreMonitor puts the monitor back under SCHED_NORMAL for good, once
// background transfers begin: a goroutine that moves data while the
// application's thread computes needs the monitor on time (with it under
// SCHED_BATCH, nonblocking reads at np 2 returned from their start call
// 5-12 ms late in most rounds and hid nothing). It reports whether a
// monitor was restored.
func RestoreMonitor() bool {
	quieted.Lock()
	defer quieted.Unlock()
	quieted.restored = true
	if quieted.tid == 0 {
		return false
	}
	tid := quieted.tid
	quieted.tid = 0
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil || attr.Policy != unix.SCHED_BATCH {
		return false
	}
	attr.Policy, attr.Flags = unix.SCHED_NORMAL, 0
	return unix.SchedSetAttr(tid, attr, 0) == nil
}

// find samples the candidates' states and returns the only one seen in
// nanosleep in at least monitorShare of the samples, 0 if none or several
// are; gap apart (pause).
func (m Monitor) find(samples int, gap time.Duration, state func(tid int) (nr int, ok bool)) int {
	asleep := make([]int, len(m))
	for range samples {
		for i, tid := range m {
			if nr, ok := state(tid); ok && nr == unix.SYS_NANOSLEEP {
				asleep[i]++
			}
		}
		pause(gap)
	}
	found := 0
	for i, n := range asleep {
		if float64(n) >= monitorShare*float64(samples) {
			if found != 0 {
				return 0
			}
			found = m[i]
		}
	}
	return found
}

// pause lets gap pass while yielding the core, so that on a rank's only
// core the monitor gets to run and go back to sleep. It yields by raw
// system calls: a blocking one (nanosleep) would leave the runtime's
// processor idle for the monitor to take back, and with every processor
// idle the monitor sleeps on a futex instead, where it cannot be told
// apart. (The sampling's own file reads are ordinary system calls, which
// wake the monitor if it sleeps so.)
func pause(gap time.Duration) {
	for start := time.Now(); time.Since(start) < gap; {
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	}
}

func tasks() []int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// taskSyscall reads the system call a thread is blocked in from
// /proc/self/task/TID/syscall (ok is false while it runs or is runnable).
func taskSyscall(tid int) (nr int, ok bool) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/syscall")
	if err != nil {
		return 0, false
	}
	field, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	nr, err = strconv.Atoi(field)
	return nr, err == nil
}
