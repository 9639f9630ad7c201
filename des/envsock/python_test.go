package envsock_test

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/envserver"
	"github.com/coordbench/coordbench/des/envsock"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/testenv"
)

// paradigms are the built-ins and the example paradigms the Python tests
// name (adaptive_agent: a mode selector; holonic_summary: summary views).
func paradigms(t *testing.T, root string) *coord.Paradigms {
	var set coord.Paradigms
	for _, f := range []string{"adaptive_agent.yaml", "holonic_summary.yaml"} {
		if _, err := set.AddFile(filepath.Join(root, "..", "examples", "paradigms", f)); err != nil {
			t.Fatal(err)
		}
	}
	return &set
}

// startSocket serves a Server on a unix socket in a temporary directory.
func startSocket(t testing.TB, cfg envsock.Config) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cbsock") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	srv, err := envsock.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ln.Close()
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return path
}

// TestPythonTransport runs python/tests/transport_socket.py against a des
// serve server (HTTP, on 127.0.0.1) and a socket server side by side: the
// two transports must give the same observations, masks, rewards, infos
// and seeds. It is skipped when python3 is missing, and fails then in CI.
func TestPythonTransport(t *testing.T) {
	runPythonTests(t, testenv.LookPath(t, "python3"), "transport_socket.py")
}

// TestPythonNumPy runs python/tests/transport_numpy.py (StepArrays.numpy,
// the dict API's float32 arrays) with a Python that imports NumPy:
// python3, or Debian's /usr/bin/python3 with python3-numpy (which .ci/run
// installs). Skipped without one, it fails then in CI.
func TestPythonNumPy(t *testing.T) {
	py := ""
	for _, cand := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(cand)
		if err == nil && exec.Command(path, "-c", "import numpy").Run() == nil {
			py = path
			break
		}
	}
	if py == "" {
		testenv.Missing(t, "no python3 that imports numpy (python3, /usr/bin/python3; Debian: apt-get install python3-numpy)")
	}
	runPythonTests(t, py, "transport_numpy.py")
}

// runPythonTests runs the Python tests of pattern (python/tests) with py,
// against a des serve server (HTTP, on 127.0.0.1) and a socket server.
func runPythonTests(t *testing.T, py, pattern string) {
	root, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	set := paradigms(t, root)
	var tb [16]byte
	rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	hsrv, err := envserver.New(envserver.Config{DataDir: t.TempDir(), Token: token, Paradigms: set, Builtins: policy.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = hsrv.HTTPServer()
	hs.Listener = hsrv.Listener(hs.Listener)
	hs.Start()
	t.Cleanup(func() { hs.Close(); hsrv.Close() })
	sock := startSocket(t, envsock.Config{Paradigms: set, Builtins: policy.Builtins()})

	testenv.PythonUnittest(t, py, filepath.Join(root, "tests"), pattern,
		"PYTHONPATH="+root, "PYTHONDONTWRITEBYTECODE=1",
		"COORDBENCH_URL="+hs.URL, "COORDBENCH_TOKEN="+token, "COORDBENCH_SOCKET="+sock)
}
