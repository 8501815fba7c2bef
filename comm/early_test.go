package comm

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestEarlyMessagesKeptInOrder: messages that arrive before their Recv is
// posted are kept, per tag in order, and handed to the Recvs that come later.
func TestEarlyMessagesKeptInOrder(t *testing.T) {
	for _, tr := range []Transport{TransportTCP, TransportSHM} {
		name := map[Transport]string{TransportTCP: "tcp", TransportSHM: "shm"}[tr]
		t.Run(name, func(t *testing.T) {
			gs := newGroups(t, 2, tr, nil)
			errs := onAll(gs, func(g *Group) error {
				if g.Rank() == 1 {
					for i := range 3 {
						if err := Send(g, []float32{float32(i), float32(10 + i)}, 0, 7); err != nil {
							return err
						}
					}
					return Send(g, []int64{42}, 0, 8)
				}
				last := make([]int64, 1)
				if err := Recv(g, last, 1, 8); err != nil { // the three tag-7 messages are kept
					return err
				}
				if last[0] != 42 {
					return errors.New("tag 8 payload wrong")
				}
				for i := range 3 {
					got := make([]float32, 2)
					if err := Recv(g, got, 1, 7); err != nil {
						return err
					}
					if got[0] != float32(i) || got[1] != float32(10+i) {
						t.Errorf("tag 7 message %d = %v, want [%d %d]", i, got, i, 10+i)
					}
				}
				return nil
			})
			mustAll(t, "send/recv", errs)
		})
	}
}

// TestEarlyMessagesBounded: a peer that sends more than MaxEarlyBytes of
// messages nobody has asked for aborts the job with ErrProtocol naming the
// peer, the tag and the option, instead of growing this process's memory.
func TestEarlyMessagesBounded(t *testing.T) {
	for _, tr := range []Transport{TransportTCP, TransportSHM} {
		name := map[Transport]string{TransportTCP: "tcp", TransportSHM: "shm"}[tr]
		t.Run(name, func(t *testing.T) {
			gs := newGroups(t, 2, tr, func(o *Options) { o.MaxEarlyBytes = 64 << 10 })
			errs := onAll(gs, func(g *Group) error {
				if g.Rank() == 1 {
					msg := make([]float32, 8<<10) // 32 KiB
					for range 3 {
						if err := Send(g, msg, 0, 7); err != nil {
							return err
						}
					}
					return nil
				}
				return Recv(g, make([]float32, 1), 1, 8) // never sent
			})
			err := errs[0]
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("rank 0: got %v, want ErrProtocol", err)
			}
			for _, want := range []string{"rank 1", "tag 7", "MaxEarlyBytes", "65536"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("rank 0 error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestEarlyHeaderDoesNotReserve: a header announcing a huge message that
// nobody has asked for, followed by a few bytes and silence, must not make
// the receiver allocate the announced size up front.
func TestEarlyHeaderDoesNotReserve(t *testing.T) {
	gs := newGroups(t, 2, TransportTCP, func(o *Options) { o.Timeout = time.Second })
	var hdr [hdrLen]byte
	putHeader(hdr[:], gs[1].linkTag(0, 7), 900<<20) // 900 MiB, under MaxEarlyBytes
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := gs[1].conns[0].Write(append(hdr[:], "a few bytes"...)); err != nil {
		t.Fatal(err)
	}
	err := Recv(gs[0], make([]float32, 1), 1, 8) // never sent: times out
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("rank 0: %v, want a timeout", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 100<<20 {
		t.Errorf("rank 0 allocated %d MiB for a header announcing 900 MiB and 11 bytes", grew>>20)
	}
}

// TestEarlyLargeMessageGrows: a kept message larger than the first chunk
// arrives whole through the growing buffer, on both transports.
func TestEarlyLargeMessageGrows(t *testing.T) {
	for _, tr := range []Transport{TransportTCP, TransportSHM} {
		name := map[Transport]string{TransportTCP: "tcp", TransportSHM: "shm"}[tr]
		t.Run(name, func(t *testing.T) {
			gs := newGroups(t, 2, tr, nil)
			const n = 3*earlyChunk/4 + 5 // bytes: 2.25 chunks of float32s plus a ragged end
			errs := onAll(gs, func(g *Group) error {
				if g.Rank() == 1 {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(i)
					}
					if err := Send(g, x, 0, 7); err != nil {
						return err
					}
					return Send(g, []int64{1}, 0, 8)
				}
				if err := Recv(g, make([]int64, 1), 1, 8); err != nil { // the tag-7 message is kept
					return err
				}
				got := make([]float32, n)
				if err := Recv(g, got, 1, 7); err != nil {
					return err
				}
				for i, v := range got {
					if v != float32(i) {
						return fmt.Errorf("element %d = %v", i, v)
					}
				}
				return nil
			})
			mustAll(t, "large early message", errs)
		})
	}
}
