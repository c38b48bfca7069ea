//go:build cgo

package mpi_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/mpi"
)

func TestInfoRoundTrip(t *testing.T) {
	in, err := mpi.InfoCreate()
	require.NoError(t, err)
	require.False(t, in.IsNull())
	require.NoError(t, in.Set("cb_buffer_size", "16777216"))
	require.NoError(t, in.Set("romio_cb_write", "enable"))
	require.NoError(t, in.Set("romio_cb_write", "disable")) // overwrite

	v, ok, err := in.Get("romio_cb_write")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "disable", v)
	_, ok, err = in.Get("missing")
	require.NoError(t, err)
	assert.False(t, ok)

	keys, err := in.Keys()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"cb_buffer_size", "romio_cb_write"}, keys)

	back := mpi.InfoFromFint(in.Fint())
	m, err := back.Map()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"cb_buffer_size": "16777216", "romio_cb_write": "disable"}, m)
	require.NoError(t, in.Free())
}

func TestInfoFromMap(t *testing.T) {
	want := map[string]string{"a": "1", "striping_unit": "1048576", "long": strings.Repeat("v", mpi.MaxInfoVal)}
	in, err := mpi.InfoFromMap(want)
	require.NoError(t, err)
	defer func() { require.NoError(t, in.Free()) }()
	got, err := in.Map()
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestInfoErrors(t *testing.T) {
	in, err := mpi.InfoCreate()
	require.NoError(t, err)
	defer func() { require.NoError(t, in.Free()) }()
	assert.Error(t, in.Set("", "x"))
	assert.Error(t, in.Set(strings.Repeat("k", mpi.MaxInfoKey+1), "x"))
	assert.Error(t, in.Set("k", strings.Repeat("v", mpi.MaxInfoVal+1)))
	assert.Error(t, in.Set("a\x00b", "x"))
	assert.Error(t, in.Set("k", ""))
	assert.Error(t, in.Set("k", "a\x00b"))
	require.NoError(t, in.Set(strings.Repeat("k", mpi.MaxInfoKey), "x"))
	_, _, err = in.Get("")
	assert.Error(t, err)

	assert.Error(t, mpi.Info{}.Set("a", "b"))
	assert.True(t, mpi.InfoFromFint(mpi.Info{}.Fint()).IsNull())

	null := mpi.InfoNull()
	assert.True(t, null.IsNull())
	assert.Error(t, null.Set("a", "b"))
	assert.Error(t, null.Free())
	_, err = null.Keys()
	assert.Error(t, err)
	m, err := null.Map()
	require.NoError(t, err)
	assert.Empty(t, m)

	_, err = mpi.InfoFromMap(map[string]string{"": "x"})
	assert.Error(t, err)
}
