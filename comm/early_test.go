package comm

import (
	"errors"
	"strings"
	"testing"
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
