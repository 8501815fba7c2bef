package modelfile

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// Other model formats register a loader by file extension (package onnx
// registers ".onnx" in its init function), so that Load, and every
// command that loads models through it, opens them without modelfile
// importing them.
var (
	formatsMu sync.RWMutex
	formats   = map[string]func(path string) (*Model, error){}
)

// RegisterFormat makes Load call load for paths ending in ext (such as
// ".onnx"; matched case-insensitively). Registering an extension twice,
// or ".safetensors", panics.
func RegisterFormat(ext string, load func(path string) (*Model, error)) {
	ext = strings.ToLower(ext)
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if _, dup := formats[ext]; dup || ext == ".safetensors" || !strings.HasPrefix(ext, ".") || load == nil {
		panic(fmt.Sprintf("modelfile: RegisterFormat(%q): registered twice, reserved or invalid", ext))
	}
	formats[ext] = load
}

// formatLoader returns the registered loader for path's extension, or nil.
func formatLoader(path string) func(path string) (*Model, error) {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	return formats[strings.ToLower(filepath.Ext(path))]
}
