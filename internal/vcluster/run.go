package vcluster

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// runner runs the commands that build and remove the cluster, printing
// each one when verbose.
type runner struct {
	log     io.Writer
	verbose bool
}

// run runs a command and returns its output, or an error naming the
// command and quoting what it printed.
func (r runner) run(args ...string) (string, error) {
	if r.verbose {
		fmt.Fprintf(r.log, "+ %s\n", strings.Join(args, " "))
	}
	var out bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("vcluster: %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// in runs a shell script inside node n.
func (r runner) in(n Node, script string) (string, error) {
	return r.run(append(n.Enter(""), "/bin/sh", "-ec", script)...)
}

// steps runs commands until one fails.
func (r runner) steps(cmds ...[]string) error {
	for _, c := range cmds {
		if _, err := r.run(c...); err != nil {
			return err
		}
	}
	return nil
}
