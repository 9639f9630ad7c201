package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestListenPrivate: the socket at path has mode 0600 and accepts its
// owner; an existing file at path is refused, never replaced; nothing is
// left beside it.
func TestListenPrivate(t *testing.T) {
	dir, err := os.MkdirTemp("", "cbl") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s")
	ln, err := listenPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, mode %v; want a socket of mode 0600", path, err, fi.Mode())
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.Close()
	if _, err := listenPrivate(path); err == nil {
		t.Fatal("a second listen replaced the socket at path")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left beside the socket: %v", ents)
	}
}
