package ps

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// The protocol between a worker and a server, one TCP connection each
// (authenticated with the job token, comm/auth.KindPS). A frame is a
// 24-byte header — op (uint32), n (uint32), step (int64), lr (float64
// bits), little-endian — and n payload elements: float32s, or bytes for
// opError.
//
//	worker → server   opInit   values of the server's segments (worker 0, once)
//	                  opPush   step t's gradient of the segments, the step's learning rate
//	                  opPull   ask for the parameters to compute step t with
//	                  opDone   this worker has finished
//	                  opState  ask for the optimizer state (worker 0, between two steps)
//	                  opLoadState  n bytes: the optimizer state to restore (worker 0, after opInit)
//	server → worker   opParams the parameters (the answer to opPull)
//	                  opStateData  n bytes: the optimizer state (the answer to opState)
//	                  opError  the job failed: n bytes of message
//
// A state travels as the gob encoding of a ServerState.
const (
	opInit uint32 = iota + 1
	opPush
	opPull
	opDone
	opParams
	opError
	opState
	opStateData
	opLoadState
)

const headerLen = 24

// maxErrorBytes bounds an error frame's message.
const maxErrorBytes = 1 << 16

type header struct {
	op   uint32
	n    int
	step int64
	lr   float64
}

func opName(op uint32) string {
	switch op {
	case opInit:
		return "init"
	case opPush:
		return "push"
	case opPull:
		return "pull"
	case opDone:
		return "done"
	case opParams:
		return "params"
	case opError:
		return "error"
	case opState:
		return "state"
	case opStateData:
		return "state data"
	case opLoadState:
		return "load state"
	}
	return fmt.Sprintf("op %d", op)
}

// writeFrame writes a header and payload (float32s) with one Write.
func writeFrame(w io.Writer, buf *[]byte, h header, payload []float32) error {
	b := (*buf)[:0]
	b = binary.LittleEndian.AppendUint32(b, h.op)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint64(b, uint64(h.step))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h.lr))
	for _, v := range payload {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	*buf = b
	_, err := w.Write(b)
	return err
}

// writeError writes an opError frame carrying msg.
func writeError(w io.Writer, msg string) error {
	if len(msg) > maxErrorBytes {
		msg = msg[:maxErrorBytes]
	}
	b := appendHeader(nil, opError, len(msg))
	b = append(b, msg...)
	_, err := w.Write(b)
	return err
}

// appendHeader appends the header of a frame of op carrying n bytes
// (step and learning rate zero).
func appendHeader(b []byte, op uint32, n int) []byte {
	b = binary.LittleEndian.AppendUint32(b, op)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	return append(b, make([]byte, 16)...)
}

// readHeader reads one frame's header.
func readHeader(r io.Reader) (header, error) {
	var b [headerLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return header{}, err
	}
	return header{
		op:   binary.LittleEndian.Uint32(b[0:]),
		n:    int(binary.LittleEndian.Uint32(b[4:])),
		step: int64(binary.LittleEndian.Uint64(b[8:])),
		lr:   math.Float64frombits(binary.LittleEndian.Uint64(b[16:])),
	}, nil
}

// readFloats reads len(dst) float32s of a payload into dst.
func readFloats(r io.Reader, buf *[]byte, dst []float32) error {
	n := 4 * len(dst)
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}

// readError reads an opError frame's message of n bytes.
func readError(r io.Reader, n int) string {
	if n > maxErrorBytes {
		return fmt.Sprintf("(an error message of %d bytes)", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Sprintf("(an error message cut short: %v)", err)
	}
	return string(b)
}
