package launch

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"sync"
)

// maxLineBytes bounds the memory one output line may take; a longer line is
// emitted as several prefixed lines of at most this many bytes.
const maxLineBytes = 1 << 20

// maxTailLineBytes bounds each stderr line kept for the failure summary.
const maxTailLineBytes = 512

// lockedWriter serializes whole lines from many workers onto one writer, so
// lines never interleave. Write errors (a closed terminal, a full disk) are
// remembered but do not stop the pumps: a worker whose output cannot be
// written must still not block on a full pipe.
type lockedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// writeLine writes prefix, line and a newline (if line lacks one) with a
// single Write call.
func (lw *lockedWriter) writeLine(buf *[]byte, prefix, line []byte) {
	b := append((*buf)[:0], prefix...)
	b = append(b, line...)
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	*buf = b
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if _, err := lw.w.Write(b); err != nil && lw.err == nil {
		lw.err = err
	}
}

// Write writes p as is, under the lock (used for the launcher's own
// messages, which are whole lines).
func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

// outputs returns the lockedWriters for stdout and stderr, sharing one lock
// when both are the same writer (so lines cannot interleave there either).
func outputs(stdout, stderr io.Writer) (out, errw *lockedWriter) {
	out = &lockedWriter{w: stdout}
	if sameWriter(stdout, stderr) {
		return out, out
	}
	return out, &lockedWriter{w: stderr}
}

func sameWriter(a, b io.Writer) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta != nil && ta.Comparable() && a == b
}

// tailBuffer keeps the last n lines written to it.
type tailBuffer struct {
	mu    sync.Mutex
	n     int
	lines []string
}

func (t *tailBuffer) add(line []byte) {
	if t == nil || t.n <= 0 {
		return
	}
	if len(line) > 0 && line[len(line)-1] == '\n' {
		line = line[:len(line)-1]
	}
	if len(line) > maxTailLineBytes {
		line = append(line[:maxTailLineBytes:maxTailLineBytes], "..."...)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == t.n {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:t.n-1]
	}
	t.lines = append(t.lines, string(line))
}

func (t *tailBuffer) snapshot() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// pump copies r to dst line by line, each line prefixed, until r ends or
// fails (EOF, or the read end is closed by the drain timeout). A last line
// without a newline gets one. Lines also go to tail when it is not nil.
func pump(r io.Reader, dst *lockedWriter, prefix []byte, tail *tailBuffer) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line, buf []byte
	emit := func() {
		if len(line) == 0 {
			return
		}
		dst.writeLine(&buf, prefix, line)
		tail.add(line)
		line = line[:0]
	}
	for {
		chunk, err := br.ReadSlice('\n')
		for len(chunk) > 0 {
			// Split over-long lines so one line's memory stays bounded.
			room := maxLineBytes - len(line)
			take := min(room, len(chunk))
			line = append(line, chunk[:take]...)
			chunk = chunk[take:]
			if len(line) == maxLineBytes || line[len(line)-1] == '\n' {
				emit()
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			emit()
			return
		}
	}
}
