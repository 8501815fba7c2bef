package tensor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Printing follows PyTorch's repr: nested brackets, one common number
// format for all shown elements, and at most 6 items per dim (the first 3
// and last 3 around "...") once a tensor has more than 1000 elements.

const (
	printThreshold = 1000
	printEdge      = 3
)

// String returns a readable rendering such as
//
//	tensor([[1.0000, 2.0000],
//	        [3.0000, 4.0000]], dtype=float32, requires_grad=true)
func (t *Tensor) String() string { return t.format(4) }

// Format implements fmt.Formatter: %v and %s print String(); a precision
// (%.2v) sets the number of decimals; %+v adds the shape and strides.
func (t *Tensor) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v', 's':
		prec, ok := f.Precision()
		if !ok {
			prec = 4
		}
		s := t.format(prec)
		if f.Flag('+') {
			s = fmt.Sprintf("%s shape=%v strides=%v offset=%d", s, t.shape, t.strides, t.offset)
		}
		fmt.Fprint(f, s)
	default:
		fmt.Fprintf(f, "%%!%c(*tensor.Tensor=%v)", verb, t.shape)
	}
}

type numFormat struct {
	kind  byte // 'i' integer, 'b' bool, 'f' fixed, 'e' scientific, 'r' float holding integers
	prec  int
	width int
}

func (nf *numFormat) text(v float64) string {
	switch nf.kind {
	case 'i':
		return strconv.FormatInt(int64(v), 10)
	case 'b':
		if v != 0 {
			return "true"
		}
		return "false"
	}
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	switch nf.kind {
	case 'r':
		return strconv.FormatFloat(v, 'f', 0, 64) + "."
	case 'e':
		return strconv.FormatFloat(v, 'e', nf.prec, 64)
	}
	return strconv.FormatFloat(v, 'f', nf.prec, 64)
}

func (t *Tensor) format(prec int) string {
	var b strings.Builder
	b.WriteString("tensor(")
	summarize := t.Numel() > printThreshold
	var shown []float64
	t.walkShown(summarize, func(v float64) { shown = append(shown, v) })
	nf := chooseFormat(t.dtype, shown, prec)
	for _, v := range shown {
		nf.width = max(nf.width, len(nf.text(v)))
	}
	switch {
	case len(t.shape) == 0:
		b.WriteString(nf.text(t.getFlat(t.offset)))
	case t.Numel() == 0:
		b.WriteString("[]")
	default:
		idx := make([]int, len(t.shape))
		t.writeDim(&b, 0, idx, summarize, &nf, len("tensor("))
	}
	if t.Numel() == 0 && len(t.shape) != 1 {
		fmt.Fprintf(&b, ", size=%v", t.shape)
	}
	fmt.Fprintf(&b, ", dtype=%v", t.dtype)
	switch {
	case t.node != nil:
		fmt.Fprintf(&b, ", grad_fn=%s", t.node.op)
	case t.requiresGrad:
		b.WriteString(", requires_grad=true")
	}
	b.WriteString(")")
	return b.String()
}

// shownIndices returns the indices of a dim of size n that are printed.
func shownIndices(n int, summarize bool) (head, tail int) {
	if summarize && n > 2*printEdge {
		return printEdge, printEdge
	}
	return n, 0
}

// walkShown calls fn for every printed element.
func (t *Tensor) walkShown(summarize bool, fn func(float64)) {
	if t.Numel() == 0 {
		return
	}
	var rec func(d, off int)
	rec = func(d, off int) {
		if d == len(t.shape) {
			fn(t.getFlat(off))
			return
		}
		head, tail := shownIndices(t.shape[d], summarize)
		for i := 0; i < head; i++ {
			rec(d+1, off+i*t.strides[d])
		}
		for i := t.shape[d] - tail; i < t.shape[d]; i++ {
			rec(d+1, off+i*t.strides[d])
		}
	}
	rec(0, t.offset)
}

func chooseFormat(dt DType, vals []float64, prec int) numFormat {
	switch {
	case dt == Bool:
		return numFormat{kind: 'b'}
	case !dt.IsFloat():
		return numFormat{kind: 'i'}
	}
	allInt := true
	maxAbs, minAbs := 0.0, math.Inf(1)
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		a := math.Abs(v)
		if v != math.Trunc(v) {
			allInt = false
		}
		maxAbs = max(maxAbs, a)
		if a > 0 {
			minAbs = min(minAbs, a)
		}
	}
	switch {
	case allInt && maxAbs < 1e8:
		return numFormat{kind: 'r'}
	case maxAbs >= 1e8 || (minAbs < 1e-4 && minAbs > 0) || (minAbs > 0 && maxAbs/minAbs > 1000):
		return numFormat{kind: 'e', prec: prec}
	}
	return numFormat{kind: 'f', prec: prec}
}

func (t *Tensor) writeDim(b *strings.Builder, d int, idx []int, summarize bool, nf *numFormat, indent int) {
	b.WriteByte('[')
	n := t.shape[d]
	head, tail := shownIndices(n, summarize)
	last := d == len(t.shape)-1
	sep := func() {
		if last {
			b.WriteString(", ")
			return
		}
		b.WriteString(",")
		b.WriteString(strings.Repeat("\n", len(t.shape)-1-d))
		b.WriteString(strings.Repeat(" ", indent+d+1))
	}
	first := true
	item := func(i int) {
		if !first {
			sep()
		}
		first = false
		idx[d] = i
		if last {
			off := t.offset
			for k, v := range idx {
				off += v * t.strides[k]
			}
			s := nf.text(t.getFlat(off))
			b.WriteString(strings.Repeat(" ", nf.width-len(s)))
			b.WriteString(s)
			return
		}
		t.writeDim(b, d+1, idx, summarize, nf, indent)
	}
	for i := 0; i < head; i++ {
		item(i)
	}
	if tail > 0 {
		sep()
		b.WriteString("...")
		for i := n - tail; i < n; i++ {
			item(i)
		}
	}
	b.WriteByte(']')
}
