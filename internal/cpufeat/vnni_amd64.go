//go:build !purego

package cpufeat

import "golang.org/x/sys/cpu"

var hasVNNI = hasAVX512 && cpu.X86.HasAVX512VNNI
