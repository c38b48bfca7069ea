//go:build cgo

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
)

// COLLIO_CPU_PROFILE=path profiles the library's Go code in every process,
// from the moment the library loads to MPI_Finalize, and writes a pprof CPU
// profile to path ("%p": the process id, so that ranks do not share a file).
// Read it with `go tool pprof bin/libcollio.so path`.
const cpuProfileVar = "COLLIO_CPU_PROFILE"

// cpuProfile is the open profile file, nil when not profiling.
var cpuProfile *os.File

func init() { startCPUProfile(os.Getenv(cpuProfileVar)) }

// startCPUProfile starts profiling into tmpl's expansion; a bad value is
// reported on stderr and nothing is profiled.
func startCPUProfile(tmpl string) {
	tmpl = strings.TrimSpace(tmpl)
	if tmpl == "" {
		return
	}
	path, err := cpuProfilePath(tmpl, os.Getpid())
	if err == nil {
		cpuProfile, err = os.Create(path)
	}
	if err == nil {
		if err = pprof.StartCPUProfile(cpuProfile); err != nil {
			cpuProfile.Close()
			cpuProfile = nil
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "collio: %s: %v; not profiling\n", cpuProfileVar, err)
	}
}

// cpuProfilePath checks tmpl (a path with a '/', as COLLIO_STATS's, so that
// a switch word is not taken for a file) and expands %p and %%.
func cpuProfilePath(tmpl string, pid int) (string, error) {
	if !strings.Contains(tmpl, "/") {
		return "", fmt.Errorf("%q is not a path: give one with a '/' (./cpu.%%p.pprof in the current directory)", tmpl)
	}
	return statsPath(tmpl, pid), nil
}

// stopCPUProfile writes the profile out; MPI_Finalize calls it.
func stopCPUProfile() {
	if cpuProfile == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := cpuProfile.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "collio: %s: %v\n", cpuProfileVar, err)
	}
	cpuProfile = nil
}
