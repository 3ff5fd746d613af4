package spec

import (
	"errors"
	"testing"
)

func TestParseMemory(t *testing.T) {
	const (
		k = int64(1) << 10
		m = int64(1) << 20
		g = int64(1) << 30
	)
	tests := []struct {
		in      string
		want    int64
		wantErr error
	}{
		// Spark sizes (JavaUtils.byteStringAs): binary units, any case, a
		// plain number is MiB.
		{"512m", 512 * m, nil},
		{"1g", g, nil},
		{"1G", g, nil},
		{"512M", 512 * m, nil},
		{"2048k", 2048 * k, nil},
		{"2048kb", 2048 * k, nil},
		{"1gb", g, nil},
		{"1t", 1 << 40, nil},
		{"1p", 1 << 50, nil},
		{"100b", 100, nil},
		{"1024", 1024 * m, nil},
		{" 2g ", 2 * g, nil},
		{"0", 0, nil},
		// Kubernetes quantities.
		{"1Gi", g, nil},
		{"512Mi", 512 * m, nil},
		{"1.5Gi", 3 * g / 2, nil},
		{"1e9", 1_000_000_000, nil},
		{"1Ki", k, nil},
		// Neither.
		{"12zz", 0, ErrNotMemory},
		{"", 0, ErrNotMemory},
		{"g", 0, ErrNotMemory},
		{"1 g", 0, ErrNotMemory},
		{"1.5g", 0, ErrMemoryFraction},
		{"1.5G", 0, ErrMemoryFraction},
		{"0.5", 0, ErrMemoryFraction},
		{"-1Gi", 0, ErrMemoryNegative},
		{"9999999999p", 0, ErrMemoryOutOfRange},
		{"99999999999999999999", 0, ErrMemoryOutOfRange},
		{"100Ei", 0, ErrMemoryOutOfRange},
	}
	for _, tt := range tests {
		got, err := ParseMemory(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	if !errors.Is(ErrMemoryFraction, ErrNotMemory) {
		t.Error("ErrMemoryFraction does not wrap ErrNotMemory")
	}
}

func TestParseMemoryLimit(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"2048", 2048}, // bytes, as the Spark operator reads it
		{"2g", 2 << 30},
		{"1G", 1 << 30},
		{"1Gi", 1 << 30},
		{"1500M", 1500 << 20},
	}
	for _, tt := range tests {
		if got, err := ParseMemoryLimit(tt.in); got != tt.want || err != nil {
			t.Errorf("ParseMemoryLimit(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestSparkSize(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  error
	}{
		{"512m", "512m", nil},
		{"2G", "2g", nil},
		{"1024", "1024", nil},
		{"1Gi", "1024m", nil},
		{"1.5Gi", "1536m", nil},
		{"1e9", "954m", nil}, // 953.67 MiB, rounded up
		{"1Ki", "1m", nil},
		{"12zz", "", ErrNotMemory},
		{"99999999999999999999m", "", ErrMemoryOutOfRange},
	}
	for _, tt := range tests {
		got, err := SparkSize(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("SparkSize(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
