package driver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDriver is a Driver that only has a name.
type fakeDriver struct{ name string }

func (d fakeDriver) Name() string                           { return d.name }
func (d fakeDriver) Open(string, OpenOptions) (File, error) { return nil, nil }
func (d fakeDriver) Delete(string) error                    { return nil }

func TestRegistryByNameAndSortedNames(t *testing.T) {
	r := newRegistry()
	r.register(fakeDriver{"zeta"})
	r.register(fakeDriver{"alpha"})
	r.register(fakeDriver{"ufs"})

	d, ok := r.byName("ufs")
	require.True(t, ok)
	assert.Equal(t, "ufs", d.Name())
	_, ok = r.byName("lustre")
	assert.False(t, ok)
	assert.Equal(t, []string{"alpha", "ufs", "zeta"}, r.names())
}

func TestRegistryRejectsDuplicatesAndNil(t *testing.T) {
	r := newRegistry()
	r.register(fakeDriver{"ufs"})
	assert.PanicsWithValue(t, `driver: Register called twice for driver "ufs"`,
		func() { r.register(fakeDriver{"ufs"}) })
	assert.Panics(t, func() { r.register(nil) })
	assert.Panics(t, func() { r.register(fakeDriver{""}) })
}

func TestPackageRegistryFunctions(t *testing.T) {
	// The process-wide registry: use a name no real driver takes, and
	// register it once even when the test runs with -count > 1.
	if _, done := ByName("registrytestonly"); !done {
		Register(fakeDriver{"registrytestonly"})
	}
	d, ok := ByName("registrytestonly")
	require.True(t, ok)
	assert.Equal(t, "registrytestonly", d.Name())
	assert.Contains(t, Names(), "registrytestonly")
}
