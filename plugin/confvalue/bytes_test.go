package confvalue

import "testing"

func TestIsSizeForm(t *testing.T) {
	for _, c := range []struct {
		v              string
		size, fraction bool
	}{
		{"512m", true, false}, {"4", true, false}, {"2gb", true, false},
		{"1.5g", false, true}, {"1.5", false, true},
		{"1gi", false, false}, {"1.5gi", false, false}, {"1e9", false, false}, {"", false, false},
	} {
		if size, fraction := IsSizeForm(c.v); size != c.size || fraction != c.fraction {
			t.Errorf("IsSizeForm(%q) = %v, %v; want %v, %v", c.v, size, fraction, c.size, c.fraction)
		}
	}
}
