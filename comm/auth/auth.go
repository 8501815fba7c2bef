// Package auth is the challenge-response handshake every fathom connection
// (worker to worker, worker to rendezvous store) runs before any data flows.
//
// Both sides prove they know the job token without sending it: the client
// sends a fresh 32-byte nonce and its rank claim, the server answers with its
// own nonce and HMAC-SHA256(token, "fathom-server" | both nonces | claim), the
// client checks that tag and answers with HMAC-SHA256(token, "fathom-client" |
// both nonces | claim). Tags are compared in constant time (hmac.Equal). The
// role labels stop a reflection attack (replaying the server's own tag), the
// nonces stop replays, and binding the rank claim into the tags means a
// man in the middle cannot change it.
//
// The protocol (all integers little-endian):
//
//	client → server: "FTHM" | version u8 | kind u8 | claim i32 | nonceC [32]
//	server → client: nonceS [32] | tagS [32]
//	client → server: tagC [32]
//	server → client: ok u8 (1 = accepted)
package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Kind says what a connection is for, so a store client cannot be mistaken
// for a worker peer.
type Kind uint8

const (
	KindStore Kind = 1 // a client of the rendezvous store
	KindPeer  Kind = 2 // a worker-to-worker link
	KindPS    Kind = 3 // a worker's link to a parameter server (package ps)
)

const (
	magic     = "FTHM"
	version   = 1
	nonceLen  = 32
	helloLen  = 4 + 1 + 1 + 4 + nonceLen
	tagLen    = sha256.Size
	okByte    = 1
	refuseTag = 0
)

// ErrRefused is returned (wrapped) when the other side does not prove it
// knows the token, or speaks another protocol.
var ErrRefused = errors.New("authentication refused")

func mac(token []byte, label string, nc, ns []byte, kind Kind, claim int32) []byte {
	h := hmac.New(sha256.New, token)
	h.Write([]byte(label))
	h.Write(nc)
	h.Write(ns)
	var b [5]byte
	b[0] = byte(kind)
	binary.LittleEndian.PutUint32(b[1:], uint32(claim))
	h.Write(b[:])
	return h.Sum(nil)
}

// Client runs the client side of the handshake on conn, claiming rank claim
// for a connection of the given kind. The deadline bounds the whole exchange.
func Client(conn net.Conn, token []byte, kind Kind, claim int, deadline time.Time) error {
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	defer conn.SetDeadline(time.Time{})
	hello := make([]byte, helloLen)
	copy(hello, magic)
	hello[4] = version
	hello[5] = byte(kind)
	binary.LittleEndian.PutUint32(hello[6:], uint32(int32(claim)))
	nc := hello[10:]
	if _, err := rand.Read(nc); err != nil {
		return err
	}
	if _, err := conn.Write(hello); err != nil {
		return fmt.Errorf("auth: send hello to %s: %w", conn.RemoteAddr(), err)
	}
	resp := make([]byte, nonceLen+tagLen)
	if _, err := io.ReadFull(conn, resp); err != nil {
		return fmt.Errorf("auth: %s closed the handshake (wrong job token, or not a fathom %s?): %w: %v",
			conn.RemoteAddr(), kindName(kind), ErrRefused, err)
	}
	ns, tagS := resp[:nonceLen], resp[nonceLen:]
	if !hmac.Equal(tagS, mac(token, "fathom-server", nc, ns, kind, int32(claim))) {
		return fmt.Errorf("auth: %s does not know the job token: %w", conn.RemoteAddr(), ErrRefused)
	}
	if _, err := conn.Write(mac(token, "fathom-client", nc, ns, kind, int32(claim))); err != nil {
		return fmt.Errorf("auth: send tag to %s: %w", conn.RemoteAddr(), err)
	}
	var ok [1]byte
	if _, err := io.ReadFull(conn, ok[:]); err != nil || ok[0] != okByte {
		return fmt.Errorf("auth: %s refused us: %w", conn.RemoteAddr(), ErrRefused)
	}
	return nil
}

// Server runs the server side of the handshake and returns the client's rank
// claim. On any failure it returns an error wrapping ErrRefused that names
// the remote address and the claim (never the token); the caller logs it and
// closes conn.
func Server(conn net.Conn, token []byte, kind Kind, deadline time.Time) (claim int, err error) {
	if err := conn.SetDeadline(deadline); err != nil {
		return -1, err
	}
	defer conn.SetDeadline(time.Time{})
	hello := make([]byte, helloLen)
	if _, err := io.ReadFull(conn, hello); err != nil {
		return -1, fmt.Errorf("auth: incomplete hello from %s: %w: %v", conn.RemoteAddr(), ErrRefused, err)
	}
	claim = int(int32(binary.LittleEndian.Uint32(hello[6:])))
	if string(hello[:4]) != magic || hello[4] != version {
		return claim, fmt.Errorf("auth: %s (rank claim %d) speaks another protocol: %w", conn.RemoteAddr(), claim, ErrRefused)
	}
	if Kind(hello[5]) != kind {
		return claim, fmt.Errorf("auth: %s (rank claim %d) connected as a %s to a %s port: %w",
			conn.RemoteAddr(), claim, kindName(Kind(hello[5])), kindName(kind), ErrRefused)
	}
	nc := hello[10:]
	ns := make([]byte, nonceLen)
	if _, err := rand.Read(ns); err != nil {
		return claim, err
	}
	resp := append(ns, mac(token, "fathom-server", nc, ns, kind, int32(claim))...)
	if _, err := conn.Write(resp); err != nil {
		return claim, fmt.Errorf("auth: reply to %s (rank claim %d): %w", conn.RemoteAddr(), claim, err)
	}
	tagC := make([]byte, tagLen)
	if _, err := io.ReadFull(conn, tagC); err != nil {
		return claim, fmt.Errorf("auth: %s (rank claim %d) gave no answer to the challenge: %w: %v",
			conn.RemoteAddr(), claim, ErrRefused, err)
	}
	if !hmac.Equal(tagC, mac(token, "fathom-client", nc, ns, kind, int32(claim))) {
		conn.Write([]byte{refuseTag})
		return claim, fmt.Errorf("auth: %s (rank claim %d) does not know the job token: %w", conn.RemoteAddr(), claim, ErrRefused)
	}
	if _, err := conn.Write([]byte{okByte}); err != nil {
		return claim, err
	}
	return claim, nil
}

func kindName(k Kind) string {
	switch k {
	case KindStore:
		return "store client"
	case KindPeer:
		return "worker peer"
	case KindPS:
		return "parameter-server client"
	}
	return fmt.Sprintf("kind-%d", k)
}
