package auth

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRefusalLogRateLimited: a flood of refusals gives Burst lines, then one
// summary with the count of the rest when the window ends.
func TestRefusalLogRateLimited(t *testing.T) {
	var buf lockedBuf
	r := newRefusalLog(slog.New(slog.NewTextHandler(&buf, nil)), "fathom test", 3, 200*time.Millisecond)
	defer r.Stop()
	for range 50 {
		r.Warn("fathom test: refused connection", "remote", "10.0.0.9:1234")
	}
	if n := strings.Count(buf.String(), "refused connection"); n != 3 {
		t.Errorf("%d lines logged during the flood, want 3:\n%s", n, buf.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "count=47") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(buf.String(), "not logged individually\" count=47") {
		t.Errorf("no summary of the 47 refusals not logged:\n%s", buf.String())
	}
	// a new window logs again
	r.Warn("fathom test: refused connection", "remote", "10.0.0.9:1235")
	if !strings.Contains(buf.String(), "1235") {
		t.Errorf("refusal in a new window not logged:\n%s", buf.String())
	}
}

// TestRefusalLogStopFlushes: Stop writes the summary still pending.
func TestRefusalLogStopFlushes(t *testing.T) {
	var buf lockedBuf
	r := newRefusalLog(slog.New(slog.NewTextHandler(&buf, nil)), "fathom test", 1, time.Hour)
	for range 5 {
		r.Warn("fathom test: refused connection")
	}
	r.Stop()
	if !strings.Contains(buf.String(), "count=4") {
		t.Errorf("summary not written by Stop:\n%s", buf.String())
	}
}
