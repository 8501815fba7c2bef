package auth

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func handshake(t *testing.T, clientTok, serverTok string, ck, sk Kind) (cerr, serr error, claim int) {
	t.Helper()
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	dl := time.Now().Add(2 * time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		claim, serr = Server(s, []byte(serverTok), sk, dl)
		if serr != nil {
			s.Close()
		}
	}()
	cerr = Client(c, []byte(clientTok), ck, 3, dl)
	if cerr != nil {
		c.Close()
	}
	<-done
	return cerr, serr, claim
}

func TestHandshake(t *testing.T) {
	for _, test := range []struct {
		name       string
		ctok, stok string
		ck, sk     Kind
		ok         bool
	}{
		{"same token", "s3cret", "s3cret", KindPeer, KindPeer, true},
		{"wrong token", "guess", "s3cret", KindPeer, KindPeer, false},
		{"server wrong token", "s3cret", "other", KindStore, KindStore, false},
		{"kind mismatch", "s3cret", "s3cret", KindStore, KindPeer, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			cerr, serr, claim := handshake(t, test.ctok, test.stok, test.ck, test.sk)
			if test.ok {
				if cerr != nil || serr != nil || claim != 3 {
					t.Fatalf("client %v server %v claim %d", cerr, serr, claim)
				}
				return
			}
			if cerr == nil {
				t.Fatalf("client accepted: server error %v", serr)
			}
			if !errors.Is(cerr, ErrRefused) {
				t.Errorf("client error %v does not wrap ErrRefused", cerr)
			}
			if serr != nil && (strings.Contains(serr.Error(), test.stok) || strings.Contains(serr.Error(), test.ctok)) {
				t.Errorf("error leaks the token: %v", serr)
			}
		})
	}
}

// TestGarbage checks that a client speaking another protocol is refused.
func TestGarbage(t *testing.T) {
	c, s := net.Pipe()
	defer c.Close()
	go c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n0123456789"))
	_, err := Server(s, []byte("tok"), KindPeer, time.Now().Add(time.Second))
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzServer(f *testing.F) {
	f.Add([]byte("FTHM\x01\x02\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, s := net.Pipe()
		defer c.Close()
		defer s.Close()
		go func() {
			c.Write(in)
			c.Write(make([]byte, 64))
			c.Close()
		}()
		if _, err := Server(s, []byte("tok"), KindPeer, time.Now().Add(200*time.Millisecond)); err == nil {
			t.Fatalf("accepted %q without the token", in)
		}
	})
}
