package main

import (
	"net"
	"os"
	"path/filepath"
)

// listenPrivate listens on a unix socket at path that only its owner may
// connect to. The socket is made inside a fresh directory of mode 0700
// beside path, given mode 0600 there (nobody else can reach it yet), then
// linked to path: no window in which it is open to others, and no
// process-wide umask change.
func listenPrivate(path string) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".cbsock-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // its name moves to path; the caller removes it
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	// A link, not a rename: like a direct listen, it fails when path exists.
	if err := os.Link(tmp, path); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}
