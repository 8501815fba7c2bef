package comm

import "testing"

// TestBindIP: the bind address when given, loopback for a loopback master
// (by name or address), else a local address.
func TestBindIP(t *testing.T) {
	for _, test := range []struct {
		o    Options
		want string
	}{
		{Options{BindAddr: "10.1.2.3", MasterAddr: "127.0.0.1"}, "10.1.2.3"},
		{Options{MasterAddr: "127.0.0.1", MasterPort: 29500}, "127.0.0.1"},
		{Options{MasterAddr: "localhost"}, "127.0.0.1"},
		{Options{MasterAddr: "::1"}, "127.0.0.1"},
		{Options{}, "127.0.0.1"}, // the default master
	} {
		if got, err := BindIP(test.o); err != nil || got != test.want {
			t.Errorf("BindIP(%+v) = %q, %v; want %q", test.o, got, err, test.want)
		}
	}
}
