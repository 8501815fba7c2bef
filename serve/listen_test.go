package serve

import "testing"

func TestLoopbackAddr(t *testing.T) {
	for _, test := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true}, {"localhost:1", true}, {"[::1]:80", true},
		{":8080", false}, {"0.0.0.0:8080", false}, {"192.0.2.1:80", false}, {"example.com:80", false}, {"bad", false},
	} {
		if got := loopbackAddr(test.addr); got != test.ok {
			t.Errorf("loopbackAddr(%q) = %v", test.addr, got)
		}
	}
}
