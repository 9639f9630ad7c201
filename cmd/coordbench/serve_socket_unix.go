//go:build unix

package main

import (
	"net"
	"syscall"
)

// listenPrivate listens on a unix socket at path that only its owner may
// connect to: the socket is born with mode 0600 (the umask is narrowed
// while it is made, at start-up, before any other file is created).
func listenPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
