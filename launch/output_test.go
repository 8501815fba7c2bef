package launch

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

func pumpString(t *testing.T, in string, prefix string, tailN int) (string, []string) {
	t.Helper()
	var out bytes.Buffer
	tail := &tailBuffer{n: tailN}
	pump(strings.NewReader(in), &lockedWriter{w: &out}, []byte(prefix), tail)
	return out.String(), tail.snapshot()
}

func TestPump(t *testing.T) {
	for _, test := range []struct {
		name, in, want string
		tail           []string
	}{
		{"empty", "", "", nil},
		{"one line", "hello\n", "[3] hello\n", []string{"hello"}},
		{"last line without newline", "a\nb", "[3] a\n[3] b\n", []string{"a", "b"}},
		{"empty lines kept", "\n\nx\n", "[3] \n[3] \n[3] x\n", []string{"", "", "x"}},
		{"carriage return is content", "a\r\n", "[3] a\r\n", []string{"a\r"}},
		{"tail keeps the last lines", "1\n2\n3\n4\n5\n", "[3] 1\n[3] 2\n[3] 3\n[3] 4\n[3] 5\n", []string{"3", "4", "5"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, tail := pumpString(t, test.in, "[3] ", 3)
			if got != test.want {
				t.Errorf("output %q, want %q", got, test.want)
			}
			if strings.Join(tail, "|") != strings.Join(test.tail, "|") {
				t.Errorf("tail %q, want %q", tail, test.tail)
			}
		})
	}
}

// A reader that returns one byte at a time must give the same lines.
func TestPumpSmallReads(t *testing.T) {
	var out bytes.Buffer
	pump(iotest.OneByteReader(strings.NewReader("ab\ncd\ne")), &lockedWriter{w: &out}, []byte("> "), nil)
	if want := "> ab\n> cd\n> e\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestPumpSplitsLongLines(t *testing.T) {
	in := strings.Repeat("x", 2*maxLineBytes+10) + "\nend\n"
	got, tail := pumpString(t, in, "[0] ", 2)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4 (3 pieces of the long line, then end)", len(lines))
	}
	for i, want := range []int{maxLineBytes, maxLineBytes, 10} {
		if len(lines[i]) != len("[0] ")+want {
			t.Errorf("piece %d has %d bytes, want %d", i, len(lines[i]), len("[0] ")+want)
		}
	}
	if lines[3] != "[0] end" {
		t.Errorf("last line %q", lines[3])
	}
	if tail[0] != strings.Repeat("x", 10) || tail[1] != "end" {
		t.Errorf("tail %q, want the last piece and end", tail)
	}
	// Lines kept for the summary are cut at maxTailLineBytes.
	_, tail = pumpString(t, strings.Repeat("y", 3*maxTailLineBytes)+"\n", "", 1)
	if len(tail) != 1 || tail[0] != strings.Repeat("y", maxTailLineBytes)+"..." {
		t.Errorf("long tail line not truncated: %d bytes", len(tail[0]))
	}
}

// Many pumps writing to one lockedWriter never interleave within a line.
func TestPumpsDoNotInterleave(t *testing.T) {
	const writers, lines = 8, 300
	var out bytes.Buffer
	dst := &lockedWriter{w: &out}
	var wg sync.WaitGroup
	for w := range writers {
		r, pw := io.Pipe()
		wg.Add(2)
		go func() {
			defer wg.Done()
			pump(r, dst, fmt.Appendf(nil, "[%d] ", w), nil)
		}()
		go func() {
			defer wg.Done()
			defer pw.Close()
			payload := strings.Repeat(string(rune('a'+w)), 200)
			for i := range lines {
				// Write each line in two pieces to tempt interleaving.
				line := fmt.Sprintf("w%d i%d %s\n", w, i, payload)
				io.WriteString(pw, line[:len(line)/2])
				io.WriteString(pw, line[len(line)/2:])
			}
		}()
	}
	wg.Wait()
	seen := make([]int, writers)
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var w, w2, i int
		var payload string
		if _, err := fmt.Sscanf(line, "[%d] w%d i%d %s", &w, &w2, &i, &payload); err != nil || w != w2 {
			t.Fatalf("mangled line %q (err %v)", line, err)
		}
		if i != seen[w] || payload != strings.Repeat(string(rune('a'+w)), 200) {
			t.Fatalf("writer %d: line %d out of order or damaged: %q", w, seen[w], line)
		}
		seen[w]++
	}
	for w, n := range seen {
		if n != lines {
			t.Errorf("writer %d: %d lines, want %d", w, n, lines)
		}
	}
}

func TestSameWriter(t *testing.T) {
	var a, b bytes.Buffer
	out, errw := outputs(&a, &a)
	if out != errw {
		t.Errorf("same writer got two locks")
	}
	out, errw = outputs(&a, &b)
	if out == errw {
		t.Errorf("different writers share one lock")
	}
	// Uncomparable writer types must not panic.
	type sliceWriter struct {
		io.Writer
		s []int
	}
	outputs(sliceWriter{Writer: &a}, sliceWriter{Writer: &a})
}

// FuzzPump: whatever a worker writes, the output is the same bytes split
// into lines, each with the prefix, nothing lost or added except a final
// newline.
func FuzzPump(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "\n\n", "a\nb", "x\r\ny\n", "\x00\xff\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		tail := &tailBuffer{n: 2}
		pump(strings.NewReader(in), &lockedWriter{w: &out}, []byte("[7] "), tail)
		got := out.String()
		if in == "" {
			if got != "" {
				t.Fatalf("empty input gave %q", got)
			}
			return
		}
		want := in
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		lines := strings.SplitAfter(got, "\n")
		lines = lines[:len(lines)-1] // after the final newline
		var rebuilt strings.Builder
		for _, l := range lines {
			if !strings.HasPrefix(l, "[7] ") {
				t.Fatalf("line %q lacks the prefix", l)
			}
			rebuilt.WriteString(strings.TrimPrefix(l, "[7] "))
		}
		if rebuilt.String() != want {
			t.Fatalf("content changed: in %q, out %q", in, got)
		}
		if len(tail.snapshot()) > 2 {
			t.Fatalf("tail grew to %d lines", len(tail.snapshot()))
		}
	})
}
