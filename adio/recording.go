package adio

import (
	"io"

	"github.com/collio/collio/layout"
	"github.com/collio/collio/record"
)

// recorder writes this rank's access pattern per collective call when
// COLLIO_RECORD names a directory (package record), for collio place.
// Recording is a diagnostic: a failure to record is a warning on this
// rank and ends the recording, never an I/O error.
type recorder struct {
	w        *record.Writer
	filetype *layout.Type // the filetype runs was computed for
	runs     []record.Run
}

// startRecording opens the record of this rank if dir is set.
func (f *File) startRecording(dir string) {
	if dir == "" {
		return
	}
	w, err := record.Create(dir, f.path, f.rank())
	if err != nil {
		f.recordFailed(err)
		return
	}
	f.rec = &recorder{w: w}
}

// recordCall appends one collective call of view v at off (etypes).
func (f *File) recordCall(op string, v View, a Access, off int64) {
	r := f.rec
	if r == nil {
		return
	}
	if r.filetype != v.Filetype {
		r.filetype, r.runs = v.Filetype, record.Runs(v.Filetype)
	}
	err := r.w.Write(record.Call{Op: op, Rank: f.rank(), Ranks: f.comm.Size(),
		Disp: v.Disp, LB: v.Filetype.LB(), Extent: v.Filetype.Extent(), Runs: r.runs,
		Start: off * v.Etype.Size(), Bytes: a.Size()})
	if err != nil {
		f.recordFailed(err)
	}
}

// stopRecording closes the record.
func (f *File) stopRecording() {
	if f.rec == nil {
		return
	}
	if err := f.rec.w.Close(); err != nil {
		f.recordFailed(err)
	}
	f.rec = nil
}

func (f *File) recordFailed(err error) {
	io.WriteString(f.stderr, "collio: warning: COLLIO_RECORD: "+err.Error()+" (recording stopped)\n")
	if f.rec != nil {
		f.rec.w.Close()
	}
	f.rec = nil
}
