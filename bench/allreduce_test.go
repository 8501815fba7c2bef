package bench

import (
	"slices"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, test := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"4096", 4096, true},
		{"4KB", 4 << 10, true},
		{"4kb", 4 << 10, true},
		{"64MB", 64 << 20, true},
		{"256MiB", 256 << 20, true},
		{"1GiB", 1 << 30, true},
		{"1.5K", 1536, true},
		{"16m", 16 << 20, true},
		{"", 0, false},
		{"-1MB", 0, false},
		{"12XB", 0, false},
	} {
		got, err := ParseSize(test.in)
		if (err == nil) != test.ok || got != test.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (ok=%v)", test.in, got, err, test.want, test.ok)
		}
	}
}

func TestWorkerArgs(t *testing.T) {
	for _, test := range []struct{ in, want []string }{
		{[]string{"bench", "allreduce", "--local", "2", "--size", "4KB"}, []string{"bench", "allreduce", "--size", "4KB"}},
		{[]string{"bench", "allreduce", "--local=4", "--json"}, []string{"bench", "allreduce", "--json"}},
		{[]string{"--json", "bench", "allreduce", "-local", "3"}, []string{"--json", "bench", "allreduce"}},
		{[]string{"bench", "allreduce"}, []string{"bench", "allreduce"}},
	} {
		if got := workerArgs(test.in); !slices.Equal(got, test.want) {
			t.Errorf("workerArgs(%q) = %q, want %q", test.in, got, test.want)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("4KB, 64MB,256MiB")
	if err != nil || !slices.Equal(got, []int{4 << 10, 64 << 20, 256 << 20}) {
		t.Errorf("ParseSizes = %v, %v", got, err)
	}
	if _, err := ParseSizes("4KB,,1MB"); err == nil {
		t.Error("an empty size accepted")
	}
	for _, n := range []int{100, 4 << 10, 64 << 20, 1 << 30, 1536} {
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, FormatSize(n), back, err)
		}
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	if m := median(xs); m != 2 || xs[0] != 3 {
		t.Errorf("median(3,1,2) = %v, input now %v", m, xs)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median(4,1,3,2) = %v, want 2.5", m)
	}
}
