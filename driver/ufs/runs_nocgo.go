//go:build !cgo

package ufs

import "github.com/collio/collio/driver"

// WriteRuns writes the runs one by one with WriteV (driver.RunWriter):
// without cgo there is no batched C call (runs.go).
func (f *file) WriteRuns(runs []driver.Run) (int64, error) {
	defer f.wrote.Store(true)
	return driver.WriteRuns(onlyFile{f}, runs)
}

// ReadRuns reads the runs one by one with ReadV (driver.RunReader); bytes
// past end of file read as zeros.
func (f *file) ReadRuns(runs []driver.Run) (int64, error) {
	return driver.ReadRuns(onlyFile{f}, runs)
}
