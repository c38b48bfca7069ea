package record

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/collio/collio/layout"
	"github.com/stretchr/testify/require"
)

func blocks(t *layout.Type) [][2]int64 {
	var b [][2]int64
	for off, n := range t.Blocks() {
		b = append(b, [2]int64{off, n})
	}
	return b
}

func TestRunsRoundTrip(t *testing.T) {
	sub, err := layout.Subarray([]int{64, 64, 64}, []int{16, 16, 16}, []int{16, 32, 48}, layout.OrderC, layout.Float64)
	require.NoError(t, err)
	vec, err := layout.Vector(5, 2, 7, layout.Int32)
	require.NoError(t, err)
	idx, err := layout.Indexed([]int{1, 3, 2}, []int{0, 4, 20}, layout.Byte)
	require.NoError(t, err)
	resized, err := layout.Resized(vec, -8, 400)
	require.NoError(t, err)
	for _, typ := range []*layout.Type{sub, vec, idx, resized, layout.Bytes(100)} {
		c := Call{LB: typ.LB(), Extent: typ.Extent(), Runs: Runs(typ)}
		got, err := c.Filetype()
		require.NoError(t, err)
		require.Equal(t, blocks(typ), blocks(got), "%v", typ)
		require.Equal(t, typ.LB(), got.LB())
		require.Equal(t, typ.Extent(), got.Extent())
	}
	// One run per plane of rows, not one per row or element.
	require.Len(t, Runs(sub), 16)
	require.Len(t, Runs(vec), 1)
}

func TestWriteAndReadCall(t *testing.T) {
	dir := t.TempDir()
	sub, err := layout.Subarray([]int{8, 8}, []int{4, 4}, []int{0, 4}, layout.OrderC, layout.Byte)
	require.NoError(t, err)
	for r := range 2 {
		w, err := Create(dir, "/scratch/out file.dat", r)
		require.NoError(t, err)
		for seq := int64(1); seq <= 2; seq++ {
			require.NoError(t, w.Write(Call{Seq: seq, Op: "write_all", Rank: r, Ranks: 2, Disp: 16,
				LB: sub.LB(), Extent: sub.Extent(), Runs: Runs(sub), Start: seq * 16, Bytes: 16}))
		}
		require.NoError(t, w.Close())
	}
	files, err := Files(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"out_file.dat"}, slices.Collect(maps.Keys(files)))
	calls, err := ReadCall(dir, "out_file.dat", 2)
	require.NoError(t, err)
	require.Len(t, calls, 2)
	require.Equal(t, int64(32), calls[1].Start)
	require.Equal(t, Runs(sub), calls[1].Runs)

	_, err = ReadCall(dir, "other", 1)
	require.ErrorContains(t, err, `no record of "other"`)
	_, err = ReadCall(dir, "out_file.dat", 3)
	require.ErrorContains(t, err, "no call 3 (2 calls recorded)")
	_, err = Files(t.TempDir())
	require.ErrorContains(t, err, "no records")
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "line 1: empty"},
		{"hello\n", "line 1: not a collio record"},
		{"collio-record 1 \"f\"\ncall x\n", "line 2: want a call line"},
		{"collio-record 1 \"f\"\ncall 1 write_all rank 0 of 1 disp 0 lb 0 extent 8 start 0 bytes 8 runs 2\n0 8 0 1\n", "line 4: ends inside call 1"},
		{"collio-record 1 \"f\"\ncall 1 write_all rank 0 of 1 disp 0 lb 0 extent 8 start 0 bytes 8 runs 1\n0 x\n", "line 3: want a run"},
	} {
		_, _, err := Parse(strings.NewReader(c.text), "r")
		require.ErrorContains(t, err, c.want, "%q", c.text)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.rank0.rec"), []byte("junk\n"), 0o644))
	_, err := ReadCall(dir, "f", 1)
	require.ErrorContains(t, err, "not a collio record")
}

// A file opened again in the same run (written, then read back) continues
// its record and numbering.
func TestReopenContinues(t *testing.T) {
	dir := t.TempDir()
	for i, op := range []string{"write_all", "read_all"} {
		w, err := Create(dir, "f", 0)
		require.NoError(t, err)
		require.NoError(t, w.Write(Call{Seq: 99, Op: op, Ranks: 1, Extent: 8, Runs: []Run{{0, 8, 0, 1}}, Bytes: int64(8 * (i + 1))}))
		require.NoError(t, w.Close())
	}
	f, err := os.Open(filepath.Join(dir, "f.rank0.rec"))
	require.NoError(t, err)
	defer f.Close()
	_, calls, err := Parse(f, "f")
	require.NoError(t, err)
	require.Len(t, calls, 2)
	require.Equal(t, []int64{1, 2}, []int64{calls[0].Seq, calls[1].Seq})
	require.Equal(t, "read_all", calls[1].Op)
	seq, err := FirstWrite(dir, "f")
	require.NoError(t, err)
	require.Equal(t, int64(1), seq)
}
