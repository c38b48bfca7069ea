package hints

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConfigList(t *testing.T) {
	cases := []struct {
		in   string
		want []ConfigEntry
	}{
		{"*:1", []ConfigEntry{{AnyHost, 1}}},
		{"*:*", []ConfigEntry{{AnyHost, AllProcs}}},
		{"node01", []ConfigEntry{{"node01", 1}}},
		{"node01:4", []ConfigEntry{{"node01", 4}}},
		{"node01:*", []ConfigEntry{{"node01", AllProcs}}},
		{" a.example.org : 2 , b-2:* , *:3 ", []ConfigEntry{{"a.example.org", 2}, {"b-2", AllProcs}, {AnyHost, 3}}},
	}
	for _, tc := range cases {
		got, err := ParseConfigList(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		again, err := ParseConfigList(FormatConfigList(got))
		require.NoError(t, err)
		assert.Equal(t, got, again, "canonical form parses back")
	}
}

func TestParseConfigListErrors(t *testing.T) {
	cases := map[string]string{
		"":              "empty list",
		"  ":            "empty list",
		"a:1,":          `entry 2 "": missing host name`,
		",a":            "entry 1",
		":2":            "missing host name",
		"a:0":           "count must be at least 1",
		"a:-3":          "count must be at least 1",
		"a:x":           "count must be a number or *",
		"a:":            "count must be a number or *",
		"a:1:2":         "count must be a number or *",
		"a*b:1":         "bad host name",
		"my host:1":     "bad host name",
		"a:99999999999": "count must be a number or *",
	}
	for in, want := range cases {
		_, err := ParseConfigList(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}
