package jetstream

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/coordbench/coordbench/internal/opterr"
)

// Embedded is a nats-server with JetStream run inside the coordinator.
type Embedded struct {
	srv *server.Server
}

// StartEmbedded starts a nats-server with JetStream listening on listen
// (host:port; port 0 picks a free one), keeping its streams in storeDir.
// Bind it to loopback unless workers on other machines must reach it:
// it has no authentication. A bad listen is an *opterr.Error of option
// "listen".
func StartEmbedded(listen, storeDir string) (*Embedded, error) {
	host, ps, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, opterr.New("listen", "%q: want host:port, e.g. 127.0.0.1:4222", listen)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return nil, opterr.New("listen", "%q: want a port from 0 to 65535", listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: "coordbench-sweep",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   storeDir,
		MaxPayload: 2 * MaxSpecSize, // the spec, in the key-value bucket
		NoSigs:     true,
		NoLog:      true,
		HTTPPort:   0,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("nats-server: not ready after 30s (is the port in use?)")
	}
	return &Embedded{srv: srv}, nil
}

// URL is the server's client URL, e.g. nats://127.0.0.1:4222.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Close shuts the server down and waits until it has.
func (e *Embedded) Close() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
