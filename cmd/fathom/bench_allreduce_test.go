package main

import "testing"

func TestArParseSize(t *testing.T) {
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
		got, err := arParseSize(test.in)
		if (err == nil) != test.ok || got != test.want {
			t.Errorf("arParseSize(%q) = %d, %v; want %d (ok=%v)", test.in, got, err, test.want, test.ok)
		}
	}
}
