//go:build !unix

package parquetpage

import (
	"errors"
	"io"
)

// MappedFile is not available here: OpenMapped fails and readers read the file instead.
type MappedFile struct{ io.ReaderAt }

func OpenMapped(string) (*MappedFile, error) { return nil, errors.New("no memory mapping") }

func (m *MappedFile) Seek(int64, int) (int64, error) { return 0, errors.New("no memory mapping") }
func (m *MappedFile) Release(int64)                  {}
func (m *MappedFile) Bytes() []byte                  { return nil }
func (m *MappedFile) Contains(uintptr) bool          { return false }
func (m *MappedFile) Close() error                   { return nil }
