//go:build !linux

package comm

import (
	"net"
	"time"
)

func tuneConn(c *net.TCPConn) {
	c.SetNoDelay(true)
	c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 2 * time.Second, Count: 3})
}
