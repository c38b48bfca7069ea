package hints

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/collio/collio/internal/ioerr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envWith returns a Getenv that knows only ROMIO_HINTS=path.
func envWith(path string) func(string) string {
	return func(k string) string {
		if k == EnvHintsFile {
			return path
		}
		return ""
	}
}

func writeHintsFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "romio-hints")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestResolveDefaults(t *testing.T) {
	s, err := Resolve(nil, Options{Getenv: envWith("")})
	require.NoError(t, err)
	for _, spec := range Table {
		assert.Equal(t, spec.Default, s.String(spec.Key), spec.Key)
		assert.Equal(t, SourceDefault, s.Source(spec.Key), spec.Key)
		assert.False(t, s.IsSet(spec.Key), spec.Key)
	}
	assert.Equal(t, int64(16777216), s.Int(CBBufferSize))
	assert.Equal(t, int64(0), s.Int(CBNodes), "cb_nodes has no value before open")
	assert.Equal(t, Automatic, s.Enum(RomioCBWrite))
	assert.False(t, s.Bool(RomioNoIndepRW))
	assert.Empty(t, s.Warnings())
}

func TestResolveMergeOrder(t *testing.T) {
	path := writeHintsFile(t, `# site hints
cb_buffer_size 8m

	# indented comment
romio_cb_write	ENABLE
ind_rd_buffer_size   1k   
e10_cache_path /scratch/my cache
site_specific_key  some value
cb_buffer_size 4m
`)
	user := map[string]string{
		" romio_cb_write ": " disable ",
		"app_key":          "42",
	}
	s, err := Resolve(user, Options{Getenv: envWith(path)})
	require.NoError(t, err)

	assert.Equal(t, int64(4<<20), s.Int(CBBufferSize), "later file line wins")
	assert.Equal(t, SourceFile, s.Source(CBBufferSize))
	assert.Equal(t, "4194304", s.Map()[CBBufferSize], "sizes echo as plain integers")
	assert.Equal(t, Disable, s.Enum(RomioCBWrite), "user beats file")
	assert.Equal(t, SourceUser, s.Source(RomioCBWrite))
	assert.Equal(t, int64(1024), s.Int(IndRdBufferSize))
	assert.Equal(t, "/scratch/my cache", s.String(E10CachePath), "value is the rest of the line")
	assert.Equal(t, SourceDefault, s.Source(CBNodes))
	assert.True(t, s.IsSet(CBBufferSize))
	assert.False(t, s.IsSet(CBNodes))

	m := s.Map()
	assert.Equal(t, "some value", m["site_specific_key"], "unknown file keys kept")
	assert.Equal(t, "42", m["app_key"], "unknown user keys kept")
	assert.Equal(t, SourceUser, s.Source("app_key"))
	assert.Len(t, m, len(Table)+2)
	assert.Equal(t, s.Keys(), sortedKeys(m))
}

func TestResolveMissingFileWarns(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	s, err := Resolve(map[string]string{CBNodes: "2"}, Options{Getenv: envWith(missing)})
	require.NoError(t, err)
	require.Len(t, s.Warnings(), 1)
	assert.Contains(t, s.Warnings()[0], missing)
	assert.Contains(t, s.Warnings()[0], "does not exist")
	assert.Equal(t, int64(2), s.Int(CBNodes))
}

func TestResolveFileErrorsNameFileAndLine(t *testing.T) {
	path := writeHintsFile(t, "# ok\ncb_buffer_size 16m\nromio_ds_read\ncb_nodes zero\n")
	_, err := Resolve(nil, Options{Getenv: envWith(path)})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ioerr.ErrBadHint))
	assert.Contains(t, err.Error(), path+" line 3: \"romio_ds_read\" has no value")
	assert.Contains(t, err.Error(), path+` line 4: hint cb_nodes="zero": allowed values are integers >= 1`)
}

func TestResolveInvalidUserValue(t *testing.T) {
	_, err := Resolve(map[string]string{RomioCBWrite: "sometimes", CBBufferSize: "lots"}, Options{Getenv: envWith("")})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ioerr.ErrBadHint))
	assert.Contains(t, err.Error(), `hint romio_cb_write="sometimes": allowed values are enable, disable, automatic`)
	assert.Contains(t, err.Error(), `hint cb_buffer_size="lots"`, "every problem is reported")
	var e *ioerr.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, -1, e.Rank)
}

func TestResolveRejectsEmptyAndDuplicateKeys(t *testing.T) {
	_, err := Resolve(map[string]string{"  ": "x"}, Options{Getenv: envWith("")})
	require.ErrorIs(t, err, ioerr.ErrBadHint)
	assert.Contains(t, err.Error(), "empty key")

	_, err = Resolve(map[string]string{"cb_nodes": "2", "cb_nodes ": "3"}, Options{Getenv: envWith("")})
	require.ErrorIs(t, err, ioerr.ErrBadHint)
	assert.Contains(t, err.Error(), "given twice")
}

func TestResolveLenient(t *testing.T) {
	path := writeHintsFile(t, "cb_buffer_size 8m\nbroken_line\nromio_cb_read maybe\n")
	user := map[string]string{CBBufferSize: "huge", DirectWrite: "TRUE", RomioDSWrite: "often"}
	s, err := Resolve(user, Options{Getenv: envWith(path), Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, int64(8<<20), s.Int(CBBufferSize), "bad user value keeps the file's")
	assert.Equal(t, SourceFile, s.Source(CBBufferSize))
	assert.Equal(t, Automatic, s.Enum(RomioCBRead), "bad file value keeps the default")
	assert.Equal(t, Automatic, s.Enum(RomioDSWrite))
	assert.True(t, s.Bool(DirectWrite))

	w := s.Warnings()
	require.Len(t, w, 4)
	assert.Contains(t, w[0], path+" line 2")
	assert.Contains(t, w[1], path+` line 3: hint romio_cb_read="maybe"`)
	assert.Contains(t, w[2], `hint cb_buffer_size="huge"`)
	assert.Contains(t, w[3], `hint romio_ds_write="often": allowed values are enable, disable, automatic (ignored)`)
}

func TestResolveUsesOSEnvByDefault(t *testing.T) {
	path := writeHintsFile(t, "striping_factor 4\n")
	t.Setenv(EnvHintsFile, path)
	s, err := Resolve(nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(4), s.Int(StripingFactor))
}

func TestUpdateAfterOpen(t *testing.T) {
	s, err := Resolve(map[string]string{CBNodes: "4", CollioStrategy: "tam"}, Options{Getenv: envWith("")})
	require.NoError(t, err)

	u, err := s.Update(map[string]string{CBNodes: "8", CBBufferSize: "1m", RomioDSRead: "disable"}, false)
	require.NoError(t, err)
	assert.Equal(t, int64(4), u.Int(CBNodes), "open-only hint keeps its value")
	assert.Equal(t, int64(1<<20), u.Int(CBBufferSize))
	assert.Equal(t, Disable, u.Enum(RomioDSRead))
	require.Len(t, u.Warnings(), 1)
	assert.Contains(t, u.Warnings()[0], "cb_nodes")
	assert.Contains(t, u.Warnings()[0], "only read at open")
	assert.Equal(t, int64(16777216), s.Int(CBBufferSize), "the original set is unchanged")

	_, err = s.Update(map[string]string{RomioDSRead: "sometimes"}, false)
	assert.ErrorIs(t, err, ioerr.ErrBadHint)
}
