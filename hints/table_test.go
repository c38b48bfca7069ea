package hints

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The table is the single source of truth: check it is well formed.
func TestTableWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, spec := range Table {
		assert.False(t, seen[spec.Key], "duplicate key %s", spec.Key)
		seen[spec.Key] = true
		assert.Equal(t, strings.TrimSpace(spec.Key), spec.Key)
		assert.NotEmpty(t, spec.Doc, spec.Key)
		got, ok := Lookup(spec.Key)
		assert.True(t, ok)
		assert.Equal(t, spec.Key, got.Key)

		if spec.Default != "" {
			norm, err := Normalize(spec, spec.Default)
			assert.NoError(t, err, "default of %s", spec.Key)
			assert.Equal(t, spec.Default, norm, "default of %s is in effective form", spec.Key)
		}
		if spec.Kind == KindEnum {
			assert.NotEmpty(t, spec.Allowed, spec.Key)
			for _, a := range spec.Allowed {
				assert.Equal(t, strings.ToLower(a), a, "%s: allowed values are lower-case", spec.Key)
			}
		} else {
			assert.Empty(t, spec.Allowed, spec.Key)
		}
		if spec.Max != 0 {
			assert.Less(t, spec.Min, spec.Max, spec.Key)
		}
	}
	_, ok := Lookup("no_such_hint")
	assert.False(t, ok)
}

func TestMustAgreeAsSpecified(t *testing.T) {
	agree := func(key string) bool {
		for _, p := range []string{"cb_", "romio_cb_", "striping_", "romio_lustre_", "e10_"} {
			if strings.HasPrefix(key, p) {
				return true
			}
		}
		switch key {
		case RomioNoIndepRW, StartIODevice, CollioStrategy, CollioNodeSize, RomioMinFdomainSize, CollioCollectiveTimeout, CollioErrorAgreement, CollioOverlap, CollioFileDomains, CollioAutoAggregators, CollioBytesPerAgg, CollioMeasure, CollioTAMLocal, CollioDeferredSync:
			return true
		}
		return false
	}
	for _, spec := range Table {
		assert.Equal(t, agree(spec.Key), spec.MustAgree, spec.Key)
	}
}
