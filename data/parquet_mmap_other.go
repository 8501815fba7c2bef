//go:build !unix

package data

import (
	"errors"
	"io"
)

// mappedFile is not available here: ParquetMatrix reads windows instead.
type mappedFile struct{ io.ReaderAt }

func openMapped(string) (*mappedFile, error) { return nil, errors.New("no memory mapping") }

func (m *mappedFile) Seek(int64, int) (int64, error) { return 0, errors.New("no memory mapping") }
func (m *mappedFile) release(int64)                  {}
func (m *mappedFile) bytes() []byte                  { return nil }
func (m *mappedFile) contains(uintptr) bool          { return false }
func (m *mappedFile) Close() error                   { return nil }
