// Package envvar parses collio's switch variables (COLLIO_VERBOSE,
// COLLIO_STATS, COLLIO_FAST_LANE, ...) strictly: a value that is not one
// of the accepted ones is an error naming the variable, the value and what
// is accepted, and the variable's default applies meanwhile. One parser
// serves the Go code and, through the C library's exports, its C code, so
// a typo is reported the same way wherever the variable is read.
package envvar

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/collio/collio/internal/ioerr"
)

type kind int

const (
	kindSwitch kind = iota // on or off
	kindLevel              // a switch or a number >= 0 (COLLIO_VERBOSE)
	kindCount              // a number from 0 to max
	kindStats              // a switch or a path (COLLIO_STATS)
)

// Var is one variable of the table.
type Var struct {
	Name string
	kind kind
	def  int // the default: 0 or 1 for switches
	max  int // kindCount's largest value
}

// Accepted describes the values v takes, for errors and documentation.
func (v Var) Accepted() string {
	switch v.kind {
	case kindLevel:
		return "a number >= 0 (0 off, 1 on, higher more), " + switchWords
	case kindCount:
		return fmt.Sprintf("a number from 0 to %d", v.max)
	case kindStats:
		return switchWords + " (on: text on stderr), or a file path containing a '/' (%p: process id)"
	}
	return switchWords
}

// switchWords are the values of a switch, lower or upper case; the empty
// value (or an unset variable) means the default.
const switchWords = "1, on, yes, true, 0, off, no, false"

// Default is the value of an unset or empty v: 0 or 1 for switches and
// levels, the count for counts ("" off for COLLIO_STATS).
func (v Var) Default() int { return v.def }

// Vars are collio's switch variables. Paths (COLLIO_PASSTHROUGH,
// COLLIO_HINTS_CONFIG, COLLIO_RECORD, ROMIO_HINTS) and hint values
// (COLLIO_IO_SERVERS, checked with the hints) are not here.
var Vars = []Var{
	{Name: Verbose, kind: kindLevel},
	{Name: Stats, kind: kindStats},
	{Name: PrintHints, kind: kindSwitch},
	{Name: ErrorCodes, kind: kindCount, def: 64, max: 4096},
	{Name: FastLane, kind: kindSwitch, def: 1},
	{Name: ThreadMultiple, kind: kindSwitch, def: 1},
	{Name: SharedFP, kind: kindSwitch, def: 1},
	{Name: SharedFPServer, kind: kindSwitch},
	{Name: Warm, kind: kindSwitch, def: 1},
	{Name: QuietMonitor, kind: kindSwitch, def: 1},
}

// The variables' names.
const (
	Verbose        = "COLLIO_VERBOSE"
	Stats          = "COLLIO_STATS"
	PrintHints     = "COLLIO_PRINT_HINTS"
	ErrorCodes     = "COLLIO_ERROR_CODES"
	FastLane       = "COLLIO_FAST_LANE"
	ThreadMultiple = "COLLIO_THREAD_MULTIPLE"
	SharedFP       = "COLLIO_SHARED_FP"
	SharedFPServer = "COLLIO_SHARED_FP_SERVER"
	Warm           = "COLLIO_WARM"
	QuietMonitor   = "COLLIO_QUIET_MONITOR"
)

// Lookup finds name in Vars.
func Lookup(name string) (Var, bool) {
	for _, v := range Vars {
		if v.Name == name {
			return v, true
		}
	}
	return Var{}, false
}

// ErrBadValue is wrapped by every error of this package.
var ErrBadValue = errors.New("bad value")

// Int parses value as name's: a switch gives 0 or 1, a level or count its
// number, COLLIO_STATS 0 (off) or 1 (on: stderr; a path is 1 too, see
// StatsDest). An empty value gives the default; a value not accepted
// gives the default and an error of class ioerr.ErrArg. A name not in
// Vars is an error.
func Int(name, value string) (int, error) {
	v, ok := Lookup(name)
	if !ok {
		return 0, ioerr.New(ioerr.ErrArg, "", "%s is not one of collio's switch variables", name)
	}
	return v.parse(value)
}

func (v Var) parse(value string) (int, error) {
	s := strings.TrimSpace(value)
	if s == "" {
		return v.def, nil
	}
	if on, ok := switchValue(s); ok && v.kind != kindCount {
		return on, nil
	}
	switch v.kind {
	case kindLevel, kindCount:
		n, err := strconv.Atoi(s)
		if err == nil && n >= 0 && (v.kind == kindLevel || n <= v.max) {
			return n, nil
		}
	case kindStats:
		if _, err := StatsDest(value); err == nil {
			return 1, nil
		}
	}
	return v.def, v.bad(value)
}

func (v Var) bad(value string) error {
	return &ioerr.Error{Class: ioerr.ErrArg, Rank: -1, Err: ErrBadValue,
		Msg: fmt.Sprintf("%s=%q is not valid; accepted: %s", v.Name, value, v.Accepted())}
}

// switchValue reads a switch word: 1 for on, 0 for off.
func switchValue(s string) (int, bool) {
	switch strings.ToLower(s) {
	case "1", "on", "yes", "true":
		return 1, true
	case "0", "off", "no", "false":
		return 0, true
	}
	return 0, false
}

// Switch is Int for a switch (or level, or count): whether it is on.
func Switch(name, value string) (bool, error) {
	n, err := Int(name, value)
	return n > 0, err
}

// StatsDest parses COLLIO_STATS: "" for no report, "1" for the text report
// on stderr, else the path template of the JSON report (with "%p" and "%%"
// the only escapes). A value not accepted gives "" and an error.
func StatsDest(value string) (string, error) {
	v, _ := Lookup(Stats)
	s := strings.TrimSpace(value)
	if s == "" {
		return "", nil
	}
	if on, ok := switchValue(s); ok {
		if on == 1 {
			return "1", nil
		}
		return "", nil
	}
	// A path needs a '/', so that a mistyped switch ("ture", "2") is not
	// taken for a file in the current directory.
	if !strings.Contains(s, "/") {
		return "", v.bad(value)
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+1 < len(s) && (s[i+1] == 'p' || s[i+1] == '%') {
			i++
			continue
		}
		return "", v.bad(value)
	}
	return s, nil
}

// Check parses the variables named (every variable of Vars when none is)
// as getenv gives them and returns the errors of those not accepted, in
// one error (nil when all are).
func Check(getenv func(string) string, names ...string) error {
	var errs []error
	for _, v := range Vars {
		if len(names) > 0 && !slices.Contains(names, v.Name) {
			continue
		}
		if _, err := v.parse(getenv(v.Name)); err != nil {
			errs = append(errs, err)
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		var e *ioerr.Error
		errors.As(err, &e)
		msgs[i] = e.Msg
	}
	return &ioerr.Error{Class: ioerr.ErrArg, Rank: -1, Err: ErrBadValue, Msg: strings.Join(msgs, "; ")}
}
