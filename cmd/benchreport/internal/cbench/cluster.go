package cbench

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/collio/collio/cmd/benchreport/internal/records"
)

// cluster runs every launch across the emulated cluster of docs/cluster.md
// (bin/vcluster): CLUSTER=NxP is N compute nodes of P ranks each, FS the
// file system the files go to. It brings the cluster up when none is, and
// down again at the end, and measures the bytes each launch put on the
// cluster's links.
type cluster struct {
	nodes, ppn int
	fs         string // gluster or shared
	vc         string // bin/vcluster
	brought    bool
}

// clusterDirs are the directories FS names, as mpirun's node (the login
// node, which shares the machine's mounts) sees them.
var clusterDirs = map[string]string{
	"gluster": "/mnt/vcluster/gluster",
	"shared":  "/mnt/vcluster/shared",
}

// clusterFromEnv reads CLUSTER and FS; nil when CLUSTER is not set.
func clusterFromEnv(root string, getenv func(string) string) (*cluster, error) {
	spec := getenv("CLUSTER")
	if spec == "" {
		if getenv("FS") != "" {
			return nil, bad("FS=%s needs CLUSTER (for example CLUSTER=2x2)", getenv("FS"))
		}
		return nil, nil
	}
	n, p, ok := strings.Cut(spec, "x")
	nodes, err1 := strconv.Atoi(n)
	ppn, err2 := strconv.Atoi(p)
	if !ok || err1 != nil || err2 != nil || nodes < 1 || ppn < 1 || nodes > 64 {
		return nil, bad("CLUSTER=%q: want NODESxRANKS_PER_NODE, such as 2x2 or 4x1 (at most 64 nodes)", spec)
	}
	fs := getenv("FS")
	if fs == "" {
		fs = "gluster"
	}
	if _, ok := clusterDirs[fs]; !ok {
		return nil, bad("FS=%q: want gluster (the GlusterFS volume) or shared (a directory every node shares)", fs)
	}
	if getenv("MPIRUN") != "" {
		return nil, bad("MPIRUN cannot be set with CLUSTER, which launches through bin/vcluster mpirun")
	}
	for _, k := range []string{"DIRS", "E3SM_DIRS"} {
		if v := strings.TrimSpace(getenv(k)); v != "" && v != clusterDirs[fs] {
			return nil, bad("%s=%q with CLUSTER: FS=%s puts the files in %s", k, v, fs, clusterDirs[fs])
		}
	}
	return &cluster{nodes: nodes, ppn: ppn, fs: fs, vc: filepath.Join(root, "bin", "vcluster")}, nil
}

// np is the launches' rank count.
func (c *cluster) np() string { return strconv.Itoa(c.nodes * c.ppn) }

// env is getenv with what CLUSTER decides: the launcher, the rank count
// (an NP or E3SM_NP that differs is an error of FromEnv's caller) and the
// directories.
func (c *cluster) env(getenv func(string) string) func(string) string {
	return func(k string) string {
		switch k {
		case "MPIRUN":
			return c.vc + " mpirun -ppn " + strconv.Itoa(c.ppn)
		case "NP", "E3SM_NP":
			return c.np()
		case "DIRS", "E3SM_DIRS":
			return clusterDirs[c.fs]
		}
		return getenv(k)
	}
}

// checkNP refuses an NP or E3SM_NP other than the cluster's ranks.
func (c *cluster) checkNP(getenv func(string) string) error {
	for _, k := range []string{"NP", "E3SM_NP"} {
		if v := strings.TrimSpace(getenv(k)); v != "" && v != c.np() {
			return bad("%s=%q with CLUSTER=%dx%d: the cluster runs %s ranks", k, v, c.nodes, c.ppn, c.np())
		}
	}
	return nil
}

// up brings the cluster up with c.nodes compute nodes unless one is up
// (vcluster refuses one of another shape, saying so).
func (c *cluster) up(stderr io.Writer) error {
	if exec.Command(c.vc, "status").Run() == nil {
		out, err := exec.Command(c.vc, "status").Output()
		if err != nil {
			return err
		}
		if have := strings.Count(string(out), "\tcompute\t"); have != c.nodes {
			return fmt.Errorf("CLUSTER=%dx%d: the cluster that is up has %d compute nodes (bin/vcluster down first)", c.nodes, c.ppn, have)
		}
		return nil
	}
	cmd := exec.Command(c.vc, "up", "-compute", strconv.Itoa(c.nodes))
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bringing the cluster up (%s up -compute %d): %v", c.vc, c.nodes, err)
	}
	c.brought = true
	return nil
}

// down takes the cluster down if up brought it up.
func (c *cluster) down(stderr io.Writer) {
	if c.brought {
		cmd := exec.Command(c.vc, "down")
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "cbench: %s down: %v\n", c.vc, err)
		}
	}
}

// wireProbe reads the links' counters (vcluster counters) around a
// launch: wire_bytes is what every compute and storage node sent, so each
// byte on the switch counts once (mpirun's own traffic, from the login
// node, does not count); storage_bytes is what the storage nodes sent and
// received, the file system's share of it.
type wireProbe struct {
	vc     string
	before map[string]linkCount
}

type linkCount struct{ sent, received int64 }

func (c *cluster) probe() Probe { return &wireProbe{vc: c.vc} }

func (w *wireProbe) Columns() []string { return []string{"wire_bytes", "storage_bytes"} }

func (w *wireProbe) Start() (err error) {
	w.before, err = w.read()
	return err
}

func (w *wireProbe) Stop() (records.Row, error) {
	after, err := w.read()
	if err != nil {
		return nil, err
	}
	wire, storage := wireBytes(w.before, after)
	return records.Row{"wire_bytes": strconv.FormatInt(wire, 10), "storage_bytes": strconv.FormatInt(storage, 10)}, nil
}

func (w *wireProbe) read() (map[string]linkCount, error) {
	out, err := exec.Command(w.vc, "counters").Output()
	if err != nil {
		return nil, fmt.Errorf("%s counters: %v", w.vc, err)
	}
	return parseCounters(string(out))
}

// wireBytes is the probe's two figures from the counters before and after.
func wireBytes(before, after map[string]linkCount) (wire, storage int64) {
	for node, a := range after {
		if node == "login" {
			continue
		}
		b := before[node]
		sent, received := a.sent-b.sent, a.received-b.received
		wire += sent
		if strings.HasPrefix(node, "stor") {
			storage += sent + received
		}
	}
	return wire, storage
}

// parseCounters reads vcluster counters' TSV: a header line "node
// sent_bytes received_bytes", then one line per node.
func parseCounters(text string) (map[string]linkCount, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	if !sc.Scan() || strings.Join(strings.Fields(sc.Text()), " ") != "node sent_bytes received_bytes" {
		return nil, fmt.Errorf("vcluster counters: the first line is not the header \"node sent_bytes received_bytes\"")
	}
	m := map[string]linkCount{}
	for line := 2; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("vcluster counters: line %d has %d fields, want 3", line, len(f))
		}
		s, err1 := strconv.ParseInt(f[1], 10, 64)
		r, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || s < 0 || r < 0 {
			return nil, fmt.Errorf("vcluster counters: line %d: %q is not two byte counts", line, sc.Text())
		}
		m[f[0]] = linkCount{s, r}
	}
	return m, sc.Err()
}
