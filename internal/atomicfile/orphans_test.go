package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPID is above Linux's largest possible process id (2^22), so no
// process has it.
const deadPID = 1 << 30

func TestWriteRemovesOrphans(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	tmp := func(suffix string) string { return tempPrefix("out.txt") + suffix }
	host := hostTag()
	old := time.Now().Add(-48 * time.Hour)
	files := []struct {
		name   string
		old    bool // modified two days ago
		remove bool
	}{
		{tmp(strconv.Itoa(deadPID) + "-" + host + "-abc123"), false, true},                // killed writer on this host
		{tmp(strconv.Itoa(os.Getppid()) + "-" + host + "-abc123"), true, false},           // live writer (our parent)
		{tmp(strconv.Itoa(os.Getpid()) + "-" + host + "-abc124"), true, false},            // this process: maybe another goroutine
		{tmp(strconv.Itoa(deadPID) + "-0badf00d-abc123"), true, false},                    // another host's
		{tmp("2bq9x1k7a"), true, true},                                                    // older form, two days old
		{tmp("2bq9x1k7b"), false, false},                                                  // older form, fresh
		{tmp("notes.txt"), true, false},                                                   // not our pattern
		{"." + "other.txt.tmp-" + strconv.Itoa(deadPID) + "-" + host + "-a", true, false}, // another destination
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.old {
			os.Chtimes(p, old, old)
		}
	}
	if err := WriteBytes(path, []byte("done")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var have []string
	for _, e := range entries {
		have = append(have, e.Name())
	}
	for _, f := range files {
		if got := slices.Contains(have, f.name); got == f.remove {
			t.Errorf("%s: present %v, want removed %v", f.name, got, f.remove)
		}
	}
	if !slices.Contains(have, "out.txt") || len(have) != 1+len(files)-2 {
		t.Errorf("directory holds %v", have)
	}
}

func TestTempNameHasPID(t *testing.T) {
	dir := t.TempDir()
	f, err := createTemp(dir, "x.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := tempPrefix("x.bin") + strconv.Itoa(os.Getpid()) + "-" + hostTag() + "-"
	if name := filepath.Base(f.Name()); !strings.HasPrefix(name, want) || isOrphan(f.Name(), strings.TrimPrefix(name, tempPrefix("x.bin"))) {
		t.Fatalf("temp %s: want prefix %s and not an orphan", name, want)
	}
}

func TestWritePanicRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	func() {
		defer func() { recover() }()
		Write(filepath.Join(dir, "out.txt"), func(io.Writer) error { panic("boom") })
	}()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("temporary file left behind after a panic: %v", entries)
	}
}
