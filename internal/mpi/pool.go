package mpi

// #include <mpi.h>
// #include <stdint.h>
// int collio_pool_get(MPI_Comm c, uintptr_t *value, int *found);
// int collio_pool_set(MPI_Comm c, uintptr_t value);
import "C"

import (
	"runtime/cgo"
	"sync"

	"github.com/collio/collio/internal/comm"
	"github.com/collio/collio/internal/commpool"
)

var _ commpool.Keeper = Comm{}

var pools struct {
	sync.Mutex
	finalizing bool
}

// Pool returns the commpool.Pool kept with c as an MPI attribute, making
// it on first use; nil if c is not usable or MPI refuses the attribute.
// MPI releases it (and the duplicates in it) when c is freed.
func (c Comm) Pool() *commpool.Pool {
	if c.usable("MPI_Comm_get_attr") != nil {
		return nil
	}
	pools.Lock()
	defer pools.Unlock()
	if pools.finalizing {
		return nil
	}
	var v C.uintptr_t
	var found C.int
	if C.collio_pool_get(c.c, &v, &found) != C.MPI_SUCCESS {
		return nil
	}
	if found != 0 {
		return cgo.Handle(v).Value().(*commpool.Pool)
	}
	p := new(commpool.Pool)
	h := cgo.NewHandle(p)
	if C.collio_pool_set(c.c, C.uintptr_t(h)) != C.MPI_SUCCESS {
		h.Delete()
		return nil
	}
	return p
}

// collioPoolDelete runs when MPI deletes the attribute: the application
// freed the communicator (a collective call, so every rank releases the
// same entries in the same order), or MPI is finalizing.
//
//export collioPoolDelete
func collioPoolDelete(v C.uintptr_t) {
	h := cgo.Handle(v)
	p := h.Value().(*commpool.Pool)
	h.Delete()
	pools.Lock()
	free := !pools.finalizing
	pools.Unlock()
	p.Release(free && !Finalized())
}

//export collioPoolFinalizing
func collioPoolFinalizing() {
	pools.Lock()
	pools.finalizing = true
	pools.Unlock()
}

var _ commpool.Congruent = Comm{}

// CongruentWith reports whether other is an MPI communicator with the same
// ranks in the same order as c (MPI_Comm_compare gives MPI_IDENT or
// MPI_CONGRUENT). It is a local call.
func (c Comm) CongruentWith(other comm.Comm) bool {
	o, ok := comm.As[Comm](other)
	if !ok || c.usable("MPI_Comm_compare") != nil || o.usable("MPI_Comm_compare") != nil {
		return false
	}
	var r C.int
	if C.MPI_Comm_compare(c.c, o.c, &r) != C.MPI_SUCCESS {
		return false
	}
	return r == C.MPI_IDENT || r == C.MPI_CONGRUENT
}
