//go:build !unix

package main

import (
	"net"
	"os"
)

// listenPrivate listens on a unix socket at path and restricts it to its
// owner as far as the system allows.
func listenPrivate(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}
