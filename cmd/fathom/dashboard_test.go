package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDashboardTakesAddress(t *testing.T) {
	for _, test := range []struct {
		flag     string
		args     []string
		wantAddr string
		wantArgs []string
	}{
		{"", []string{"a.yaml"}, "", []string{"a.yaml"}},
		{dashboardAuto, []string{"a.yaml"}, dashboardAuto, []string{"a.yaml"}},
		{dashboardAuto, []string{"a.yaml", "127.0.0.1:8080"}, "127.0.0.1:8080", []string{"a.yaml"}},
		{dashboardAuto, []string{"a.yaml", ":9000"}, ":9000", []string{"a.yaml"}},
		{dashboardAuto, []string{"a.yaml", "b.yaml"}, dashboardAuto, []string{"a.yaml", "b.yaml"}},
		{"0.0.0.0:80", []string{"a.yaml", ":9000"}, "0.0.0.0:80", []string{"a.yaml", ":9000"}},
		{"", []string{"a.yaml", ":9000"}, "", []string{"a.yaml", ":9000"}},
	} {
		f := dashboardFlags{addr: test.flag}
		got := f.takeAddress(slices.Clone(test.args), 1)
		if f.addr != test.wantAddr || !slices.Equal(got, test.wantArgs) {
			t.Errorf("--dashboard=%q %v: address %q, args %v; want %q, %v", test.flag, test.args, f.addr, got, test.wantAddr, test.wantArgs)
		}
	}
}

func TestDashboardStart(t *testing.T) {
	t.Setenv(dashboardTokenEnv, "")
	t.Setenv("FATHOM_JOB_TOKEN", "")
	var log bytes.Buffer

	// Off, and off on ranks other than 0.
	if srv, err := (&dashboardFlags{}).start(&log); srv != nil || err != nil {
		t.Errorf("no flag: %v, %v", srv, err)
	}
	t.Setenv("RANK", "1")
	t.Setenv("WORLD_SIZE", "2")
	if srv, err := (&dashboardFlags{addr: dashboardAuto}).start(&log); srv != nil || err != nil {
		t.Errorf("rank 1: %v, %v; want no server", srv, err)
	}
	t.Setenv("RANK", "0")
	srv, err := (&dashboardFlags{addr: dashboardAuto}).start(&log)
	if err != nil || srv == nil {
		t.Fatalf("rank 0: %v, %v", srv, err)
	}
	srv.Close()
	if !strings.HasPrefix(log.String(), "dashboard: http://127.0.0.1:") {
		t.Errorf("stderr %q: want the URL", log.String())
	}

	// Beyond loopback: a token is required, and not shown.
	if _, err := (&dashboardFlags{addr: "0.0.0.0:0"}).start(&log); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("every interface without a token: %v", err)
	}
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("from-a-file\n"), 0o600)
	for _, f := range []dashboardFlags{{addr: "0.0.0.0:0", tokenFile: file}, {addr: "0.0.0.0:0"}} {
		if f.tokenFile == "" {
			t.Setenv(dashboardTokenEnv, "from-the-env")
		}
		log.Reset()
		srv, err := f.start(&log)
		if err != nil {
			t.Fatal(err)
		}
		srv.Close()
		if !strings.Contains(log.String(), "token required") || strings.Contains(log.String(), "from-") {
			t.Errorf("stderr %q: want a note that a token is required, without the token", log.String())
		}
	}
	if _, err := (&dashboardFlags{addr: "0.0.0.0:0", tokenFile: filepath.Join(t.TempDir(), "none")}).start(&log); err == nil {
		t.Error("a missing token file: no error")
	}
}

// TestTrainWithDashboard: `fathom train --dashboard` prints the page's
// address and trains as without it.
func TestTrainWithDashboard(t *testing.T) {
	var log bytes.Buffer
	out, err := captureStdout(t, true, func() error {
		return runTrainDashboard(context.Background(), "../../examples/iris.yaml",
			[]string{"epochs=2", "output.dir=" + t.TempDir()}, true, dashboardFlags{addr: dashboardAuto}, &log)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(log.String(), "dashboard: http://127.0.0.1:") {
		t.Errorf("stderr %q: want the URL first", log.String())
	}
	if m := lastJSON(t, out); m["epochs"] != 2.0 {
		t.Errorf("final line %v", m)
	}
}
