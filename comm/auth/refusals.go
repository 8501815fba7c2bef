package auth

import (
	"log/slog"
	"sync"
	"time"
)

// RefusalLog logs refused connections without letting a flood of strangers
// flood the log: in each window (a minute) the first Burst refusals get a
// warning line each; the rest are counted, and one summary line reports
// how many were not logged when the window ends. Safe for concurrent use.
type RefusalLog struct {
	log    *slog.Logger
	burst  int
	window time.Duration
	what   string // "fathom store", "fathom comm": the summary's prefix

	mu         sync.Mutex
	start      time.Time // of the current window
	logged     int       // refusals logged in the window
	suppressed int       // refusals counted but not logged in the window
	timer      *time.Timer
	stopped    bool
}

// Default rate of RefusalLog: warnings per window.
const (
	RefusalBurst  = 10
	RefusalWindow = time.Minute
)

// NewRefusalLog returns a RefusalLog writing to logger (nil:
// slog.Default()) at the default rate; what prefixes its summary lines.
func NewRefusalLog(logger *slog.Logger, what string) *RefusalLog {
	return newRefusalLog(logger, what, RefusalBurst, RefusalWindow)
}

func newRefusalLog(logger *slog.Logger, what string, burst int, window time.Duration) *RefusalLog {
	if logger == nil {
		logger = slog.Default()
	}
	return &RefusalLog{log: logger, burst: burst, window: window, what: what}
}

// Warn logs msg with args as a warning, unless Burst refusals were logged
// in the current window already; then it only counts it.
func (r *RefusalLog) Warn(msg string, args ...any) {
	r.mu.Lock()
	now := time.Now()
	if r.start.IsZero() || now.Sub(r.start) >= r.window {
		r.flushLocked()
		r.start = now
	}
	if r.logged >= r.burst {
		r.suppressed++
		if r.timer == nil && !r.stopped {
			r.timer = time.AfterFunc(r.window-now.Sub(r.start), r.flush)
		}
		r.mu.Unlock()
		return
	}
	r.logged++
	r.mu.Unlock()
	r.log.Warn(msg, args...)
}

func (r *RefusalLog) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timer = nil
	r.flushLocked()
	r.start = time.Time{}
}

// flushLocked writes the summary of the window if refusals were suppressed
// and resets the counts. The caller holds mu.
func (r *RefusalLog) flushLocked() {
	if r.suppressed > 0 {
		r.log.Warn(r.what+": more connections refused and not logged individually",
			"count", r.suppressed, "window", r.window.String())
	}
	r.logged, r.suppressed = 0, 0
}

// Stop writes the pending summary, if any, and stops the timer.
func (r *RefusalLog) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	r.flushLocked()
}
