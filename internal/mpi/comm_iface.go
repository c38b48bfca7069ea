//go:build cgo

package mpi

import "github.com/collio/collio/internal/comm"

// Comm implements comm.Comm; these adapters return the interface type for
// the constructors, whose typed forms are DupComm, SplitComm, SplitShared.
var _ comm.Comm = Comm{}

// Dup is DupComm as a comm.Comm.
func (c Comm) Dup() (comm.Comm, error) {
	nc, err := c.DupComm()
	if err != nil {
		return nil, err
	}
	return nc, nil
}

// Split is SplitComm as a comm.Comm; a negative color gives nil.
func (c Comm) Split(color, key int) (comm.Comm, error) {
	nc, err := c.SplitComm(color, key)
	if err != nil || nc.IsNull() {
		return nil, err
	}
	return nc, nil
}

// SplitNode is SplitShared as a comm.Comm.
func (c Comm) SplitNode() (comm.Comm, error) {
	nc, err := c.SplitShared()
	if err != nil {
		return nil, err
	}
	return nc, nil
}
