//go:build !purego

package kernel

import "github.com/fathom-ml/fathom/internal/cpufeat"

//go:generate sh -c "cd _asm && go run . -gen gram -out ../gram_amd64.s -stubs ../gram_stubs_amd64.go -pkg kernel"

// haveGramAsm says whether the AVX-512 kernels of gram_amd64.s can run here.
var haveGramAsm = cpufeat.Has(cpufeat.AVX512)

// gramAsm runs the kernel for row stride ld (8 or 16): explicit when wa is
// nil (weights 1 and val), else weighted. a holds GramRows(ld)·ld values, b ld.
func gramAsm(ld int, y []float64, idx []int32, val []float32, wa, wb, a, b []float64) {
	switch {
	case ld == 8 && wa == nil:
		gramE8AVX512(y, idx, val, a, b)
	case ld == 8:
		gramW8AVX512(y, idx, wa, wb, a, b)
	case wa == nil:
		gramE16AVX512(y, idx, val, a, b)
	default:
		gramW16AVX512(y, idx, wa, wb, a, b)
	}
}
