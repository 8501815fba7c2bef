package comm

import (
	"net"
	"syscall"
	"time"
)

// peerTimeout bounds how long sent data may stay unacknowledged
// (TCP_USER_TIMEOUT) before the kernel drops the connection: a peer that is
// cut off (cable pulled, host frozen) then surfaces as a lost peer within
// seconds instead of after the kernel's ~15 minutes of retransmissions.
const peerTimeout = 10 * time.Second

func tuneConn(c *net.TCPConn) {
	c.SetNoDelay(true)
	c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 2 * time.Second, Count: 3})
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			const tcpUserTimeout = 0x12 // TCP_USER_TIMEOUT, linux/tcp.h
			syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(peerTimeout/time.Millisecond))
		})
	}
}
