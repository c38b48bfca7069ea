package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/ioerr"
)

// params are the emulated file system's properties for one file. They
// are fixed when the file is created and stored in its parameter sidecar.
type params struct {
	stripeSize  int64
	stripeCount int
	startTarget int
	bandwidth   int64 // bytes per second per target; 0 = unlimited
	latency     time.Duration
	lockLatency time.Duration
}

func (p params) layout() driver.Layout {
	return driver.Layout{StripeSize: p.stripeSize, StripeCount: p.stripeCount, StartTarget: p.startTarget}
}

// paramsFromOptions reads the collio_sim_* hints from opts.Params (table
// defaults for absent or empty ones) and lets a requested layout
// (striping_unit, striping_factor, start_iodevice) override stripe size,
// count and start target. Values are validated as hints; a bad one is an
// ioerr.ErrBadHint error.
func paramsFromOptions(path string, opts driver.OpenOptions) (params, error) {
	var p params
	var problems []string
	num := func(key string) int64 {
		spec, ok := hints.Lookup(key)
		if !ok {
			panic("sim: hint " + key + " is not in the hints table")
		}
		v := strings.TrimSpace(opts.Params[key])
		if v == "" {
			v = spec.Default
		}
		norm, err := hints.Normalize(spec, v)
		if err != nil {
			problems = append(problems, err.Error())
			return 0
		}
		n, _ := strconv.ParseInt(norm, 10, 64)
		return n
	}
	p.stripeSize = num(hints.CollioSimStripeSize)
	p.stripeCount = int(num(hints.CollioSimStripeCount))
	p.bandwidth = num(hints.CollioSimBandwidth)
	p.latency = time.Duration(num(hints.CollioSimLatency)) * time.Microsecond
	p.lockLatency = time.Duration(num(hints.CollioSimLockLatency)) * time.Microsecond

	l := opts.Layout
	if l.StripeSize < 0 || l.StripeCount < 0 || l.StripeCount > maxTargets {
		problems = append(problems, fmt.Sprintf("requested layout %d x %d: stripe size must be >= 0 and stripe count in [0, %d]",
			l.StripeSize, l.StripeCount, maxTargets))
	}
	if l.StripeSize > 0 {
		p.stripeSize = l.StripeSize
	}
	if l.StripeCount > 0 {
		p.stripeCount = l.StripeCount
	}
	if l.StartTarget > 0 {
		if l.StartTarget >= p.stripeCount {
			problems = append(problems, fmt.Sprintf("start target %d is not below the stripe count %d", l.StartTarget, p.stripeCount))
		}
		p.startTarget = l.StartTarget
	}
	if len(problems) > 0 {
		return params{}, &ioerr.Error{Class: ioerr.ErrBadHint, Op: "open", Path: path, Rank: -1,
			Msg: "sim driver: " + strings.Join(problems, "; ")}
	}
	return p, nil
}

// maxTargets bounds the stripe count (Lustre's limit).
const maxTargets = 2000

// The parameter sidecar is a small text file of key=value lines after a
// header line, so that people can read it.
const sidecarHeader = "collio-sim 1"

func (p params) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintln(&b, sidecarHeader)
	fmt.Fprintf(&b, "stripe_size=%d\n", p.stripeSize)
	fmt.Fprintf(&b, "stripe_count=%d\n", p.stripeCount)
	fmt.Fprintf(&b, "start_target=%d\n", p.startTarget)
	fmt.Fprintf(&b, "bandwidth=%d\n", p.bandwidth)
	fmt.Fprintf(&b, "latency_ns=%d\n", p.latency.Nanoseconds())
	fmt.Fprintf(&b, "lock_latency_ns=%d\n", p.lockLatency.Nanoseconds())
	return b.Bytes()
}

// decodeParams parses a sidecar; every field must be present and sane.
func decodeParams(name string, data []byte) (params, error) {
	bad := func(format string, args ...any) (params, error) {
		return params{}, &os.PathError{Op: "open", Path: name,
			Err: fmt.Errorf("corrupt sim parameter file: "+format, args...)}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != sidecarHeader {
		return bad("missing header %q", sidecarHeader)
	}
	vals := map[string]int64{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			return bad("line %q", sc.Text())
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return bad("%s=%q", k, v)
		}
		vals[k] = n
	}
	if err := sc.Err(); err != nil {
		return bad("%v", err)
	}
	for _, k := range []string{"stripe_size", "stripe_count", "start_target", "bandwidth", "latency_ns", "lock_latency_ns"} {
		if _, ok := vals[k]; !ok {
			return bad("%s missing", k)
		}
	}
	p := params{
		stripeSize:  vals["stripe_size"],
		stripeCount: int(vals["stripe_count"]),
		startTarget: int(vals["start_target"]),
		bandwidth:   vals["bandwidth"],
		latency:     time.Duration(vals["latency_ns"]),
		lockLatency: time.Duration(vals["lock_latency_ns"]),
	}
	if p.stripeSize < 1 || p.stripeCount < 1 || p.stripeCount > maxTargets || p.startTarget >= p.stripeCount {
		return bad("layout %d x %d from target %d", p.stripeSize, p.stripeCount, p.startTarget)
	}
	return p, nil
}
