package vcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Up builds the cluster p: the switch, each node's namespaces, link and
// tmpfs, the GlusterFS servers and volume, and the volume's mount on every
// compute node. A cluster already up with the same spec is reused; one
// with another spec is an error. A failure part way removes what was
// made.
func Up(p Plan, log io.Writer, verbose bool) error {
	if err := Preflight(); err != nil {
		return err
	}
	if old, err := Load(); err == nil {
		if old.Spec == p.Spec {
			fmt.Fprintf(log, "vcluster: already up (%s); reusing it\n", describe(old))
			return nil
		}
		return fmt.Errorf("vcluster: a cluster is already up (%s); run `vcluster down` first", describe(old))
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := ensureGluster(log); err != nil {
		return err
	}
	r := runner{log: log, verbose: verbose}
	if err := save(p); err != nil {
		return err
	}
	err := up(p, r, log)
	if err != nil {
		fmt.Fprintf(log, "vcluster: up failed; removing what it made\n")
		if derr := Down(log, verbose); derr != nil {
			fmt.Fprintln(log, derr)
		}
	}
	return err
}

func describe(p Plan) string {
	return fmt.Sprintf("%d compute nodes at %s, %d storage nodes at %s", p.Spec.Compute, p.Spec.Rate, p.Spec.Storage, p.Spec.StorageRate)
}

func up(p Plan, r runner, log io.Writer) error {
	start := time.Now()
	if err := r.steps(
		// Mount namespaces are kept as bind mounts of their nsfs files,
		// which the kernel allows only on a private mount.
		[]string{"mount", "--bind", nsDir, nsDir},
		[]string{"mount", "--make-private", nsDir},
		[]string{"mount", "-t", "tmpfs", "-o", "mode=1777", "vcluster-shared", SharedDir},
		[]string{"ip", "netns", "add", switchNS},
		[]string{"ip", "-n", switchNS, "link", "add", bridge, "type", "bridge"},
		[]string{"ip", "-n", switchNS, "link", "set", bridge, "up"},
	); err != nil {
		return err
	}
	if err := os.WriteFile(hostsFile, []byte(p.Hosts()), 0o644); err != nil {
		return fmt.Errorf("vcluster: %v", err)
	}
	for _, n := range p.Nodes {
		if err := nodeUp(n, r); err != nil {
			return err
		}
	}
	if err := glusterUp(p, r); err != nil {
		return err
	}
	server := fmt.Sprintf("%s:/%s", p.Of(Storage)[0].Addr, Volume)
	for _, n := range p.Of(Compute) {
		if _, err := r.in(n, fmt.Sprintf("mount -t glusterfs -o %s,log-file=%s/glusterfs-client.log %s %s",
			MountOptions, LocalDir, server, GlusterDir)); err != nil {
			return err
		}
	}
	// The login node mounts it in the machine's own mount namespace, so
	// that what runs outside the nodes (the caller of mpirun, a script
	// comparing files) sees the volume as from a login node. The compute
	// nodes' mount namespaces were copied before: they keep their own.
	if _, err := r.run(append(p.Head().Enter(""), "mount", "-t", "glusterfs", "-o",
		MountOptions+",log-file="+StateDir+"/glusterfs-login.log", server, GlusterDir)...); err != nil {
		return err
	}
	fmt.Fprintf(log, "vcluster: up in %.1fs: %s; GlusterFS volume %q on %s, shared tmpfs on %s, node-local tmpfs on %s\n",
		time.Since(start).Seconds(), describe(p), Volume, GlusterDir, SharedDir, LocalDir)
	return nil
}

// nodeUp makes node n: its network namespace and shaped link to the
// switch, then its UTS and mount namespaces with its hostname, its own
// tmpfs on LocalDir and /dev/shm, and the cluster's /etc/hosts.
func nodeUp(n Node, r runner) error {
	prefix := strconv.Itoa(Subnet.Bits())
	steps := [][]string{
		{"ip", "netns", "add", n.NetNS},
		{"ip", "-n", switchNS, "link", "add", n.Link, "type", "veth", "peer", "name", "eth0", "netns", n.NetNS},
		{"ip", "-n", switchNS, "link", "set", n.Link, "master", bridge, "up"},
		{"ip", "-n", n.NetNS, "link", "set", "lo", "up"},
		{"ip", "-n", n.NetNS, "addr", "add", n.Addr.String() + "/" + prefix, "dev", "eth0"},
		{"ip", "-n", n.NetNS, "link", "set", "eth0", "up"},
	}
	if n.Rate != "" {
		bits, err := ParseRate(n.Rate)
		if err != nil {
			return err
		}
		tbf := func(ns, dev string) []string {
			return []string{"tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", n.Rate,
				"burst", strconv.FormatInt(Burst(bits), 10), "latency", "50ms"}
		}
		steps = append(steps, tbf(n.NetNS, "eth0"), tbf(switchNS, n.Link)) // what it sends, what it receives
	}
	if err := r.steps(steps...); err != nil {
		return err
	}
	for _, f := range []string{n.MountNS(), n.UTSNS()} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			return fmt.Errorf("vcluster: %v", err)
		}
	}
	if n.Role == Login {
		_, err := r.run("unshare", "--uts="+n.UTSNS(), "hostname", n.Name)
		return err
	}
	script := fmt.Sprintf(`hostname %s
mount -t tmpfs -o mode=0755 %s-local %s
mount -t tmpfs -o mode=1777 %s-shm /dev/shm
mount --bind %s /etc/hosts
mkdir -p %s
`, n.Name, n.Name, LocalDir, n.Name, hostsFile, NodeTmp)
	if n.Role == Storage {
		// glusterd keeps its identity and state in /var/lib/glusterd and
		// its socket in /run: each storage node has its own.
		script += fmt.Sprintf(`mkdir -p %[1]s/glusterd %[1]s/log %[1]s/bricks
cp -a /var/lib/glusterd/. %[1]s/glusterd/
mount --bind %[1]s/glusterd /var/lib/glusterd
mount --bind %[1]s/log /var/log/glusterfs
mount -t tmpfs -o mode=0755 %[2]s-run /run
`, LocalDir, n.Name)
	}
	_, err := r.run("unshare", "--uts="+n.UTSNS(), "--mount="+n.MountNS(), "--propagation", "private", "/bin/sh", "-ec", script)
	return err
}

// glusterUp starts glusterd on every storage node, joins them, and
// creates and starts the volume.
func glusterUp(p Plan, r runner) error {
	stor := p.Of(Storage)
	for _, n := range stor {
		if _, err := r.in(n, "glusterd --log-file=/var/log/glusterfs/glusterd.log"); err != nil {
			return err
		}
	}
	first := stor[0]
	gluster := func(args ...string) error {
		cmd := append(first.Enter(""), append([]string{"gluster", "--mode=script"}, args...)...)
		var err error
		// glusterd answers a few hundred milliseconds after it forks.
		for try := 0; try < 50; try++ {
			if _, err = r.run(cmd...); err == nil {
				return nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		return err
	}
	for _, n := range stor[1:] {
		if err := gluster("peer", "probe", n.Addr.String()); err != nil {
			return err
		}
	}
	args := append([]string{"volume", "create", Volume}, p.Bricks()...)
	if err := gluster(append(args, "force")...); err != nil { // bricks on tmpfs, not a dedicated file system
		return err
	}
	for _, o := range VolumeOptions {
		if err := gluster("volume", "set", Volume, o[0], o[1]); err != nil {
			return err
		}
	}
	return gluster("volume", "start", Volume)
}

// Preflight checks what the cluster needs from the machine and names
// what is missing.
func Preflight() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (network and mount namespaces, tc and FUSE mounts need it)")
	}
	for _, c := range []string{"ip", "tc", "nsenter", "unshare", "mount"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c+" (Debian: iproute2, util-linux, mount)")
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		missing = append(missing, "FUSE (/dev/fuse: "+err.Error()+")")
	}
	if len(missing) == 0 {
		if out, err := exec.Command("unshare", "--net", "--mount", "--uts", "true").CombinedOutput(); err != nil {
			missing = append(missing, fmt.Sprintf("network, mount and UTS namespaces (unshare: %v: %s)", err, strings.TrimSpace(string(out))))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("vcluster: cannot build the emulated cluster here; missing: %s", strings.Join(missing, "; "))
	}
	return nil
}

// ensureGluster installs GlusterFS's server and FUSE client from Debian's
// packages when they are missing.
func ensureGluster(log io.Writer) error {
	_, errd := exec.LookPath("glusterd")
	_, errm := exec.LookPath("mount.glusterfs")
	if errd == nil && errm == nil {
		return nil
	}
	fmt.Fprintln(log, "vcluster: installing glusterfs-server glusterfs-client")
	r := runner{log: log}
	if _, err := r.run("apt-get", "update", "-qq"); err != nil {
		return err
	}
	cmd := exec.Command("apt-get", "install", "-y", "-qq", "glusterfs-server", "glusterfs-client")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("vcluster: installing GlusterFS: %v: %s", err, out)
	}
	return nil
}

func save(p Plan) error {
	for _, d := range []string{nsDir, LoginTmp, LocalDir, SharedDir, GlusterDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("vcluster: %v", err)
		}
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(stateFile, b, 0o644)
}

// Load returns the plan of the cluster that is up (os.ErrNotExist when
// none is).
func Load() (Plan, error) {
	b, err := os.ReadFile(stateFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Plan{}, fmt.Errorf("vcluster: no cluster is up (no %s; run `vcluster up`): %w", stateFile, os.ErrNotExist)
		}
		return Plan{}, fmt.Errorf("vcluster: %v", err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return Plan{}, fmt.Errorf("vcluster: %s: %v", stateFile, err)
	}
	return p, nil
}
