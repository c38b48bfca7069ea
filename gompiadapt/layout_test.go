//go:build cgo

package gompiadapt

import (
	"reflect"
	"testing"
	"unsafe"

	gompi "github.com/sbromberger/gompi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stand-ins for the ways gompi's Communicator could change; the C-style
// name mimics what cgo calls Open MPI's struct ompi_communicator_t.
type (
	ompi_communicator_t struct{ _ int }
	movedComm           struct {
		MaxTag int
		comm   *ompi_communicator_t
	}
	intComm     struct{ comm int32 }
	renamed     struct{ handle *ompi_communicator_t }
	otherTarget struct{ comm *int }
	sameShape   struct {
		comm   *ompi_communicator_t
		MaxTag int
	}
)

func TestCheckLayout(t *testing.T) {
	require.NoError(t, checkLayout(reflect.TypeFor[gompi.Communicator]()), "the pinned gompi v0.2.0 must pass")
	require.NoError(t, checkLayout(reflect.TypeFor[sameShape]()))
	for _, bad := range []reflect.Type{
		reflect.TypeFor[movedComm](),
		reflect.TypeFor[intComm](),
		reflect.TypeFor[renamed](),
		reflect.TypeFor[otherTarget](),
		reflect.TypeFor[struct{}](),
		reflect.TypeFor[int](),
	} {
		assert.Error(t, checkLayout(bad), "%v must be rejected", bad)
	}
}

func TestCommFieldIsGompisComm(t *testing.T) {
	// Whatever commField writes, gompi reads back as its communicator:
	// Rank() on WORLD written through commField answers like WORLD.
	var g gompi.Communicator
	p := unsafe.Pointer(gompi.NewCommunicator(nil))
	*commField(&g) = *(*unsafe.Pointer)(p)
	assert.Equal(t, gompi.WorldRank(), g.Rank())
	assert.Equal(t, gompi.WorldSize(), g.Size())
}
