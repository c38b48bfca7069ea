package faulty

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio/hints"
)

// Op names a call that rules count or slow down: the driver's Open, or a
// method of driver.File (WriteAt and WriteV are both "write", ReadAt and
// ReadV both "read").
type Op string

// The operations.
const (
	OpOpen     Op = "open"
	OpRead     Op = "read"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpAllocate Op = "allocate"
	OpTruncate Op = "truncate"
	OpSize     Op = "size"
	OpLock     Op = "lock"
	OpUnlock   Op = "unlock"
	OpClose    Op = "close"
	// OpAny matches every call on an open file (not Open).
	OpAny Op = "*"
)

// fileOps are the operations counted per open file, in counter order.
var fileOps = []Op{OpRead, OpWrite, OpSync, OpAllocate, OpTruncate, OpSize, OpLock, OpUnlock, OpClose}

// allOps are the names a rule may use.
var allOps = append([]Op{OpOpen}, append(slices.Clone(fileOps), OpAny)...)

// Kind is what a rule injects.
type Kind int

// The kinds of faults.
const (
	// NoSpace: writes fail with ENOSPC once N bytes were written through
	// the file; the write that crosses the limit writes up to it and
	// returns the short count with ENOSPC. Allocate fails with ENOSPC when
	// the range is longer than what is left.
	NoSpace Kind = iota + 1
	// NoSpaceProcess is NoSpace with one budget for every file opened
	// through the same faulty driver: for the registered "faulty:" driver,
	// the whole process.
	NoSpaceProcess
	// EIOCall: the Call-th call of Op (1-based, counted per open file; for
	// OpOpen per driver) fails with EIO without reaching the inner driver,
	// and with AndLater so do all later ones.
	EIOCall
	// EIOOffset: every read, write and allocate whose range contains byte
	// N fails with EIO without transferring anything.
	EIOOffset
	// ShortWrite: the Call-th write (and with AndLater every later one)
	// writes only the first half of its data and returns that count with
	// an error that matches io.ErrShortWrite and has errno EIO.
	ShortWrite
	// Slow: every call of Op sleeps Delay before it runs.
	Slow
	// Crash: the Call-th call of Op (counted as for EIOCall) kills the
	// process with SIGKILL instead of running: a crash at a chosen point,
	// for programs run under mpirun or as a child of a test. The calls
	// before it completed (the runs of a batch before it were written).
	Crash
)

// Rule is one fault. Which fields matter depends on Kind.
type Rule struct {
	Kind     Kind
	Op       Op            // EIOCall, Slow, Crash
	N        int64         // NoSpace, NoSpaceProcess: bytes; EIOOffset: the offset
	Call     int64         // EIOCall, ShortWrite, Crash: 1-based call number
	AndLater bool          // EIOCall, ShortWrite: also every call after Call
	Delay    time.Duration // Slow
}

// Constructors for the Go API.

// NoSpaceAfter fails writes with ENOSPC after n bytes per file.
func NoSpaceAfter(n int64) Rule { return Rule{Kind: NoSpace, N: n} }

// NoSpaceAfterProcess fails writes with ENOSPC after n bytes written
// through any file of the driver.
func NoSpaceAfterProcess(n int64) Rule { return Rule{Kind: NoSpaceProcess, N: n} }

// EIOOnCall fails the k-th call of op with EIO.
func EIOOnCall(op Op, k int64) Rule { return Rule{Kind: EIOCall, Op: op, Call: k} }

// EIOFromCall fails the k-th and every later call of op with EIO.
func EIOFromCall(op Op, k int64) Rule { return Rule{Kind: EIOCall, Op: op, Call: k, AndLater: true} }

// EIOAt fails reads, writes and allocations that touch byte off.
func EIOAt(off int64) Rule { return Rule{Kind: EIOOffset, N: off} }

// ShortWriteOnCall makes the k-th write short.
func ShortWriteOnCall(k int64) Rule { return Rule{Kind: ShortWrite, Call: k} }

// SlowCalls delays every call of op by d.
func SlowCalls(op Op, d time.Duration) Rule { return Rule{Kind: Slow, Op: op, Delay: d} }

// CrashOnCall kills the process (SIGKILL) at the k-th call of op.
func CrashOnCall(op Op, k int64) Rule { return Rule{Kind: Crash, Op: op, Call: k} }

// Rule names in the collio_fault syntax.
const (
	nameNoSpace        = "enospc_after"
	nameNoSpaceProcess = "enospc_process_after"
	nameEIOCall        = "eio_call"
	nameEIOOffset      = "eio_offset"
	nameShortWrite     = "short_write"
	nameSlow           = "slow"
	nameCrash          = "crash"
)

// String formats r in the collio_fault syntax; ParseRules reads it back.
func (r Rule) String() string {
	call := func() string {
		s := strconv.FormatInt(r.Call, 10)
		if r.AndLater {
			s += "+"
		}
		return s
	}
	switch r.Kind {
	case NoSpace:
		return fmt.Sprintf("%s=%d", nameNoSpace, r.N)
	case NoSpaceProcess:
		return fmt.Sprintf("%s=%d", nameNoSpaceProcess, r.N)
	case EIOCall:
		return fmt.Sprintf("%s=%s:%s", nameEIOCall, r.Op, call())
	case EIOOffset:
		return fmt.Sprintf("%s=%d", nameEIOOffset, r.N)
	case ShortWrite:
		return fmt.Sprintf("%s=%s", nameShortWrite, call())
	case Slow:
		return fmt.Sprintf("%s=%s:%s", nameSlow, r.Op, r.Delay)
	case Crash:
		return fmt.Sprintf("%s=%s:%s", nameCrash, r.Op, call())
	}
	return fmt.Sprintf("unknown fault kind %d", int(r.Kind))
}

// Validate reports a rule whose fields make no sense for its kind.
func (r Rule) Validate() error {
	bad := func(format string, args ...any) error {
		return &RuleError{Rule: r.String(), Reason: fmt.Sprintf(format, args...)}
	}
	switch r.Kind {
	case NoSpace, NoSpaceProcess, EIOOffset:
		if r.N < 0 {
			return bad("must not be negative")
		}
	case EIOCall, ShortWrite, Crash:
		if r.Call < 1 {
			return bad("the call number counts from 1")
		}
		if r.Kind != ShortWrite && !slices.Contains(allOps, r.Op) {
			return bad("unknown operation %q (operations: %s)", r.Op, opNames())
		}
		if r.Kind == Crash && r.AndLater {
			return bad("a process crashes once: no +")
		}
	case Slow:
		if !slices.Contains(allOps, r.Op) {
			return bad("unknown operation %q (operations: %s)", r.Op, opNames())
		}
		if r.Delay < 0 {
			return bad("the delay must not be negative")
		}
	default:
		return bad("unknown fault kind %d", int(r.Kind))
	}
	return nil
}

func opNames() string {
	names := make([]string, len(allOps))
	for i, op := range allOps {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}

// RuleError is a rule that does not parse or validate.
type RuleError struct {
	Rule   string // the rule as written
	Reason string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("fault rule %q: %s", e.Rule, e.Reason)
}

// ParseRules reads the collio_fault syntax: rules separated by ';', each
// name=value, with
//
//	enospc_after=N          ENOSPC after N bytes written to the file
//	enospc_process_after=N  ENOSPC after N bytes written by the process
//	eio_call=OP:K           EIO on the K-th call of OP; OP:K+ from the K-th on
//	eio_offset=N            EIO on reads, writes, allocations touching byte N
//	short_write=K           the K-th write is short; K+ from the K-th on
//	slow=OP:DURATION        sleep before every call of OP (Go duration: 50ms)
//	crash=OP:K              SIGKILL this process at the K-th call of OP
//
// Byte counts take k, m and g suffixes. OP is one of open, read, write,
// sync, allocate, truncate, size, lock, unlock, close, or * for any call on
// the file. Spaces around rules are ignored and so are empty rules. The
// error is a *RuleError naming the first bad rule.
func ParseRules(s string) ([]Rule, error) {
	var rules []Rule
	for _, text := range strings.Split(s, ";") {
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		r, err := parseRule(text)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseRule(text string) (Rule, error) {
	bad := func(format string, args ...any) (Rule, error) {
		return Rule{}, &RuleError{Rule: text, Reason: fmt.Sprintf(format, args...)}
	}
	name, value, ok := strings.Cut(text, "=")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || value == "" {
		return bad("want name=value")
	}
	var r Rule
	switch name {
	case nameNoSpace, nameNoSpaceProcess, nameEIOOffset:
		n, err := hints.ParseSize(value)
		if err != nil || n < 0 {
			return bad("want a byte count (an integer >= 0, optionally with k, m or g)")
		}
		r.N = n
		r.Kind = map[string]Kind{nameNoSpace: NoSpace, nameNoSpaceProcess: NoSpaceProcess, nameEIOOffset: EIOOffset}[name]
	case nameEIOCall, nameCrash:
		op, k, ok := strings.Cut(value, ":")
		if !ok {
			return bad("want OP:K, for example write:3")
		}
		r.Kind, r.Op = EIOCall, Op(strings.TrimSpace(op))
		if name == nameCrash {
			r.Kind = Crash
		}
		if !slices.Contains(allOps, r.Op) {
			return bad("unknown operation %q (operations: %s)", r.Op, opNames())
		}
		if r.Call, r.AndLater, ok = parseCall(k); !ok || (r.AndLater && r.Kind == Crash) {
			if r.Kind == Crash {
				return bad("want a call number >= 1")
			}
			return bad("want a call number >= 1, optionally followed by +")
		}
	case nameShortWrite:
		r.Kind = ShortWrite
		if r.Call, r.AndLater, ok = parseCall(value); !ok {
			return bad("want a call number >= 1, optionally followed by +")
		}
	case nameSlow:
		op, d, ok := strings.Cut(value, ":")
		if !ok {
			return bad("want OP:DURATION, for example write:50ms")
		}
		r.Kind, r.Op = Slow, Op(strings.TrimSpace(op))
		if !slices.Contains(allOps, r.Op) {
			return bad("unknown operation %q (operations: %s)", r.Op, opNames())
		}
		delay, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || delay < 0 {
			return bad("want a duration such as 50ms")
		}
		r.Delay = delay
	default:
		return bad("unknown fault (faults: %s)", strings.Join([]string{nameNoSpace, nameNoSpaceProcess,
			nameEIOCall, nameEIOOffset, nameShortWrite, nameSlow, nameCrash}, ", "))
	}
	return r, nil
}

// parseCall reads "K" or "K+" with K >= 1.
func parseCall(s string) (k int64, andLater, ok bool) {
	s = strings.TrimSpace(s)
	if rest, found := strings.CutSuffix(s, "+"); found {
		s, andLater = rest, true
	}
	k, err := strconv.ParseInt(s, 10, 64)
	return k, andLater, err == nil && k >= 1
}

// parseRanks reads collio_fault_ranks: comma-separated ranks; empty means
// every rank (nil).
func parseRanks(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ranks []int
	for _, part := range strings.Split(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || r < 0 {
			return nil, fmt.Errorf("%q is not a rank", strings.TrimSpace(part))
		}
		ranks = append(ranks, r)
	}
	return ranks, nil
}
