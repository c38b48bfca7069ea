package adio

// The measured choice outlives its file. A program that writes a new file
// at each checkpoint repeats its shapes there and would pay every trial
// again; so close keeps the file's figures with its private communicator
// (commpool.Entry: one file uses it at a time, and every rank reuses the
// same one after the same files), and the next open on it starts from
// them when it is on the same driver and kind of file system, with the
// same agreed hints. Every rank keeps and finds the same figures, since
// they changed only on what every rank knows alike.

// measuredKey is the key of a kept measured choice (File.Keep).
type measuredKey struct{}

// keptMeasuring is a closed file's measured choice and what it was
// measured under.
type keptMeasuring struct {
	under  measuredUnder
	shapes map[shapeKey]*shape
}

// Release: nothing but memory.
func (keptMeasuring) Release() error { return nil }

// measuredUnder is what a measured choice holds for: the driver, the file
// system (rank 0's answer, agreed at open) and the hints every rank
// agreed on.
type measuredUnder struct {
	driver string
	magic  uint32
	hints  uint64
}

func (f *File) measuredUnder() measuredUnder {
	return measuredUnder{driver: f.stack.Driver().Name(), magic: f.stack.FSMagic(), hints: f.hints.AgreeDigest()}
}

// resumeMeasured starts the file's measured choice from the one kept by
// the last file closed on its private communicator, if measured under the
// same driver, file system and agreed hints. The shapes are handed over,
// not copied: that file is closed, and its entry is this file's alone.
func (f *File) resumeMeasured() {
	if f.entry == nil {
		return
	}
	if k, ok := f.Kept(measuredKey{}).(keptMeasuring); ok && k.under == f.measuredUnder() {
		f.measured.shapes = k.shapes
	}
}

// keepMeasured keeps the file's measured choice for the next open on its
// private communicator (a file that measured nothing leaves what is kept).
func (f *File) keepMeasured() {
	if f.entry == nil || len(f.measured.shapes) == 0 {
		return
	}
	f.Keep(measuredKey{}, keptMeasuring{under: f.measuredUnder(), shapes: f.measured.shapes})
}
