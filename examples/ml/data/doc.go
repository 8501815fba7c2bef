// Package data holds the small synthetic data sets of the examples/ml
// configs; generate.go writes them deterministically.
package data

//go:generate go run generate.go
