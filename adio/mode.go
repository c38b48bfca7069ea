package adio

import (
	"fmt"
	"strings"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/internal/ioerr"
)

// Mode is an MPI access mode: a bit set with the values Open MPI uses, so
// the C interposer can pass amode through unchanged.
type Mode int

const (
	ModeCreate        Mode = 1
	ModeRdOnly        Mode = 2
	ModeWrOnly        Mode = 4
	ModeRdWr          Mode = 8
	ModeDeleteOnClose Mode = 16
	ModeUniqueOpen    Mode = 32
	ModeExcl          Mode = 64
	ModeAppend        Mode = 128
	ModeSequential    Mode = 256
)

var modeNames = []struct {
	m    Mode
	name string
}{
	{ModeRdOnly, "rdonly"}, {ModeWrOnly, "wronly"}, {ModeRdWr, "rdwr"}, {ModeCreate, "create"},
	{ModeExcl, "excl"}, {ModeDeleteOnClose, "delete_on_close"}, {ModeUniqueOpen, "unique_open"},
	{ModeAppend, "append"}, {ModeSequential, "sequential"},
}

func (m Mode) String() string {
	var parts []string
	rest := m
	for _, n := range modeNames {
		if m&n.m != 0 {
			parts = append(parts, n.name)
			rest &^= n.m
		}
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", int(rest)))
	}
	return strings.Join(parts, "|")
}

// check validates an access mode the way MPI-3.1 §13.2.1 requires.
func (m Mode) check() error {
	access := 0
	for _, a := range []Mode{ModeRdOnly, ModeWrOnly, ModeRdWr} {
		if m&a != 0 {
			access++
		}
	}
	known := Mode(0)
	for _, n := range modeNames {
		known |= n.m
	}
	switch {
	case m&^known != 0:
		return ioerr.New(ioerr.ErrAmode, "open", "access mode %s has unknown bits", m)
	case access != 1:
		return ioerr.New(ioerr.ErrAmode, "open", "access mode %s must contain exactly one of rdonly, wronly, rdwr", m)
	case m&ModeRdOnly != 0 && m&(ModeCreate|ModeExcl) != 0:
		return ioerr.New(ioerr.ErrAmode, "open", "access mode %s: create and excl are not allowed with rdonly", m)
	case m&ModeRdWr != 0 && m&ModeSequential != 0:
		return ioerr.New(ioerr.ErrAmode, "open", "access mode %s: sequential is not allowed with rdwr", m)
	}
	return nil
}

func (m Mode) canRead() bool  { return m&(ModeRdOnly|ModeRdWr) != 0 }
func (m Mode) canWrite() bool { return m&(ModeWrOnly|ModeRdWr) != 0 }

// osFlags turns an access mode into driver open flags. create and excl
// are applied by the caller (only the creating rank uses them). Writers
// open read-write so that data sieving can read the holes it rewrites.
func (m Mode) osFlags() int {
	if m.canWrite() {
		return driver.ORdWr
	}
	return driver.ORdOnly
}
