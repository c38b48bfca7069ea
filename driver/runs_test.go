package driver_test

import (
	"errors"
	"testing"

	"github.com/collio/collio/driver"
	"github.com/stretchr/testify/assert"
)

// vectorOnly is a File that has WriteV and nothing else.
type vectorOnly struct {
	driver.File
	calls  []int64
	failAt int64
}

func (f *vectorOnly) WriteV(bufs [][]byte, off int64) (int, error) {
	if off == f.failAt {
		return 1, errors.New("disk on fire")
	}
	f.calls = append(f.calls, off)
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n, nil
}

func TestWriteRunsFallsBackToWriteV(t *testing.T) {
	f := &vectorOnly{failAt: -1}
	runs := []driver.Run{{Off: 10, Bufs: [][]byte{{1, 2}, {3}}}, {Off: 0, Bufs: nil}, {Off: 40, Bufs: [][]byte{{4}}}}
	n, err := driver.WriteRuns(f, runs)
	assert.NoError(t, err)
	assert.Equal(t, int64(4), n)
	assert.Equal(t, []int64{10, 0, 40}, f.calls, "one WriteV per run, in order")
	assert.Equal(t, int64(3), runs[0].Len())

	f = &vectorOnly{failAt: 0}
	n, err = driver.WriteRuns(f, runs)
	assert.EqualError(t, err, "disk on fire")
	assert.Equal(t, int64(4), n, "the first run and what the failing call moved")
	assert.Equal(t, []int64{10}, f.calls, "nothing after the failure")
}
