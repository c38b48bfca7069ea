package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machine describes where the benchmark ran (the machine benchreport runs
// on, which is the launch node; the ranks' host names come from the runs).
type machine struct {
	Hosts    []string `json:"hosts"`
	NProc    int      `json:"nproc"`
	CPUModel string   `json:"cpu_model"`
	MemTotal int64    `json:"mem_total_bytes"`
	Kernel   string   `json:"kernel"`
	MPI      string   `json:"mpi"`
	Date     string   `json:"date"`
}

func probeMachine(runs []collperfRun) machine {
	m := machine{NProc: runtime.NumCPU(), Date: time.Now().Format(time.RFC3339)}
	for _, r := range runs {
		if r.Host != "" {
			m.Hosts = addUnique(m.Hosts, r.Host)
		}
	}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb, err := strconv.ParseInt(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB"), 10, 64); err == nil {
		m.MemTotal = kb << 10
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.MPI = "unknown"
	if out, err := exec.Command("mpirun", "--version").Output(); err == nil {
		if line, _, _ := strings.Cut(string(out), "\n"); strings.TrimSpace(line) != "" {
			m.MPI = strings.TrimSpace(line)
		}
	}
	return m
}

// procField returns the value of the first "name : value" line of a /proc
// file ("" if absent).
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (m machine) String() string {
	hosts := strings.Join(m.Hosts, ", ")
	if hosts == "" {
		hosts = "?"
	}
	return fmt.Sprintf("host %s; nproc %d; CPU %s; MemTotal %.1f GiB; kernel %s; %s; %s",
		hosts, m.NProc, orUnknown(m.CPUModel), float64(m.MemTotal)/(1<<30), orUnknown(m.Kernel), m.MPI, m.Date)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
