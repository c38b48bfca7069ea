package hints

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestNormalizeEveryKind(t *testing.T) {
	cases := []struct {
		key, in, want string
		wantErr       string // substring of the error, "" = valid
	}{
		// Int.
		{CBNodes, "4", "4", ""},
		{CBNodes, "+4", "4", ""},
		{CBNodes, "007", "7", ""},
		{CBNodes, "0", "", "allowed values are integers >= 1"},
		{CBNodes, "4k", "", "allowed values are integers >= 1"},
		{CBNodes, "", "", ""}, // empty default: "" means no value
		{CBBufferSize, "", "", `hint cb_buffer_size=""`},
		{CBNodes, "99999999999999999999", "", "integers >= 1"},
		{StartIODevice, "-1", "-1", ""},
		{StartIODevice, "-2", "", "integers >= -1"},
		{E10CacheThreads, "1024", "1024", ""},
		{E10CacheThreads, "1025", "", "integers from 1 to 1024"},
		// Size.
		{CBBufferSize, "16777216", "16777216", ""},
		{CBBufferSize, "16m", "16777216", ""},
		{CBBufferSize, "16M", "16777216", ""},
		{CBBufferSize, "4k", "4096", ""},
		{CBBufferSize, "2G", "2147483648", ""},
		{CBBufferSize, "0", "", "sizes in bytes >= 1"},
		{CBBufferSize, "16mb", "", "not a size"},
		{CBBufferSize, "m", "", "not a size"},
		{CBBufferSize, "1.5m", "", "not a size"},
		{CBBufferSize, "9000000000g", "", "too large"},
		{CBBufferSize, "-1k", "", "sizes in bytes >= 1"},
		{StripingUnit, "0", "0", ""},
		// Enum.
		{RomioCBWrite, "enable", "enable", ""},
		{RomioCBWrite, "DISABLE", "disable", ""},
		{RomioCBWrite, "Automatic", "automatic", ""},
		{RomioCBWrite, "sometimes", "", `hint romio_cb_write="sometimes": allowed values are enable, disable, automatic`},
		{E10Cache, "coherent", "coherent", ""},
		{E10CacheFlushFlag, "FLUSH_NONE", "flush_none", ""},
		{CollioStrategy, "TAM", "tam", ""},
		{CollioStrategy, "fastest", "", "auto, twophase, dynamic, static, tam, independent"},
		// Bool.
		{DirectRead, "TRUE", "true", ""},
		{DirectRead, "false", "false", ""},
		{DirectRead, "yes", "", `hint direct_read="yes": allowed values are true, false`},
		{RomioNoIndepRW, "1", "", "true, false"},
		// String.
		{E10CachePath, "/local/ssd cache", "/local/ssd cache", ""},
		{E10CachePath, "", "", ""},
		// Config list.
		{CBConfigList, "*:1", "*:1", ""},
		{CBConfigList, "n1:2, n2 : *,n3", "n1:2,n2:*,n3:1", ""},
		{CBConfigList, "*:0", "", "count must be at least 1"},
		{CBConfigList, "", "", "empty list"},
	}
	for _, tc := range cases {
		t.Run(tc.key+"="+tc.in, func(t *testing.T) {
			spec, ok := Lookup(tc.key)
			require.True(t, ok)
			got, err := Normalize(spec, tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Contains(t, err.Error(), tc.key)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseSizeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int64Range(0, math.MaxInt64>>30).Draw(t, "n")
		suffix := rapid.SampledFrom([]string{"", "k", "K", "m", "M", "g", "G"}).Draw(t, "suffix")
		mult := map[string]int64{"": 1, "k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30}[suffix]
		got, err := ParseSize(strconv.FormatInt(n, 10) + suffix)
		if err != nil {
			t.Fatalf("ParseSize: %v", err)
		}
		if got != n*mult {
			t.Fatalf("got %d, want %d", got, n*mult)
		}
	})
}

// Normalizing an effective value again must not change it: what is echoed
// can be passed back as a hint.
func TestNormalizeIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := rapid.SampledFrom(Table).Draw(t, "spec")
		in := rapid.OneOf(
			rapid.StringMatching(`[+-]?[0-9]{1,12}[kKmMgG]?`),
			rapid.SampledFrom(append([]string{"TRUE", "false", "Enable", "x"}, spec.Allowed...)),
			rapid.StringMatching(`([a-z0-9*]{1,4}(:([0-9]{1,3}|\*))?,){0,3}[a-z0-9*]{1,4}(:([0-9]{1,3}|\*))?`),
		).Draw(t, "value")
		once, err := Normalize(spec, in)
		if err != nil {
			return
		}
		twice, err := Normalize(spec, once)
		if err != nil || twice != once {
			t.Fatalf("%s: %q -> %q -> %q, %v", spec.Key, in, once, twice, err)
		}
	})
}
