//go:build !linux

package comm

import "errors"

// Window is memory every rank of a group on one host maps (Linux only;
// see window_linux.go). Elsewhere NewWindow always returns ErrNoWindow.
type Window struct{}

// ErrNoWindow is returned by NewWindow for a group whose ranks do not all
// share memory.
var ErrNoWindow = errors.New("comm: shared-memory windows need Linux")

// NewWindow returns ErrNoWindow: shared memory is Linux-only.
func NewWindow(g *Group, n int) (*Window, error) { return nil, ErrNoWindow }

// Part returns rank r's buffer.
func (w *Window) Part(r int) []float32 { return nil }

// Barrier returns once every rank has called it as many times.
func (w *Window) Barrier() error { return ErrNoWindow }

// SumChunk sums this rank's chunk of [off, off+n) over the ranks.
func (w *Window) SumChunk(off, n int) {}

// Close unmaps the window.
func (w *Window) Close() {}
