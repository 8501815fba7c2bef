// Package atomicfile writes files so that readers never see a partial one:
// the content goes to a temporary file in the same directory, which is
// synced and renamed over the destination. Files are created with mode
// 0644 less the umask. Every output and checkpoint of
// fathom is written through it.
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
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Write creates or replaces path with what write writes. On any error the
// temporary file is removed, path is left as it was, and the error names
// path.
func Write(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
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
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
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
