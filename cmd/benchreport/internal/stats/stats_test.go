package stats

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
		ok   bool
	}{
		{nil, 0, false},
		{[]float64{5}, 5, true},
		{[]float64{3, 1, 2}, 2, true},
		{[]float64{4, 1, 3, 2}, 2.5, true},
		{[]float64{1424.3, 1424.3}, 1424.3, true},
	} {
		got, ok := Median(c.xs)
		if got != c.want || ok != c.ok {
			t.Errorf("Median(%v) = %v, %v; want %v, %v", c.xs, got, ok, c.want, c.ok)
		}
	}
	xs := []float64{9, 1, 5}
	Median(xs)
	if xs[0] != 9 || xs[1] != 1 || xs[2] != 5 {
		t.Errorf("Median reordered its input: %v", xs)
	}
}

func TestRatio(t *testing.T) {
	for _, c := range []struct {
		a, b, want float64
		ok         bool
	}{
		{3, 2, 1.5, true},
		{0, 2, 0, true},
		{3, 0, 0, false},
		{3, -1, 0, false},
		{3, math.NaN(), 0, false},
	} {
		got, ok := Ratio(c.a, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("Ratio(%v, %v) = %v, %v; want %v, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}
