package vcluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Down removes everything Up made: it unmounts the volume, stops every
// process left in the nodes, deletes the namespaces, links and tmpfs
// mounts, and the state. It is safe to run twice, and after an Up that
// failed part way.
func Down(log io.Writer, verbose bool) error {
	p, err := Load()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	r := runner{log: log, verbose: verbose}
	live := netnsList()
	var errs []error
	for _, n := range p.Of(Compute) {
		if live[n.NetNS] && mountedIn(n, GlusterDir) {
			if _, err := r.in(n, "umount -l "+GlusterDir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if mounted(GlusterDir) { // the login node's
		if _, err := r.run("umount", "-l", GlusterDir); err != nil {
			errs = append(errs, err)
		}
	}
	spaces := []string{switchNS}
	for _, n := range p.Nodes {
		spaces = append(spaces, n.NetNS)
	}
	for _, ns := range spaces {
		if live[ns] {
			stopAll(r, ns)
		}
	}
	for _, n := range p.Nodes {
		for _, f := range []string{n.MountNS(), n.UTSNS()} {
			if mounted(f) {
				if _, err := r.run("umount", f); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for _, ns := range slices.Backward(spaces) {
		if live[ns] {
			if _, err := r.run("ip", "netns", "del", ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, m := range []string{SharedDir, nsDir} {
		for mounted(m) {
			if _, err := r.run("umount", m); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("vcluster: down left things behind (run it again): %w", err)
	}
	if err := os.RemoveAll(StateDir); err != nil {
		return fmt.Errorf("vcluster: %v", err)
	}
	for _, d := range []string{LocalDir, SharedDir, GlusterDir, MountRoot} {
		os.Remove(d) // only when empty: a leftover is not ours to delete
	}
	if len(p.Nodes) > 0 {
		fmt.Fprintf(log, "vcluster: down (%s)\n", describe(p))
	}
	return nil
}

// stopAll ends every process in network namespace ns: SIGTERM, then
// SIGKILL after 5 s.
func stopAll(r runner, ns string) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			pids := netnsPids(r, ns)
			if len(pids) == 0 {
				return
			}
			if time.Now().After(deadline) {
				break
			}
			for _, pid := range pids {
				syscall.Kill(pid, sig)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func netnsPids(r runner, ns string) []int {
	out, err := r.run("ip", "netns", "pids", ns)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// netnsList is the set of network namespaces ip netns knows.
func netnsList() map[string]bool {
	out := map[string]bool{}
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// mounted reports whether path is a mount point in this mount namespace.
func mounted(path string) bool {
	return slices.Contains(mountPoints("/proc/self/mountinfo"), path)
}

// mountedIn reports whether path is a mount point inside node n.
func mountedIn(n Node, path string) bool {
	out, err := runner{}.run(append(n.Enter(""), "cat", "/proc/self/mountinfo")...)
	if err != nil {
		return false
	}
	return slices.Contains(parseMountPoints(out), path)
}

func mountPoints(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return parseMountPoints(string(b))
}

// parseMountPoints returns the mount points (field 5) of a mountinfo file.
func parseMountPoints(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 4 {
			out = append(out, unescapeMount(f[4]))
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
