// Command vcluster runs an emulated cluster on one Linux machine, for
// running MPI programs and collio across nodes (docs/cluster.md):
//
//	vcluster up [-compute N] [-storage M] [-bricks B] [-rate R] [-storage-rate R] [-v]
//	vcluster status
//	vcluster check
//	vcluster mpirun [-ppn K] [-wire] [mpirun options] PROGRAM [ARGS]
//	vcluster exec NODE PROGRAM [ARGS]
//	vcluster counters
//	vcluster down [-v]
//
// up makes N compute nodes and M storage nodes, each a network namespace
// with its own hostname, a link shaped in both directions with tc tbf, and
// a private tmpfs; the storage nodes serve a GlusterFS volume that every
// compute node mounts with FUSE. mpirun runs mpirun on the first compute
// node with a hostfile of the compute nodes (K slots each) and this
// command as its rsh agent; -wire prints the bytes each node's link
// carried during the run, and a rankfile (-rf FILE) places the ranks
// through the sequential mapper. check says whether this machine can run the
// cluster, and names what is missing. exec runs a program on one node. counters
// prints every link's byte counters. down removes it all. It needs root.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/collio/collio/internal/vcluster"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: vcluster up [-compute N] [-storage M] [-bricks B] [-rate R] [-storage-rate R] [-v]
       vcluster status
       vcluster check
       vcluster mpirun [-ppn K] [-wire] [mpirun options] PROGRAM [ARGS]
       vcluster exec NODE PROGRAM [ARGS]
       vcluster counters
       vcluster down [-v]

An emulated cluster on this machine (docs/cluster.md). Inside every node:
  ` + vcluster.GlusterDir + `  the GlusterFS volume (compute nodes)
  ` + vcluster.SharedDir + `   a directory every node shares, over no link
  ` + vcluster.LocalDir + `    the node's own tmpfs (TMPDIR is its tmp/)
mpirun's -rf FILE (a rankfile, as collio place writes) places the ranks with
Open MPI's sequential mapper: an emulated node lacks the slots it binds to.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	var err error
	switch args[0] {
	case "up":
		err = upCmd(args[1:], stdout, stderr)
	case "down":
		fs := flag.NewFlagSet("down", flag.ContinueOnError)
		verbose := fs.Bool("v", false, "print every command")
		if err = fs.Parse(args[1:]); err == nil {
			err = vcluster.Down(stderr, *verbose)
		}
	case "status":
		err = statusCmd(stdout)
	case "check":
		if err = vcluster.Preflight(); err == nil {
			fmt.Fprintln(stdout, "vcluster: this machine can run the emulated cluster")
		}
	case "mpirun":
		return mpirunCmd(args[1:], stderr)
	case "exec":
		return execCmd(args[1:], stderr)
	case "rsh":
		return rshCmd(args[1:], stderr)
	case "counters":
		var p vcluster.Plan
		if p, err = vcluster.Load(); err == nil {
			var c []vcluster.LinkBytes
			if c, err = vcluster.Counters(p); err == nil {
				fmt.Fprint(stdout, vcluster.FormatCounters(c))
			}
		}
	default:
		fmt.Fprintf(stderr, "vcluster: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func upCmd(args []string, stdout, stderr io.Writer) error {
	s := vcluster.DefaultSpec
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&s.Compute, "compute", s.Compute, "compute nodes")
	fs.IntVar(&s.Storage, "storage", s.Storage, "storage nodes (GlusterFS servers)")
	fs.IntVar(&s.Bricks, "bricks", s.Bricks, "bricks per storage node")
	fs.StringVar(&s.Rate, "rate", s.Rate, "each compute node's link rate, per direction (tc units: 400mbit, 2gbit)")
	fs.StringVar(&s.StorageRate, "storage-rate", s.StorageRate, "each storage node's link rate, per direction")
	verbose := fs.Bool("v", false, "print every command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("vcluster up: unexpected argument %q", fs.Arg(0))
	}
	p, err := vcluster.NewPlan(s)
	if err != nil {
		return err
	}
	return vcluster.Up(p, stderr, *verbose)
}

func statusCmd(stdout io.Writer) error {
	p, err := vcluster.Load()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "node\trole\taddress\tlink\n")
	for _, n := range p.Nodes {
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Addr, n.Rate)
	}
	return nil
}

// mpirunCmd runs mpirun on the head node. Its own flags come first; the
// rest goes to mpirun.
func mpirunCmd(args []string, stderr io.Writer) int {
	ppn, wire := 2, false
	for len(args) > 0 {
		switch {
		case args[0] == "-wire":
			wire, args = true, args[1:]
		case args[0] == "-ppn" && len(args) > 1:
			v, err := strconv.Atoi(args[1])
			if err != nil || v < 1 {
				fmt.Fprintf(stderr, "vcluster mpirun: -ppn %q: want a positive number\n", args[1])
				return 2
			}
			ppn, args = v, args[2:]
		default:
			goto done
		}
	}
done:
	p, err := vcluster.Load()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "vcluster:", err)
		return 1
	}
	hosts := p.Hostfile(ppn)
	args, seq, err := takeRankfile(p, args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if seq != "" {
		hosts = seq
	}
	hostfile, err := writeHostfile(hosts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer os.Remove(hostfile)
	wd, _ := os.Getwd()
	// The login node has the machine's mounts: its mpirun keeps its session
	// files in the cluster's state, which down removes.
	cmd := append(p.Head().Enter(wd), "env", "TMPDIR="+vcluster.LoginTmp, "mpirun")
	cmd = append(cmd, p.MPIArgs(hostfile, self+" rsh")...)
	if seq != "" {
		cmd = append(cmd, "--mca", "rmaps", "seq")
	}
	if os.Geteuid() == 0 {
		cmd = append(cmd, "--allow-run-as-root") // the cluster needs root anyway
	}
	cmd = append(cmd, args...)
	var before []vcluster.LinkBytes
	if wire {
		if before, err = vcluster.Counters(p); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	rc := runChild(cmd, stderr)
	if wire {
		after, err := vcluster.Counters(p)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprint(stderr, "vcluster: bytes on the links during the run\n"+vcluster.FormatCounters(vcluster.Delta(before, after)))
	}
	return rc
}

// takeRankfile removes a rankfile option (-rf FILE, --rankfile FILE) from
// mpirun's arguments and returns the sequential mapper's hostfile that
// places the ranks as the rankfile does ("" when there is none): the
// emulated nodes lack the slots a rankfile binds to.
func takeRankfile(p vcluster.Plan, args []string) (rest []string, seq string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a != "-rf" && a != "--rankfile" && a != "-rankfile" {
			rest = append(rest, a)
			continue
		}
		if i+1 >= len(args) {
			return nil, "", fmt.Errorf("vcluster mpirun: %s needs a file", a)
		}
		b, err := os.ReadFile(args[i+1])
		if err != nil {
			return nil, "", fmt.Errorf("vcluster mpirun: %s: %v", a, err)
		}
		if seq, err = p.SeqHostfile(string(b)); err != nil {
			return nil, "", fmt.Errorf("%v (%s)", err, args[i+1])
		}
		i++
	}
	return rest, seq, nil
}

func writeHostfile(hosts string) (string, error) {
	f, err := os.CreateTemp(vcluster.StateDir, "hostfile-")
	if err != nil {
		return "", fmt.Errorf("vcluster: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(hosts); err != nil {
		return "", fmt.Errorf("vcluster: %v", err)
	}
	return f.Name(), nil
}

// runChild runs a command with this process's standard streams, passing
// SIGINT and SIGTERM on, and returns its exit status.
func runChild(args []string, stderr io.Writer) int {
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := c.Start(); err != nil {
		fmt.Fprintln(stderr, "vcluster:", err)
		return 1
	}
	go func() {
		for s := range sigs {
			c.Process.Signal(s)
		}
	}()
	err := c.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintln(stderr, "vcluster:", err)
	return 1
}

func execCmd(args []string, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	n, err := loadNode(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "vcluster exec:", err)
		return 2
	}
	wd, _ := os.Getwd()
	cmd := append(n.Enter(wd), "env", "TMPDIR="+vcluster.NodeTmp)
	return runChild(append(cmd, args[1:]...), stderr)
}

// loadNode returns the node named name of the cluster that is up.
func loadNode(name string) (vcluster.Node, error) {
	p, err := vcluster.Load()
	if err != nil {
		return vcluster.Node{}, err
	}
	n, ok := p.Node(name)
	if !ok {
		return vcluster.Node{}, fmt.Errorf("no node %q (vcluster status lists them)", name)
	}
	return n, nil
}

// rshCmd is the rsh agent mpirun calls as `agent [ssh options] HOST
// COMMAND...`: it runs COMMAND through a shell inside HOST's namespaces.
func rshCmd(args []string, stderr io.Writer) int {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-o", "-l", "-p":
			args = args[min(2, len(args)):]
		default:
			args = args[1:]
		}
	}
	if len(args) < 2 {
		fmt.Fprintln(stderr, "vcluster rsh: want HOST COMMAND")
		return 2
	}
	n, err := loadNode(args[0])
	if err == nil && n.Role != vcluster.Compute {
		err = fmt.Errorf("%q is not a compute node of the cluster", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "vcluster rsh:", err)
		return 1
	}
	cmd := append(n.Enter("/"), "env", "TMPDIR="+vcluster.NodeTmp, "/bin/sh", "-c", strings.Join(args[1:], " "))
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		fmt.Fprintln(stderr, "vcluster rsh:", err)
		return 1
	}
	err = syscall.Exec(path, cmd, os.Environ())
	fmt.Fprintln(stderr, "vcluster rsh:", err)
	return 1
}
