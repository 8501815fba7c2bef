package onnx

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of onnx.proto (proto2) that a model of fathom's layers
// needs, with the field numbers of the ONNX IR specification. Fields this
// package does not use (training_info, functions, sparse initializers,
// subgraph attributes, ...) are skipped when decoding and never written.

// Data types of TensorProto.DataType.
const (
	TypeFloat  = 1
	TypeInt32  = 6
	TypeInt64  = 7
	TypeDouble = 11
)

// Attribute types of AttributeProto.AttributeType.
const (
	AttrFloat   = 1
	AttrInt     = 2
	AttrString  = 3
	AttrTensor  = 4
	AttrGraph   = 5
	AttrFloats  = 6
	AttrInts    = 7
	AttrStrings = 8
)

// ModelProto is an ONNX model: the graph, the operator sets it uses and
// free-form metadata.
type ModelProto struct {
	IRVersion       int64
	OpsetImport     []OperatorSetID
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	DocString       string
	Graph           *GraphProto
	MetadataProps   []StringPair
}

// OperatorSetID names an operator set (domain "" is the default ONNX set)
// and its version.
type OperatorSetID struct {
	Domain  string
	Version int64
}

// StringPair is a StringStringEntryProto (a metadata_props entry).
type StringPair struct{ Key, Value string }

// GraphProto is a computation graph: nodes in topological order, the
// constant tensors (initializers), inputs and outputs.
type GraphProto struct {
	Node        []*NodeProto
	Name        string
	Initializer []*TensorProto
	DocString   string
	Input       []*ValueInfo
	Output      []*ValueInfo
	ValueInfo   []*ValueInfo
}

// NodeProto is one operator call.
type NodeProto struct {
	Input     []string
	Output    []string
	Name      string
	OpType    string
	Domain    string
	Attribute []*AttributeProto
	DocString string
}

// AttributeProto is a named operator attribute; Type says which value is set.
type AttributeProto struct {
	Name    string
	Type    int32
	F       float32
	I       int64
	S       []byte
	T       *TensorProto
	Floats  []float32
	Ints    []int64
	Strings [][]byte
}

// TensorProto is a constant tensor. Its values are in RawData
// (little-endian) or in the typed field of its DataType.
type TensorProto struct {
	Dims       []int64
	DataType   int32
	FloatData  []float32
	Int32Data  []int32
	Int64Data  []int64
	DoubleData []float64
	Name       string
	RawData    []byte
	// External is set when the values live in another file
	// (data_location EXTERNAL), which this package does not read.
	External bool
}

// ValueInfo is a ValueInfoProto of a tensor type: the name, element type
// and shape of a graph input or output. A dim is its DimValue, or
// symbolic (DimParam, such as "batch") when DimValue is 0.
type ValueInfo struct {
	Name     string
	ElemType int32
	Shape    []Dim
	HasShape bool
}

// Dim is one dimension of a ValueInfo's shape.
type Dim struct {
	Value int64
	Param string
}

// ---------------------------------------------------------------------
// Encoding.

// Marshal encodes the model as ONNX protobuf bytes.
func (m *ModelProto) Marshal() []byte {
	var b []byte
	b = appendVarintField(b, 1, uint64(m.IRVersion))
	b = appendStringField(b, 2, m.ProducerName)
	b = appendStringField(b, 3, m.ProducerVersion)
	b = appendStringField(b, 4, m.Domain)
	if m.ModelVersion != 0 {
		b = appendVarintField(b, 5, uint64(m.ModelVersion))
	}
	b = appendStringField(b, 6, m.DocString)
	if m.Graph != nil {
		b = appendMessage(b, 7, m.Graph.marshal())
	}
	for _, o := range m.OpsetImport {
		var ob []byte
		ob = appendStringField(ob, 1, o.Domain)
		ob = appendVarintField(ob, 2, uint64(o.Version))
		b = appendMessage(b, 8, ob)
	}
	for _, p := range m.MetadataProps {
		var pb []byte
		pb = appendStringField(pb, 1, p.Key)
		pb = appendStringField(pb, 2, p.Value)
		b = appendMessage(b, 14, pb)
	}
	return b
}

func (g *GraphProto) marshal() []byte {
	var b []byte
	for _, n := range g.Node {
		b = appendMessage(b, 1, n.marshal())
	}
	b = appendStringField(b, 2, g.Name)
	for _, t := range g.Initializer {
		b = appendMessage(b, 5, t.marshal())
	}
	b = appendStringField(b, 10, g.DocString)
	for _, v := range g.Input {
		b = appendMessage(b, 11, v.marshal())
	}
	for _, v := range g.Output {
		b = appendMessage(b, 12, v.marshal())
	}
	for _, v := range g.ValueInfo {
		b = appendMessage(b, 13, v.marshal())
	}
	return b
}

func (n *NodeProto) marshal() []byte {
	var b []byte
	for _, s := range n.Input {
		b = appendBytesField(b, 1, []byte(s)) // an empty name is a skipped optional input
	}
	for _, s := range n.Output {
		b = appendBytesField(b, 2, []byte(s))
	}
	b = appendStringField(b, 3, n.Name)
	b = appendStringField(b, 4, n.OpType)
	for _, a := range n.Attribute {
		b = appendMessage(b, 5, a.marshal())
	}
	b = appendStringField(b, 6, n.DocString)
	b = appendStringField(b, 7, n.Domain)
	return b
}

func (a *AttributeProto) marshal() []byte {
	var b []byte
	b = appendStringField(b, 1, a.Name)
	switch a.Type {
	case AttrFloat:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.F))
	case AttrInt:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(a.I))
	case AttrString:
		b = appendBytesField(b, 4, a.S)
	case AttrTensor:
		b = appendMessage(b, 5, a.T.marshal())
	case AttrFloats:
		for _, f := range a.Floats {
			b = protowire.AppendTag(b, 7, protowire.Fixed32Type)
			b = protowire.AppendFixed32(b, math.Float32bits(f))
		}
	case AttrInts:
		for _, v := range a.Ints {
			b = protowire.AppendTag(b, 8, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(v))
		}
	case AttrStrings:
		for _, s := range a.Strings {
			b = appendBytesField(b, 9, s)
		}
	}
	b = protowire.AppendTag(b, 20, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(a.Type))
	return b
}

func (t *TensorProto) marshal() []byte {
	var b []byte
	for _, d := range t.Dims {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.DataType))
	for _, f := range t.FloatData {
		b = protowire.AppendTag(b, 4, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(f))
	}
	for _, v := range t.Int64Data {
		b = protowire.AppendTag(b, 7, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v))
	}
	b = appendStringField(b, 8, t.Name)
	if t.RawData != nil {
		b = appendBytesField(b, 9, t.RawData)
	}
	if t.External {
		b = appendVarintField(b, 14, 1)
	}
	return b
}

func (v *ValueInfo) marshal() []byte {
	var b []byte
	b = appendStringField(b, 1, v.Name)
	var tt []byte // TypeProto.Tensor
	tt = appendVarintField(tt, 1, uint64(v.ElemType))
	if v.HasShape {
		var sh []byte
		for _, d := range v.Shape {
			var db []byte
			if d.Param != "" {
				db = appendStringField(db, 2, d.Param)
			} else {
				db = protowire.AppendTag(db, 1, protowire.VarintType)
				db = protowire.AppendVarint(db, uint64(d.Value))
			}
			sh = appendMessage(sh, 1, db)
		}
		tt = appendMessage(tt, 2, sh)
	}
	var tp []byte
	tp = appendMessage(tp, 1, tt)
	return appendMessage(b, 2, tp)
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendStringField writes a string field unless it is empty.
func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendBytesField(b, num, []byte(s))
}

// appendVarintField writes a varint field unless it is zero.
func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// ---------------------------------------------------------------------
// Decoding.

// ErrFormat is wrapped by every error that says the bytes are not a
// well-formed ONNX protobuf message.
var ErrFormat = errors.New("not a valid ONNX protobuf file")

// Limits of the decoder: a file within them decodes in time and memory
// proportional to its size.
const (
	// MaxFileSize is the largest model file read (protobuf's own 2 GiB limit).
	MaxFileSize = 2 << 30
	maxRank     = 16
)

// Unmarshal decodes ONNX protobuf bytes. Every length is checked against
// the bytes left, so truncated or corrupted input gives an error wrapping
// ErrFormat (with the field it was in) and never allocates more than a
// small multiple of len(b).
func Unmarshal(b []byte) (*ModelProto, error) {
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%w: %d bytes is over the 2 GiB protobuf limit", ErrFormat, len(b))
	}
	m := &ModelProto{}
	err := fields(b, "ModelProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		var err error
		switch {
		case num == 1 && typ == protowire.VarintType:
			m.IRVersion = int64(v)
		case num == 2 && typ == protowire.BytesType:
			m.ProducerName = string(data)
		case num == 3 && typ == protowire.BytesType:
			m.ProducerVersion = string(data)
		case num == 4 && typ == protowire.BytesType:
			m.Domain = string(data)
		case num == 5 && typ == protowire.VarintType:
			m.ModelVersion = int64(v)
		case num == 6 && typ == protowire.BytesType:
			m.DocString = string(data)
		case num == 7 && typ == protowire.BytesType:
			m.Graph, err = unmarshalGraph(data)
		case num == 8 && typ == protowire.BytesType:
			var o OperatorSetID
			err = fields(data, "OperatorSetIdProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					o.Domain = string(data)
				case num == 2 && typ == protowire.VarintType:
					o.Version = int64(v)
				}
				return nil
			})
			m.OpsetImport = append(m.OpsetImport, o)
		case num == 14 && typ == protowire.BytesType:
			var p StringPair
			err = fields(data, "StringStringEntryProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					p.Key = string(data)
				case num == 2 && typ == protowire.BytesType:
					p.Value = string(data)
				}
				return nil
			})
			m.MetadataProps = append(m.MetadataProps, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func unmarshalGraph(b []byte) (*GraphProto, error) {
	g := &GraphProto{}
	err := fields(b, "GraphProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n, err := unmarshalNode(data)
			if err != nil {
				return err
			}
			g.Node = append(g.Node, n)
		case 2:
			g.Name = string(data)
		case 5:
			t, err := unmarshalTensor(data)
			if err != nil {
				return err
			}
			g.Initializer = append(g.Initializer, t)
		case 10:
			g.DocString = string(data)
		case 11, 12, 13:
			vi, err := unmarshalValueInfo(data)
			if err != nil {
				return err
			}
			switch num {
			case 11:
				g.Input = append(g.Input, vi)
			case 12:
				g.Output = append(g.Output, vi)
			default:
				g.ValueInfo = append(g.ValueInfo, vi)
			}
		}
		return nil
	})
	return g, err
}

func unmarshalNode(b []byte) (*NodeProto, error) {
	n := &NodeProto{}
	err := fields(b, "NodeProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n.Input = append(n.Input, string(data))
		case 2:
			n.Output = append(n.Output, string(data))
		case 3:
			n.Name = string(data)
		case 4:
			n.OpType = string(data)
		case 5:
			a, err := unmarshalAttribute(data)
			if err != nil {
				return err
			}
			n.Attribute = append(n.Attribute, a)
		case 6:
			n.DocString = string(data)
		case 7:
			n.Domain = string(data)
		}
		return nil
	})
	return n, err
}

func unmarshalAttribute(b []byte) (*AttributeProto, error) {
	a := &AttributeProto{}
	err := fields(b, "AttributeProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		var err error
		switch {
		case num == 1 && typ == protowire.BytesType:
			a.Name = string(data)
		case num == 20 && typ == protowire.VarintType:
			a.Type = int32(v)
		case num == 2 && typ == protowire.Fixed32Type:
			a.F = math.Float32frombits(uint32(v))
		case num == 3 && typ == protowire.VarintType:
			a.I = int64(v)
		case num == 4 && typ == protowire.BytesType:
			a.S = data
		case num == 5 && typ == protowire.BytesType:
			a.T, err = unmarshalTensor(data)
		case num == 7:
			a.Floats, err = appendFloats(a.Floats, typ, v, data)
		case num == 8:
			a.Ints, err = appendInts(a.Ints, typ, v, data)
		case num == 9 && typ == protowire.BytesType:
			a.Strings = append(a.Strings, data)
		}
		return err
	})
	return a, err
}

func unmarshalTensor(b []byte) (*TensorProto, error) {
	t := &TensorProto{}
	err := fields(b, "TensorProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		var err error
		switch {
		case num == 1:
			t.Dims, err = appendInts(t.Dims, typ, v, data)
			if len(t.Dims) > maxRank {
				return fmt.Errorf("%w: a tensor of rank %d (at most %d)", ErrFormat, len(t.Dims), maxRank)
			}
		case num == 2 && typ == protowire.VarintType:
			t.DataType = int32(v)
		case num == 4:
			t.FloatData, err = appendFloats(t.FloatData, typ, v, data)
		case num == 5:
			var ints []int64
			ints, err = appendInts(nil, typ, v, data)
			for _, x := range ints {
				t.Int32Data = append(t.Int32Data, int32(x))
			}
		case num == 7:
			t.Int64Data, err = appendInts(t.Int64Data, typ, v, data)
		case num == 8 && typ == protowire.BytesType:
			t.Name = string(data)
		case num == 9 && typ == protowire.BytesType:
			t.RawData = data
		case num == 10:
			t.DoubleData, err = appendDoubles(t.DoubleData, typ, v, data)
		case num == 14 && typ == protowire.VarintType:
			t.External = v == 1
		}
		return err
	})
	return t, err
}

func unmarshalValueInfo(b []byte) (*ValueInfo, error) {
	vi := &ValueInfo{}
	err := fields(b, "ValueInfoProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			vi.Name = string(data)
		case num == 2 && typ == protowire.BytesType:
			return fields(data, "TypeProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
				if num != 1 || typ != protowire.BytesType {
					return nil // sequence, map, optional types: not tensors
				}
				return fields(data, "TypeProto.Tensor", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
					switch {
					case num == 1 && typ == protowire.VarintType:
						vi.ElemType = int32(v)
					case num == 2 && typ == protowire.BytesType:
						vi.HasShape = true
						return fields(data, "TensorShapeProto", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
							if num != 1 || typ != protowire.BytesType {
								return nil
							}
							if len(vi.Shape) >= maxRank {
								return fmt.Errorf("%w: %s has more than %d dims", ErrFormat, vi.Name, maxRank)
							}
							var d Dim
							err := fields(data, "Dimension", func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
								switch {
								case num == 1 && typ == protowire.VarintType:
									d.Value = int64(v)
								case num == 2 && typ == protowire.BytesType:
									d.Param = string(data)
								}
								return nil
							})
							vi.Shape = append(vi.Shape, d)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return vi, err
}

// fields calls f for each field of message b: v is the value of a varint
// or fixed field, data the payload of a length-delimited one (a sub-slice
// of b). Groups and malformed fields are errors naming msg.
func fields(b []byte, msg string, f func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %s: bad field tag: %v", ErrFormat, msg, protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var data []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("%w: %s: field %d has unsupported wire type %d", ErrFormat, msg, num, typ)
		}
		if n < 0 {
			return fmt.Errorf("%w: %s: field %d: %v (truncated or corrupted)", ErrFormat, msg, num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, data); err != nil {
			return err
		}
	}
	return nil
}

// appendInts reads a repeated int64 field, packed or not.
func appendInts(dst []int64, typ protowire.Type, v uint64, data []byte) ([]int64, error) {
	switch typ {
	case protowire.VarintType:
		return append(dst, int64(v)), nil
	case protowire.BytesType:
		for len(data) > 0 {
			x, n := protowire.ConsumeVarint(data)
			if n < 0 {
				return nil, fmt.Errorf("%w: packed integers: %v", ErrFormat, protowire.ParseError(n))
			}
			dst = append(dst, int64(x))
			data = data[n:]
		}
		return dst, nil
	}
	return nil, fmt.Errorf("%w: integers with wire type %d", ErrFormat, typ)
}

// appendFloats reads a repeated float field, packed or not.
func appendFloats(dst []float32, typ protowire.Type, v uint64, data []byte) ([]float32, error) {
	switch typ {
	case protowire.Fixed32Type:
		return append(dst, math.Float32frombits(uint32(v))), nil
	case protowire.BytesType:
		if len(data)%4 != 0 {
			return nil, fmt.Errorf("%w: packed floats of %d bytes", ErrFormat, len(data))
		}
		for i := 0; i < len(data); i += 4 {
			x, _ := protowire.ConsumeFixed32(data[i:])
			dst = append(dst, math.Float32frombits(x))
		}
		return dst, nil
	}
	return nil, fmt.Errorf("%w: floats with wire type %d", ErrFormat, typ)
}

// appendDoubles reads a repeated double field, packed or not.
func appendDoubles(dst []float64, typ protowire.Type, v uint64, data []byte) ([]float64, error) {
	switch typ {
	case protowire.Fixed64Type:
		return append(dst, math.Float64frombits(v)), nil
	case protowire.BytesType:
		if len(data)%8 != 0 {
			return nil, fmt.Errorf("%w: packed doubles of %d bytes", ErrFormat, len(data))
		}
		for i := 0; i < len(data); i += 8 {
			x, _ := protowire.ConsumeFixed64(data[i:])
			dst = append(dst, math.Float64frombits(x))
		}
		return dst, nil
	}
	return nil, fmt.Errorf("%w: doubles with wire type %d", ErrFormat, typ)
}
