package main

import (
	"errors"
	"testing"

	"github.com/fathom-ml/fathom/serve"
)

func TestParseByteSize(t *testing.T) {
	for _, test := range []struct {
		in   string
		want int64
	}{
		{"1048576", 1 << 20}, {"16MB", 16 << 20}, {"512KiB", 512 << 10}, {"2GB", 2 << 30}, {"100B", 100},
		{"", 0}, {"-1MB", 0}, {"1.5MB", 0}, {"MB", 0}, {"99999999999GB", 0},
	} {
		got, err := parseByteSize(test.in)
		if got != test.want || (test.want == 0) != (err != nil) {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", test.in, got, err, test.want)
		}
	}
}

// TestServeRefusesWideAddrWithoutToken: which addresses are loopback is
// serve's TestLoopbackAddr.
func TestServeRefusesWideAddrWithoutToken(t *testing.T) {
	err := runServe([]string{"../../modelfile/testdata/tiny.safetensors"}, nil, "0.0.0.0:0", 0, serve.Options{})
	if !errors.Is(err, serve.ErrTokenRequired) {
		t.Fatalf("serving on 0.0.0.0 without a token: %v", err)
	}
}
