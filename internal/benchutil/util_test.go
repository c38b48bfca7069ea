package benchutil

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseHintFile(t *testing.T) {
	in := `# comment line
   # indented comment
cb_buffer_size   16777216
romio_cb_read enable#not-a-comment
cb_config_list *:2 # two per node

striping_unit 1m
cb_buffer_size 8m
`
	kvs, err := ParseHintFile(strings.NewReader(in), "h")
	require.NoError(t, err)
	require.Equal(t, [][2]string{
		{"cb_buffer_size", "16777216"},
		{"romio_cb_read", "enable#not-a-comment"}, // '#' only starts a comment after a blank
		{"cb_config_list", "*:2"},
		{"striping_unit", "1m"},
		{"cb_buffer_size", "8m"}, // kept in order: the later one wins when applied
	}, kvs)

	kvs, err = ParseHintFile(strings.NewReader(""), "empty")
	require.NoError(t, err)
	require.Empty(t, kvs)

	for in, want := range map[string]string{
		"cb_nodes\n":            "h:1: key \"cb_nodes\" has no value",
		"# c\ncb_nodes 1 2\n":   "h:2:",
		"cb_nodes=1\n":          "not key=value",
		"ok 1\nbad,key 2\n":     "h:2: key \"bad,key\"",
		"a 1\n\n\nlonely # x\n": "h:4: key \"lonely\" has no value",
	} {
		_, err := ParseHintFile(strings.NewReader(in), "h")
		require.Error(t, err, "%q", in)
		require.Contains(t, err.Error(), want, "%q", in)
	}
}

func TestHostLabel(t *testing.T) {
	for env, want := range map[[2]string]string{
		{"", ""}:               "mpiio:default",
		{"ompio", "vulcan"}:    "mpiio:ompio/vulcan",
		{"ompio", ""}:          "mpiio:ompio",
		{"romio321", ""}:       "mpiio:romio321",
		{"romio321", "vulcan"}: "mpiio:romio321",
		{"", "two_phase"}:      "mpiio:default/two_phase",
	} {
		got := HostLabel(func(k string) string {
			switch k {
			case "OMPI_MCA_io":
				return env[0]
			case "OMPI_MCA_fcoll":
				return env[1]
			}
			return ""
		})
		require.Equal(t, want, got, "%q", env)
	}
}

func TestParseVmHWM(t *testing.T) {
	require.Equal(t, int64(1234<<10), ParseVmHWM(strings.NewReader("Name:\tx\nVmPeak:\t  9999 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n")))
	require.Equal(t, int64(-1), ParseVmHWM(strings.NewReader("Name:\tx\n")))
	if PeakRSS() <= 0 {
		t.Log("no /proc/self/status VmHWM here")
	}
}

func TestDimsCreate(t *testing.T) {
	for n, want := range map[int][3]int{1: {1, 1, 1}, 2: {2, 1, 1}, 3: {3, 1, 1}, 4: {2, 2, 1}, 6: {3, 2, 1}, 8: {2, 2, 2}, 12: {3, 2, 2}} {
		require.Equal(t, want, DimsCreate(n), "n=%d", n)
	}
}
