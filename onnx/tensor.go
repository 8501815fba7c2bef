package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
)

// maxElems bounds the elements of one constant tensor: 2^31 floats are
// already more than a 2 GiB file can hold.
const maxElems = 1 << 31

// constant is a decoded constant tensor (an initializer or a Constant
// node's value) as float64 values, with its shape.
type constant struct {
	shape []int
	vals  []float64
}

// numel returns the element count of dims, or an error when a dim is
// negative or the count exceeds maxElems.
func numel(dims []int64) (int, error) {
	n := 1.0
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("negative dim in %v", dims)
		}
		n *= float64(d)
	}
	if n > maxElems {
		return 0, fmt.Errorf("shape %v holds %.0f values, more than the %d allowed", dims, n, maxElems)
	}
	return int(n), nil
}

// decodeTensor reads t's values. The declared shape must match the data
// it carries, so a huge declared shape with little data fails before
// anything is allocated.
func decodeTensor(t *TensorProto) (*constant, error) {
	if t.External {
		return nil, fmt.Errorf("tensor %q keeps its data in an external file, which is not supported (save the model with its weights inside)", t.Name)
	}
	n, err := numel(t.Dims)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	c := &constant{shape: make([]int, len(t.Dims))}
	for i, d := range t.Dims {
		c.shape[i] = int(d)
	}
	have := func(got int) error {
		if got != n {
			return fmt.Errorf("tensor %q declares shape %v (%d values) but holds %d", t.Name, t.Dims, n, got)
		}
		return nil
	}
	if t.RawData != nil {
		size := map[int32]int{TypeFloat: 4, TypeDouble: 8, TypeInt32: 4, TypeInt64: 8}[t.DataType]
		if size == 0 {
			return nil, fmt.Errorf("tensor %q has data type %d (supported: float, double, int32, int64)", t.Name, t.DataType)
		}
		if len(t.RawData)%size != 0 {
			return nil, fmt.Errorf("tensor %q: %d raw bytes is not a whole number of %d-byte values", t.Name, len(t.RawData), size)
		}
		if err := have(len(t.RawData) / size); err != nil {
			return nil, err
		}
		c.vals = make([]float64, n)
		raw := t.RawData
		for i := range c.vals {
			switch t.DataType {
			case TypeFloat:
				c.vals[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
			case TypeDouble:
				c.vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			case TypeInt32:
				c.vals[i] = float64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
			case TypeInt64:
				c.vals[i] = float64(int64(binary.LittleEndian.Uint64(raw[8*i:])))
			}
		}
		return c, nil
	}
	switch t.DataType {
	case TypeFloat:
		if err := have(len(t.FloatData)); err != nil {
			return nil, err
		}
		c.vals = make([]float64, n)
		for i, v := range t.FloatData {
			c.vals[i] = float64(v)
		}
	case TypeDouble:
		if err := have(len(t.DoubleData)); err != nil {
			return nil, err
		}
		c.vals = append([]float64(nil), t.DoubleData...)
	case TypeInt32:
		if err := have(len(t.Int32Data)); err != nil {
			return nil, err
		}
		c.vals = make([]float64, n)
		for i, v := range t.Int32Data {
			c.vals[i] = float64(v)
		}
	case TypeInt64:
		if err := have(len(t.Int64Data)); err != nil {
			return nil, err
		}
		c.vals = make([]float64, n)
		for i, v := range t.Int64Data {
			c.vals[i] = float64(v)
		}
	default:
		return nil, fmt.Errorf("tensor %q has data type %d (supported: float, double, int32, int64)", t.Name, t.DataType)
	}
	return c, nil
}

// floatTensor returns a float32 TensorProto of the given shape with the
// values as raw little-endian bytes.
func floatTensor(name string, vals []float32, shape ...int) *TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	t := &TensorProto{Name: name, DataType: TypeFloat, RawData: raw}
	for _, d := range shape {
		t.Dims = append(t.Dims, int64(d))
	}
	return t
}

// intTensor returns an int64 TensorProto of the given shape.
func intTensor(name string, vals []int64, shape ...int) *TensorProto {
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	t := &TensorProto{Name: name, DataType: TypeInt64, RawData: raw}
	for _, d := range shape {
		t.Dims = append(t.Dims, int64(d))
	}
	return t
}

// Attribute helpers.

func attrInt(name string, v int64) *AttributeProto {
	return &AttributeProto{Name: name, Type: AttrInt, I: v}
}

func attrFloat(name string, v float32) *AttributeProto {
	return &AttributeProto{Name: name, Type: AttrFloat, F: v}
}

func attrInts(name string, v ...int) *AttributeProto {
	a := &AttributeProto{Name: name, Type: AttrInts}
	for _, x := range v {
		a.Ints = append(a.Ints, int64(x))
	}
	return a
}

// attr returns n's attribute called name, or nil.
func (n *NodeProto) attr(name string) *AttributeProto {
	for _, a := range n.Attribute {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// intAttr returns an INT attribute's value or def when absent.
func (n *NodeProto) intAttr(name string, def int64) int64 {
	if a := n.attr(name); a != nil {
		return a.I
	}
	return def
}

// floatAttr returns a FLOAT attribute's value or def when absent.
func (n *NodeProto) floatAttr(name string, def float64) float64 {
	if a := n.attr(name); a != nil {
		return float64(a.F)
	}
	return def
}

// intsAttr returns an INTS attribute's values or nil when absent.
func (n *NodeProto) intsAttr(name string) []int64 {
	if a := n.attr(name); a != nil {
		return a.Ints
	}
	return nil
}

// stringAttr returns a STRING attribute's value or def when absent.
func (n *NodeProto) stringAttr(name, def string) string {
	if a := n.attr(name); a != nil {
		return string(a.S)
	}
	return def
}
