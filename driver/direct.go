package driver

// Keys of OpenOptions.Params that ask a driver for direct I/O (O_DIRECT),
// as the hints of the same names do (value "true").
const (
	ParamDirectRead  = "direct_read"
	ParamDirectWrite = "direct_write"
)

// DirectStatus is how an open file honours direct_read and direct_write.
type DirectStatus struct {
	// Read and Write tell which directions go through O_DIRECT.
	Read, Write bool
	// Err says why O_DIRECT is not used for a direction that asked for
	// it (the open with O_DIRECT failed); nil otherwise.
	Err error
	// MemAlign and OffsetAlign are the alignments of buffer addresses and
	// of file offsets and lengths that direct transfers need; Block is
	// the unit in which writes are split between the page cache and
	// O_DIRECT (at least the page size). Zero when neither direction is
	// direct.
	MemAlign, OffsetAlign, Block int64
	// Bytes counts the bytes moved with O_DIRECT so far.
	Bytes int64
}

// DirectFile is a File that can read or write with O_DIRECT.
type DirectFile interface {
	Direct() DirectStatus
}

// DirectOf returns the direct-I/O status of the first file in f's
// decorator chain (As) that can do direct I/O; ok is false when none can.
func DirectOf(f File) (s DirectStatus, ok bool) {
	if d, ok := As[DirectFile](f); ok {
		return d.Direct(), true
	}
	return DirectStatus{}, false
}
