package envvar

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collio/collio/internal/ioerr"
)

func TestSwitches(t *testing.T) {
	for _, name := range []string{FastLane, ThreadMultiple, SharedFP, Warm, QuietMonitor, SharedFPServer, PrintHints} {
		v, ok := Lookup(name)
		require.True(t, ok, name)
		for value, want := range map[string]int{"": v.Default(), " ": v.Default(), "1": 1, "on": 1, "ON": 1, "yes": 1,
			"true": 1, " True ": 1, "0": 0, "off": 0, "Off": 0, "no": 0, "false": 0} {
			got, err := Int(name, value)
			require.NoError(t, err, "%s=%q", name, value)
			assert.Equal(t, want, got, "%s=%q", name, value)
		}
		for _, value := range []string{"2", "-1", "of", "enable", "disable", "0x1", "1.0", "y"} {
			got, err := Int(name, value)
			requireBad(t, err, name, value, "accepted: 1, on, yes, true, 0, off, no, false")
			assert.Equal(t, v.Default(), got, "the default applies")
		}
	}
	on, err := Switch(FastLane, "")
	require.NoError(t, err)
	assert.True(t, on, "the fast lane is on by default")
	on, err = Switch(SharedFPServer, "")
	require.NoError(t, err)
	assert.False(t, on, "the counter server is off by default on one node")
}

func TestVerboseLevels(t *testing.T) {
	for value, want := range map[string]int{"": 0, "0": 0, "1": 1, "2": 2, "17": 17, "on": 1, "off": 0} {
		got, err := Int(Verbose, value)
		require.NoError(t, err, value)
		assert.Equal(t, want, got, value)
	}
	for _, value := range []string{"-1", "verbose", "1x", "2.5"} {
		_, err := Int(Verbose, value)
		requireBad(t, err, Verbose, value, "a number >= 0")
	}
}

func TestErrorCodesCount(t *testing.T) {
	for value, want := range map[string]int{"": 64, "0": 0, "4": 4, "4096": 4096} {
		got, err := Int(ErrorCodes, value)
		require.NoError(t, err, value)
		assert.Equal(t, want, got, value)
	}
	for _, value := range []string{"4097", "-1", "on", "many", "64k"} {
		got, err := Int(ErrorCodes, value)
		requireBad(t, err, ErrorCodes, value, "a number from 0 to 4096")
		assert.Equal(t, 64, got)
	}
}

func TestStatsDest(t *testing.T) {
	for value, want := range map[string]string{"": "", "0": "", "off": "", "no": "", "1": "1", "on": "1", "yes": "1",
		"/tmp/s.json": "/tmp/s.json", "./stats.%p.json": "./stats.%p.json", " dir/100%%.json ": "dir/100%%.json"} {
		got, err := StatsDest(value)
		require.NoError(t, err, value)
		assert.Equal(t, want, got, value)
		n, err := Int(Stats, value)
		require.NoError(t, err, value)
		assert.Equal(t, want != "", n == 1, value)
	}
	// A mistyped switch is not a file in the current directory.
	for _, value := range []string{"ture", "2", "stats.json", "/tmp/s.%d.json", "/tmp/s.json%"} {
		got, err := StatsDest(value)
		requireBad(t, err, Stats, value, "or a file path containing a '/'")
		assert.Empty(t, got)
	}
}

func TestCheck(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	require.NoError(t, Check(getenv), "nothing set")
	for _, v := range Vars {
		env[v.Name] = "1"
	}
	require.NoError(t, Check(getenv), "every variable on")
	env[Stats], env[FastLane] = "ture", "of"
	err := Check(getenv)
	require.ErrorIs(t, err, ErrBadValue)
	require.ErrorIs(t, err, ioerr.ErrArg)
	assert.Contains(t, err.Error(), `COLLIO_STATS="ture" is not valid; accepted: `)
	assert.Contains(t, err.Error(), `COLLIO_FAST_LANE="of" is not valid; accepted: 1, on, yes, true, 0, off, no, false`)
	err = Check(getenv, Warm, FastLane)
	require.ErrorIs(t, err, ErrBadValue)
	assert.NotContains(t, err.Error(), "COLLIO_STATS", "only the variables named")
	require.NoError(t, Check(getenv, Warm, Verbose))
	_, err = Int("COLLIO_NOPE", "1")
	require.Error(t, err)
}

// requireBad checks that err names the variable, the value and what is
// accepted.
func requireBad(t *testing.T, err error, name, value, accepted string) {
	t.Helper()
	require.Error(t, err, "%s=%q", name, value)
	require.True(t, errors.Is(err, ErrBadValue) && errors.Is(err, ioerr.ErrArg), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprintf("%s=%q is not valid; accepted: ", name, value))
	assert.Contains(t, err.Error(), accepted)
}

// FuzzInt: any value of any variable parses without panicking to an
// accepted value, or to the default with an ErrArg naming the variable and
// the value; a value accepted parses the same once trimmed, and COLLIO_STATS
// agrees with StatsDest.
func FuzzInt(f *testing.F) {
	for _, s := range []string{"", "1", "on", " Off ", "ture", "4096", "4097", "-1", "./s.%p.json", "/x%", "1\x00"} {
		f.Add(uint8(0), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		v := Vars[int(which)%len(Vars)]
		n, err := Int(v.Name, value)
		if err != nil {
			requireBad(t, err, v.Name, value, v.Accepted())
			require.Equal(t, v.Default(), n)
			return
		}
		require.GreaterOrEqual(t, n, 0)
		if v.kind == kindSwitch {
			require.LessOrEqual(t, n, 1)
		}
		if v.kind == kindCount {
			require.LessOrEqual(t, n, v.max)
		}
		again, err := Int(v.Name, " "+value+"\t")
		require.NoError(t, err)
		require.Equal(t, n, again)
		if v.Name == Stats {
			dest, err := StatsDest(value)
			require.NoError(t, err)
			require.Equal(t, n == 1, dest != "")
		}
	})
}
