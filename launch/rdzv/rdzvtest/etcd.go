// Package rdzvtest starts a real, single-member etcd server for tests of the
// elastic rendezvous: Debian's etcd-server (/usr/bin/etcd) on loopback, on
// free ports, with its data in the test's temporary directory, killed when
// the test ends.
package rdzvtest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Binary is the etcd server the tests start.
const Binary = "/usr/bin/etcd"

// startTimeout bounds how long Start waits for the server to serve.
const startTimeout = 20 * time.Second

// Start starts etcd and returns its client endpoint ("127.0.0.1:PORT"). It
// skips the test when Binary is absent (install Debian's etcd-server).
func Start(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Skipf("no etcd server at %s (apt-get install etcd-server): %v", Binary, err)
	}
	dir := t.TempDir()
	client, peer := freePort(t), freePort(t)
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Binary,
		"--name", "test",
		"--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", clientURL,
		"--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "test="+peerURL,
		"--log-level", "warn",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", Binary, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		logf.Close()
	})
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exited:
			t.Fatalf("etcd exited at start:\n%s", readLog(logf.Name()))
		default:
		}
		if resp, err := hc.Get(clientURL + "/health"); err == nil {
			ok := resp.StatusCode == http.StatusOK
			resp.Body.Close()
			if ok {
				return fmt.Sprintf("127.0.0.1:%d", client)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not become healthy within %v:\n%s", startTimeout, readLog(logf.Name()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	s := string(b)
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}
