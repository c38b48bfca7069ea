package hints

import (
	"maps"
	"slices"
	"testing"

	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func TestWithDerivesValue(t *testing.T) {
	s, err := Resolve(map[string]string{StripingUnit: "1m"}, Options{Getenv: envWith("")})
	require.NoError(t, err)

	d, err := s.With(CBNodes, "6")
	require.NoError(t, err)
	assert.Equal(t, int64(6), d.Int(CBNodes))
	assert.Equal(t, SourceDerived, d.Source(CBNodes))
	assert.False(t, d.IsSet(CBNodes), "a derived value was not given by the user")
	assert.Equal(t, int64(0), s.Int(CBNodes), "the original set is unchanged")
	assert.Equal(t, SourceDefault, s.Source(CBNodes))

	d2, err := d.With(StripingUnit, "4M")
	require.NoError(t, err)
	assert.Equal(t, "4194304", d2.String(StripingUnit))
	assert.Equal(t, SourceDerived, d2.Source(StripingUnit))
	assert.True(t, d2.IsSet(StripingUnit), "still marked as given by the user")

	_, err = s.With(CBNodes, "0")
	assert.ErrorIs(t, err, ioerr.ErrBadHint)
	_, err = s.With("no_such_hint", "1")
	assert.ErrorIs(t, err, ioerr.ErrArg)
}

func TestGettersPanicOnProgrammingErrors(t *testing.T) {
	s, err := Resolve(map[string]string{"app_key": "1"}, Options{Getenv: envWith("")})
	require.NoError(t, err)
	assert.Panics(t, func() { s.Int("no_such_hint") })
	assert.Panics(t, func() { s.String("app_key") }, "unknown keys are only in Map")
	assert.Panics(t, func() { s.Int(RomioCBWrite) }, "wrong kind")
	assert.Panics(t, func() { s.Enum(CBBufferSize) })
	assert.Panics(t, func() { s.Bool(CollioStrategy) })
	assert.NotPanics(t, func() { s.String(CBBufferSize) })
	assert.Equal(t, "", s.Source("no_such_hint"))
	assert.False(t, s.IsSet("no_such_hint"))
	assert.True(t, s.IsSet("app_key"))
}

func TestSetIsImmutable(t *testing.T) {
	s, err := Resolve(nil, Options{Getenv: envWith("/does/not/exist")})
	require.NoError(t, err)
	m := s.Map()
	m[CBBufferSize] = "1"
	w := s.Warnings()
	w[0] = "changed"
	assert.Equal(t, "16777216", s.String(CBBufferSize))
	assert.NotEqual(t, "changed", s.Warnings()[0])
}
