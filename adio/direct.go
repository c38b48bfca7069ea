package adio

import (
	"fmt"
	"strings"

	"github.com/collio/collio/driver"
	"github.com/collio/collio/hints"
)

// noteDirect checks, after this rank opened its file, that the file
// honours direct_read and direct_write where they are true (the ufs
// driver and the drivers over it open a second descriptor with O_DIRECT;
// see driver/ufs/direct.go). Where it does not (the file system refused
// O_DIRECT, as tmpfs before Linux 6.6 does, or the driver has no direct
// I/O), the open still succeeds, as in ROMIO: the hint reads back false
// on this rank and a warning says why, which rank 0 prints once at the
// end of the open.
func (f *File) noteDirect() {
	if f.f == nil {
		return // open deferred (romio_no_indep_rw)
	}
	st, ok := driver.DirectOf(f.f)
	var missing []string
	if f.cfg.direct[0] && !st.Read {
		missing = append(missing, hints.DirectRead)
	}
	if f.cfg.direct[1] && !st.Write {
		missing = append(missing, hints.DirectWrite)
	}
	if len(missing) == 0 {
		return
	}
	why := "the " + f.stack.Driver().Name() + " driver has no direct I/O"
	if ok && st.Err != nil {
		why = st.Err.Error()
	}
	set := f.hints
	for _, k := range missing {
		if s, err := set.With(k, hints.False); err == nil {
			set = s
		}
	}
	f.setHints(set.WithWarning(fmt.Sprintf("%s: O_DIRECT cannot be used for %s (%s); it is read and written through the page cache",
		strings.Join(missing, ", "), f.path, why)))
}
