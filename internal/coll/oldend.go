package coll

import (
	"errors"
	"io"

	"github.com/collio/collio/driver"
)

// OldEnd is where a file ended when a collective write began, for an
// aggregator that read-modify-writes its windows: bytes of a window past
// it are holes (zeros), since within the call only the window's own
// aggregator writes there. A freshly created file (a checkpoint, a netCDF
// history file) then costs no reads of zeros at all.
//
// Ask it before the call's first exchange: every aggregator's writes of
// the call come after that exchange, so the size is the call's starting
// one. Asked later it may include other aggregators' writes, which are
// outside this aggregator's windows: it only reads more than it needs.
// The zero value is unknown: windows are read in full.
type OldEnd struct {
	end   int64
	known bool
}

// FileEnd asks f for its size. On an error (or no file) windows are read
// in full, as before.
func FileEnd(f driver.File) OldEnd {
	if f == nil {
		return OldEnd{}
	}
	size, err := f.Size()
	if err != nil {
		return OldEnd{}
	}
	return OldEnd{end: size, known: true}
}

// Read fills win with the file's bytes at off for a read-modify-write:
// it reads what lies before the old end and zeroes the rest.
func (o OldEnd) Read(f driver.File, win []byte, off int64) error {
	want := int64(len(win))
	if o.known {
		want = min(want, max(o.end-off, 0))
	}
	var n int
	if want > 0 {
		var err error
		n, err = f.ReadAt(win[:want], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	clear(win[n:])
	return nil
}
