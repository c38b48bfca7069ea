package benchutil

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseBytes parses a size as IOR writes them: a number with an optional
// suffix k, m, g or t (powers of 1024; upper case and a trailing "iB" or
// "B" are accepted too): "4k", "1m", "64KiB", "1048576".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "i")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (a number with an optional k, m, g or t suffix)", s)
	}
	if v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return v * mult, nil
}

// FormatBytes writes n with the largest binary unit that divides it
// ("4 KiB", "1 MiB", "1000 B"), or with two decimals above 1 MiB when none
// does ("1.50 MiB").
func FormatBytes(n int64) string {
	units := []string{"TiB", "GiB", "MiB", "KiB"}
	for i, u := range units {
		m := int64(1) << (10 * (len(units) - i))
		if n >= m && n%m == 0 {
			return fmt.Sprintf("%d %s", n/m, u)
		}
	}
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}
