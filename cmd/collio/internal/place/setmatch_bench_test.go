package place

import (
	"fmt"
	"testing"
)

// cube3 splits n ranks over a 3-D grid as evenly as MPI_Dims_create.
func cube3(n int) []int {
	d := []int{1, 1, 1}
	for f := 2; n > 1; {
		if n%f != 0 {
			f++
			continue
		}
		n /= f
		// the smallest dimension takes the factor
		i := 0
		for k := range d {
			if d[k] < d[i] {
				i = k
			}
		}
		d[i] *= f
	}
	return d
}

// BenchmarkSetMatch times SetMatch alone (the application matrices
// already built) and the matrix build, for a coll_perf-like 3-D block
// decomposition (16^3 doubles per rank) on nodes of 32 cores.
func BenchmarkSetMatch(b *testing.B) {
	for _, n := range []int{1024, 4096, 16384} {
		procs := cube3(n)
		g := Grid{Procs: procs, Elem: 8}
		for _, p := range procs {
			g.Sizes = append(g.Sizes, 16*p)
		}
		acc, err := g.Accesses()
		if err != nil {
			b.Fatal(err)
		}
		a := Arch{Nodes: n / 32, CoresPerNode: 32}
		b.Run(fmt.Sprintf("matrix/ranks=%d", n), func(b *testing.B) {
			for range b.N {
				if _, err := Build(acc, a.Nodes, Domains{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		p, err := NewProblem(acc, a, 0, Domains{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.SetMatch(DefaultMinFraction); err != nil { // builds the matrices
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("setmatch/ranks=%d", n), func(b *testing.B) {
			for range b.N {
				if _, err := p.SetMatch(DefaultMinFraction); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
