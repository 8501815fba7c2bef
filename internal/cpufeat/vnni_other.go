//go:build purego || !amd64

package cpufeat

const hasVNNI = false
