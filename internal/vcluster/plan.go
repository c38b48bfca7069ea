// Package vcluster plans and builds an emulated cluster on one Linux
// machine: compute and storage nodes as network namespaces on one bridge,
// each with its own hostname, a link shaped in both directions, a private
// node-local tmpfs, and a GlusterFS volume served by the storage nodes and
// mounted with FUSE on every compute node (docs/cluster.md).
//
// The plan (this file) is pure: names, addresses and paths. up.go and
// down.go turn it into namespaces, links and daemons.
package vcluster

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// Fixed paths. Inside every node, LocalDir is the node's own tmpfs and
// SharedDir the one tmpfs all nodes share; GlusterDir is the volume's
// mount on the compute nodes.
const (
	StateDir   = "/run/vcluster"
	nsDir      = StateDir + "/ns"
	stateFile  = StateDir + "/state.json"
	hostsFile  = StateDir + "/hosts"
	MountRoot  = "/mnt/vcluster"
	LocalDir   = MountRoot + "/local"
	SharedDir  = MountRoot + "/shared"
	GlusterDir = MountRoot + "/gluster"
	LoginTmp   = StateDir + "/tmp" // TMPDIR of mpirun on the login node
	NodeTmp    = LocalDir + "/tmp" // TMPDIR on every other node

	switchNS = "vc-switch"
	bridge   = "vcbr0"
	Volume   = "collio"
)

// Subnet holds every address the cluster uses: link-local, never routed.
var Subnet = netip.MustParsePrefix("169.254.100.0/24")

// Role says what a node runs.
type Role string

const (
	Compute Role = "compute"
	Storage Role = "storage"
	// Login is where mpirun runs: a network namespace with the host's
	// mounts, so that its rsh agent can enter every compute node.
	Login Role = "login"
)

// Spec is what the user asks for.
type Spec struct {
	Compute     int    // compute nodes (ranks run here)
	Storage     int    // storage nodes (GlusterFS servers)
	Bricks      int    // bricks per storage node
	Rate        string // each compute node's link, per direction (tc rate: 400mbit)
	StorageRate string // each storage node's link, per direction
}

// DefaultSpec is 2 compute nodes and 1 storage node with 2 bricks. The
// rates are low enough that the links, not the machine's 2 cores, bound a
// benchmark: one GlusterFS FUSE client writes about 110 MB/s here
// unshaped.
var DefaultSpec = Spec{Compute: 2, Storage: 1, Bricks: 2, Rate: "400mbit", StorageRate: "800mbit"}

// Node is one emulated machine.
type Node struct {
	Name  string     // hostname, and the name in hostfiles
	Role  Role       //
	Addr  netip.Addr // its one address, in Subnet
	NetNS string     // network namespace (ip netns)
	Link  string     // the switch's end of its veth; the node's end is eth0
	Rate  string     // tc rate of its link, per direction ("": not shaped)
}

// MountNS and UTSNS are the files that hold the node's mount and UTS
// namespaces.
func (n Node) MountNS() string { return nsDir + "/" + n.Name + ".mnt" }
func (n Node) UTSNS() string   { return nsDir + "/" + n.Name + ".uts" }

// NetNSPath is the file ip netns keeps the network namespace in.
func (n Node) NetNSPath() string { return "/run/netns/" + n.NetNS }

// Enter is the command prefix that runs a program inside the node.
func (n Node) Enter(wd string) []string {
	args := []string{"nsenter", "--net=" + n.NetNSPath(), "--uts=" + n.UTSNS()}
	if n.Role != Login {
		args = append(args, "--mount="+n.MountNS())
	}
	if wd != "" {
		args = append(args, "--wd="+wd)
	}
	return args
}

// Plan is a Spec laid out.
type Plan struct {
	Spec  Spec
	Nodes []Node
}

var rateRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)$`)

// NewPlan checks s and lays it out.
func NewPlan(s Spec) (Plan, error) {
	switch {
	case s.Compute < 1 || s.Compute > 16:
		return Plan{}, fmt.Errorf("vcluster: %d compute nodes: want 1 to 16", s.Compute)
	case s.Storage < 1 || s.Storage > 4:
		return Plan{}, fmt.Errorf("vcluster: %d storage nodes: want 1 to 4", s.Storage)
	case s.Bricks < 1 || s.Bricks > 8:
		return Plan{}, fmt.Errorf("vcluster: %d bricks per storage node: want 1 to 8", s.Bricks)
	}
	for _, r := range []string{s.Rate, s.StorageRate} {
		if !rateRE.MatchString(strings.ToLower(r)) {
			return Plan{}, fmt.Errorf("vcluster: link rate %q: want a tc rate such as 400mbit or 2gbit", r)
		}
	}
	p := Plan{Spec: s}
	base := Subnet.Addr().As4()
	login := base
	login[3] = 5
	p.Nodes = append(p.Nodes, node("login", Login, netip.AddrFrom4(login), ""))
	for i := range s.Compute {
		a := base
		a[3] = byte(10 + i)
		p.Nodes = append(p.Nodes, node(fmt.Sprintf("node%d", i), Compute, netip.AddrFrom4(a), s.Rate))
	}
	for i := range s.Storage {
		a := base
		a[3] = byte(200 + i)
		p.Nodes = append(p.Nodes, node(fmt.Sprintf("stor%d", i), Storage, netip.AddrFrom4(a), s.StorageRate))
	}
	return p, nil
}

func node(name string, r Role, a netip.Addr, rate string) Node {
	return Node{Name: name, Role: r, Addr: a, NetNS: "vc-" + name, Link: "vc-" + name, Rate: rate}
}

// Of returns the nodes with role r.
func (p Plan) Of(r Role) []Node {
	var out []Node
	for _, n := range p.Nodes {
		if n.Role == r {
			out = append(out, n)
		}
	}
	return out
}

// Node returns the node named name.
func (p Plan) Node(name string) (Node, bool) {
	for _, n := range p.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// Head is the login node mpirun runs on.
func (p Plan) Head() Node { return p.Of(Login)[0] }

// Hosts is the /etc/hosts every node sees.
func (p Plan) Hosts() string {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n")
	for _, n := range p.Nodes {
		fmt.Fprintf(&b, "%s\t%s\n", n.Addr, n.Name)
	}
	return b.String()
}

// Hostfile is an Open MPI hostfile of the compute nodes with slots each.
func (p Plan) Hostfile(slots int) string {
	var b strings.Builder
	for _, n := range p.Of(Compute) {
		fmt.Fprintf(&b, "%s slots=%d\n", n.Name, slots)
	}
	return b.String()
}

// Bricks lists the volume's bricks (host:path), storage node by storage
// node, each in the node's private LocalDir.
func (p Plan) Bricks() []string {
	var out []string
	for _, n := range p.Of(Storage) {
		for b := range p.Spec.Bricks {
			out = append(out, fmt.Sprintf("%s:%s/bricks/b%d", n.Addr, LocalDir, b))
		}
	}
	return out
}

// VolumeOptions turn off GlusterFS's client-side metadata and data caches
// that let one node miss another's new file or size: OMPIO's lockedfile
// shared pointer failed and hung with them on.
var VolumeOptions = [][2]string{
	{"performance.stat-prefetch", "off"},
	{"performance.readdir-ahead", "off"},
	{"performance.quick-read", "off"},
	{"performance.io-cache", "off"},
}

// MountOptions make the FUSE client ask the servers for every lookup and
// attribute instead of trusting its kernel caches, and drop a file's
// cached pages when its modification time changed: without
// auto-invalidation, a node read its old cached bytes of a file that
// another node had rewritten and closed, even from a new open.
const MountOptions = "entry-timeout=0,negative-timeout=0,attribute-timeout=0,auto-invalidation=true"

// MPIArgs are the mpirun options that start ranks on the compute nodes
// through agent (an rsh stand-in) and keep Open MPI's TCP traffic on the
// cluster's links. Every node's slots share the machine's few cores,
// which Open MPI cannot see: idle ranks yield (ranks spinning in a
// barrier starved the GlusterFS daemons), and no rank is bound to a core
// (each node would bind its first rank to the same core as every other
// node's).
func (p Plan) MPIArgs(hostfile, agent string) []string {
	sub := Subnet.String()
	return []string{
		"--hostfile", hostfile,
		"--mca", "plm_rsh_agent", agent,
		"--mca", "plm_rsh_no_tree_spawn", "1",
		"--mca", "btl_tcp_if_include", sub,
		"--mca", "oob_tcp_if_include", sub,
		"--mca", "mpi_yield_when_idle", "1",
		"--mca", "hwloc_base_binding_policy", "none",
	}
}

// Burst is the tbf bucket for a rate in bits/s: 10 ms of traffic, at
// least 64 KiB so that a large segment passes at low rates.
func Burst(bitsPerSec int64) int64 {
	b := bitsPerSec / 8 / 100
	return max(b, 64<<10)
}

// ParseRate turns a tc rate into bits per second.
func ParseRate(r string) (int64, error) {
	r = strings.ToLower(r)
	if !rateRE.MatchString(r) {
		return 0, fmt.Errorf("vcluster: link rate %q: want a tc rate such as 400mbit", r)
	}
	units := []struct {
		suffix string
		mult   float64
	}{{"tbps", 8e12}, {"gbps", 8e9}, {"mbps", 8e6}, {"kbps", 8e3}, {"bps", 8}, {"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(r, u.suffix); ok {
			var v float64
			if _, err := fmt.Sscanf(num, "%g", &v); err != nil {
				return 0, fmt.Errorf("vcluster: link rate %q: %v", r, err)
			}
			return int64(v * u.mult), nil
		}
	}
	return 0, fmt.Errorf("vcluster: link rate %q: unknown unit", r)
}
