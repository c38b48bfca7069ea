//go:build cgo

package mpirunner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/collio/collio/internal/comm"
)

// errAgreeTimeout means some rank did not reach the agreement in time,
// usually because it is stuck in a collective that this rank left early.
var errAgreeTimeout = errors.New("mpirunner: ranks did not agree in time")

// defaultAgreeTimeout bounds every agreement unless MPITEST_AGREE_TIMEOUT
// says otherwise.
const defaultAgreeTimeout = 60 * time.Second

// agreeTimeout reads MPITEST_AGREE_TIMEOUT, warning about a bad value.
func agreeTimeout() time.Duration {
	d, err := parseAgreeTimeout(os.Getenv("MPITEST_AGREE_TIMEOUT"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpirunner: %v; using %v\n", err, d)
	}
	return d
}

// parseAgreeTimeout accepts a Go duration ("5s") or a number of seconds
// ("5"); empty means the default, which is also returned with an error.
func parseAgreeTimeout(v string) (time.Duration, error) {
	if v == "" {
		return defaultAgreeTimeout, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, nil
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second)), nil
	}
	return defaultAgreeTimeout, fmt.Errorf("bad MPITEST_AGREE_TIMEOUT %q (want a duration such as 30s)", v)
}

// gatherWithin is an Allgather that gives up after timeout: a nonblocking
// Iallgather polled with Test, so a rank whose peers never arrive gets
// errAgreeTimeout instead of blocking forever. On timeout the request
// stays pending (the binding keeps its buffers alive).
func gatherWithin(c comm.Comm, send []byte, timeout time.Duration) ([]byte, error) {
	recv := make([]byte, len(send)*c.Size())
	req, err := c.Iallgather(send, recv)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	pause := 50 * time.Microsecond
	for {
		done, err := req.Test()
		if done {
			return recv, err
		}
		if time.Now().After(deadline) {
			return nil, errAgreeTimeout
		}
		time.Sleep(pause)
		// Back off so that waiting ranks leave the cores to the ranks
		// still working (jobs are often oversubscribed).
		pause = min(2*pause, 10*time.Millisecond)
	}
}
