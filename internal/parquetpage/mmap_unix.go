//go:build unix

package parquetpage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MappedFile is a file mapped into memory for reading: a read is a copy
// from the page cache, without a system call, and release gives the pages
// already read back to the system, so that the process's resident memory
// does not grow with the file.
type MappedFile struct {
	f        *os.File
	data     []byte
	pos      int64
	released int64
}

// OpenMapped maps the file at path.
func OpenMapped(path string) (*MappedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() <= 0 || int64(int(st.Size())) != st.Size() {
		f.Close()
		return nil, errors.New("cannot map an empty or huge file")
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &MappedFile{f: f, data: data}, nil
}

// ReadAt copies from the mapping. A file truncated by someone else while
// it is mapped makes the copy fault; the fault becomes an error here
// instead of a crash of the process.
func (m *MappedFile) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 || off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("reading %s at offset %d: the file changed while mapped (%v)", m.f.Name(), off, r)
		}
	}()
	n = copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *MappedFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += m.pos
	case io.SeekEnd:
		off += int64(len(m.data))
	}
	if off < 0 {
		return 0, errors.New("seek before the start of the file")
	}
	m.pos = off
	return off, nil
}

// Release drops the mapping's pages before offset upTo from the
// process's memory (they stay in the page cache; a later read maps them
// again).
func (m *MappedFile) Release(upTo int64) {
	page := int64(os.Getpagesize())
	upTo = min(upTo, int64(len(m.data))) / page * page
	if upTo > m.released {
		unix.Madvise(m.data[m.released:upTo], unix.MADV_DONTNEED)
		m.released = upTo
	}
}

// Contains reports whether addr lies in the mapping.
func (m *MappedFile) Contains(addr uintptr) bool {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	return addr >= base && addr-base < uintptr(len(m.data))
}

// Bytes is the mapping.
func (m *MappedFile) Bytes() []byte { return m.data }

func (m *MappedFile) Close() error {
	err := unix.Munmap(m.data)
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}
