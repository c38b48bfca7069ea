package adio

import (
	"encoding/binary"
	"hash/fnv"

	"github.com/collio/collio/hints"
	"github.com/collio/collio/internal/agree"
	"github.com/collio/collio/internal/ioerr"
	"github.com/collio/collio/layout"
)

// View is a file view: the file seen from displacement Disp as the
// filetype tiled without end; offsets count etypes of the data it selects.
type View struct {
	Disp     int64
	Etype    *layout.Type
	Filetype *layout.Type
}

// DefaultView is the view every file starts with: the whole file as bytes.
func DefaultView() View { return View{Disp: 0, Etype: layout.Byte, Filetype: layout.Byte} }

// Check validates a view against MPI's rules, naming what is wrong.
func (v View) Check() error {
	switch {
	case v.Etype == nil || v.Filetype == nil:
		return ioerr.New(ioerr.ErrType, "set_view", "etype and filetype must not be nil")
	case v.Disp < 0:
		return ioerr.New(ioerr.ErrArg, "set_view", "displacement %d is negative", v.Disp)
	case v.Etype.Size() <= 0:
		return ioerr.New(ioerr.ErrType, "set_view", "etype %s has size 0", v.Etype)
	case v.Filetype.Size()%v.Etype.Size() != 0:
		return ioerr.New(ioerr.ErrType, "set_view",
			"filetype size %d is not a multiple of the etype size %d", v.Filetype.Size(), v.Etype.Size())
	case v.Filetype.Size() > 0 && v.Filetype.Extent() <= 0:
		return ioerr.New(ioerr.ErrType, "set_view", "filetype extent %d must be positive", v.Filetype.Extent())
	}
	if err := v.Etype.CheckFiletype(); err != nil {
		return ioerr.New(ioerr.ErrType, "set_view", "etype: %v", err)
	}
	if err := v.Filetype.CheckFiletype(); err != nil {
		return ioerr.New(ioerr.ErrType, "set_view", "filetype: %v", err)
	}
	return nil
}

// stream returns the view's data stream: the filetype tiled from Disp
// (only its first tile when tiles would overlap: see layout.NewViewStream).
func (v View) stream() *layout.Stream {
	return layout.NewViewStream(v.Filetype, v.Disp)
}

// SetView sets the file view collectively. Every rank must pass an etype
// of the same size; the individual and shared file pointers are reset to
// zero. Hints
// that are not open-only may be changed here.
func (f *File) SetView(v View, hintsIn map[string]string) error {
	return f.setView(nil, v, hintsIn)
}

// SetViewChecked is SetView for a caller that checked its own arguments
// first (the C library: the data representation, the displacement, the
// datatypes): local, this rank's error with them, fails the call on every
// rank within set_view's one agreement, and is what this rank returns.
// With current the displacement is the shared file pointer's position
// (MPI_DISPLACEMENT_CURRENT, see CurrentDisplacement) and v.Disp is
// ignored; that costs a second agreement.
func (f *File) SetViewChecked(local error, current bool, v View, hintsIn map[string]string) error {
	if current {
		disp, err := f.currentDisplacement(local)
		if err != nil {
			return err
		}
		v.Disp = disp
		local = nil
	}
	return f.setView(local, v, hintsIn)
}

func (f *File) setView(local error, v View, hintsIn map[string]string) error {
	if err := f.usable("set_view"); err != nil {
		return err
	}
	err := local
	if err == nil {
		err = v.Check()
	}
	newHints := f.hints
	if err == nil && len(hintsIn) > 0 {
		newHints, err = f.hints.Update(hintsIn, false)
	}
	// One Allgather agrees on the outcome and carries what MPI requires
	// to be the same on every rank (the etype's size; the hints, as a
	// digest when some were given), whether each rank's filetype is
	// contiguous, whether it moved the shared file pointer, which MPI
	// resets (ROMIO synchronizes once per set_view too), and its
	// filetype's shape.
	var mine [5]uint64
	if err == nil {
		mine[0] = uint64(v.Etype.Size())
		if v.Filetype.IsContiguous() {
			mine[1] = 1
		}
		if len(hintsIn) > 0 {
			mine[3] = newHints.AgreeDigest()
		}
		mine[4] = typeShape(v.Filetype)
	}
	if f.sharedMoved {
		mine[2] = 1
	}
	all, err := f.agreeRecord("set_view", err, mine[:])
	if err != nil {
		if local != nil {
			return f.wrap(local, "set_view") // a failing rank keeps its own
		}
		return err
	}
	contiguous, moved, sameHints := true, false, true
	for r := 0; r < f.comm.Size(); r++ {
		w := all[len(mine)*r:]
		if w[0] != all[0] {
			return &ioerr.Error{Class: ioerr.ErrNotSame, Op: "set_view", Path: f.path, Rank: -1,
				Msg: "ranks passed etypes of different sizes"}
		}
		contiguous = contiguous && w[1] == 1
		moved = moved || w[2] == 1
		sameHints = sameHints && w[3] == all[3]
	}
	if !sameHints {
		// Every rank saw the difference: all compare in full, and the
		// text names the hint.
		if err := hints.CheckSame(f.comm, newHints); err != nil {
			return err
		}
	}
	if moved {
		// Every rank is past its last use of the pointer under the old
		// view: rank 0 resets it, and no rank uses it before all know how
		// that went.
		if err := agree.Errors(f.comm, f.resetSharedPointer()); err != nil {
			return &ioerr.Error{Class: ioerr.ErrInternComm, Op: "set_view", Path: f.path, Rank: -1, Err: err,
				Msg: "resetting the shared file pointer failed on rank 0"}
		}
		f.sharedMoved = false
	}
	f.mu.Lock()
	f.view, f.fp, f.viewsContiguous = v, 0, contiguous
	f.viewShape = viewShapeOf(all, len(mine))
	f.setHints(newHints)
	if len(hintsIn) > 0 {
		f.learned.forget()
	}
	f.mu.Unlock()
	return nil
}

// typeShape condenses a filetype into one word: its size and number of
// blocks, not where they lie (PnetCDF's view of the next variable moves
// rank 0's blocks past a header block and the other ranks' displacement).
// Two views of the same shape may still be accessed otherwise; that costs
// no byte (a repeated choice is independent I/O, right for any pattern),
// and the rechecks see the change.
func typeShape(t *layout.Type) uint64 {
	h := fnv.New64a()
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(t.Size())))
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(t.NumBlocks())))
	return h.Sum64()
}

// viewShapeOf is the shape of every rank's view from set_view's records
// (words per rank, the filetype's shape last): the ranks' shapes in rank
// order.
func viewShapeOf(all []uint64, words int) uint64 {
	h := fnv.New64a()
	for r := 0; r+words <= len(all); r += words {
		h.Write(binary.LittleEndian.AppendUint64(nil, all[r+words-1]))
	}
	return h.Sum64()
}

// sameViewShape is viewShapeOf for n ranks whose filetype is t.
func sameViewShape(t *layout.Type, n int) uint64 {
	shape := typeShape(t)
	all := make([]uint64, n)
	for r := range all {
		all[r] = shape
	}
	return viewShapeOf(all, 1)
}

// View returns the current view.
func (f *File) View() View {
	f.mu.Lock()
	v := f.view
	f.mu.Unlock()
	return v
}

// SetInfo changes hints collectively (MPI_File_set_info), keeping the view
// and the file pointer. Open-only hints are ignored with a warning, as are
// invalid values when lenient (the C interposer's behaviour); otherwise an
// invalid value is an error on every rank.
func (f *File) SetInfo(h map[string]string, lenient bool) error {
	if err := f.usable("set_info"); err != nil {
		return err
	}
	updated, err := f.hints.Update(h, lenient)
	if err := f.agree("set_info", err); err != nil {
		return err
	}
	if err := hints.CheckSame(f.comm, updated); err != nil {
		return err
	}
	f.mu.Lock()
	f.setHints(updated)
	f.learned.forget()
	f.measured.reset()
	f.mu.Unlock()
	return nil
}
