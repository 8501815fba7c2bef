// Package atomicfile writes files so that readers never see a partial one:
// the content goes to a temporary file in the same directory, which is
// synced and renamed over the destination. Files are created with mode
// 0644 less the umask. Every output and checkpoint of
// fathom is written through it.
//
// The temporary file of path dir/base is dir/.base.tmp-PID-HOST-RANDOM (the
// writer's process id, a hash of its host name, a random suffix). It is
// removed on every error path, a panic of the write function included. A
// writer killed mid-write leaves it behind; the next Write of the same
// path removes such orphans: those whose host is this one and whose
// process is gone (a live writer's file, or another host's, is never
// touched), and those of the older name form .base.tmp-RANDOM, which
// carry no process id, once a day old.
//
//	err := atomicfile.Write("out/metrics.csv", func(w io.Writer) error {
//		_, err := io.WriteString(w, "epoch,loss\n")
//		return err
//	})
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Write creates or replaces path with what write writes. On any error the
// temporary file is removed, path is left as it was, and the error names
// path.
func Write(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeOrphans(dir, base)
	tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	renamed := false
	defer func() {
		if !renamed { // an error, or a panic in write
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	renamed = true
	// Make the rename durable; not every file system can sync a directory,
	// so a failure here is not reported.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Mode is the permission of the files Write creates, before the umask:
// outputs are for others to read, as files a shell redirection creates.
const Mode os.FileMode = 0o644

// createTemp creates a new temporary file for base in dir with Mode
// (os.CreateTemp would make it 0600, and the rename would keep that).
func createTemp(dir, base string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, tempPrefix(base)+strconv.Itoa(os.Getpid())+"-"+hostTag()+"-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, Mode)
		if os.IsExist(err) {
			continue
		}
		return f, err
	}
	return nil, errors.New("cannot create a temporary file")
}

// WriteBytes is Write for content already in memory.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// tempPrefix is the start of every temporary file name for base.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// hostTag is 8 hex digits of a hash of the host name, so that a writer on
// one host never takes another host's temporary file (on a shared file
// system) for an orphan.
var hostTag = sync.OnceValue(func() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
})

// legacyOrphanAge is how old a temporary file of the older name form (no
// process id) must be before removeOrphans takes it for an orphan.
const legacyOrphanAge = 24 * time.Hour

// removeOrphans removes the temporary files for base in dir that writers
// killed mid-write left behind: this host's whose process is gone, and
// those of the older name form once legacyOrphanAge old. Errors are
// ignored: a file it cannot remove costs only disk space.
func removeOrphans(dir, base string) {
	prefix := tempPrefix(base)
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(prefix)+"*"))
	for _, m := range matches {
		if isOrphan(m, strings.TrimPrefix(filepath.Base(m), prefix)) {
			os.Remove(m)
		}
	}
}

// isOrphan decides from the part of a temporary file's name after its
// prefix whether its writer is gone.
func isOrphan(path, suffix string) bool {
	fields := strings.Split(suffix, "-")
	switch len(fields) {
	case 3: // PID-HOST-RANDOM
		pid, err := strconv.Atoi(fields[0])
		if err != nil || pid <= 0 || fields[1] != hostTag() || !isBase36(fields[2]) {
			return false
		}
		return pid != os.Getpid() && !processAlive(pid)
	case 1: // RANDOM, the older form
		if !isBase36(fields[0]) {
			return false
		}
		st, err := os.Lstat(path)
		return err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > legacyOrphanAge
	}
	return false
}

func isBase36(s string) bool {
	if s == "" {
		return false
	}
	_, err := strconv.ParseUint(s, 36, 64)
	return err == nil
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
