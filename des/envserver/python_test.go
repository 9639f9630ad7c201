package envserver

import (
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/coordbench/coordbench/des/coord"
	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/testenv"
)

// TestPythonEnv runs the Python package's tests (python/tests) against a
// real server on 127.0.0.1 (a random port and token): the PettingZoo- and
// Gymnasium-shaped API contract of python/coordbench_env, and the
// examples (with the CLI built, for train_linear.py's rule baseline). It
// is skipped when python3 is missing, and fails then in CI (CI set).
func TestPythonEnv(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	var tb [16]byte
	rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	root, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	// The server as des serve runs it, with the example adaptive paradigms.
	var set coord.Paradigms
	for _, f := range []string{"adaptive.yaml", "adaptive_agent.yaml", "holonic_summary.yaml"} {
		if _, err := set.AddFile(filepath.Join(root, "..", "examples", "paradigms", f)); err != nil {
			t.Fatal(err)
		}
	}
	goTool := testenv.LookPath(t, "go")
	bin := filepath.Join(t.TempDir(), "coordbench")
	if out, err := exec.Command(goTool, "build", "-o", bin, filepath.Join(root, "..", "cmd", "coordbench")).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, hs := newServer(t, Config{Token: token, Paradigms: &set, Builtins: policy.Builtins()})
	// An impatient server: its long-poll ends before most decisions are
	// ready, so creates come back without one and steps with 202.
	_, hsi := newServer(t, Config{Token: token, LongPoll: time.Microsecond})

	testenv.PythonUnittest(t, py, filepath.Join(root, "tests"), "",
		"PYTHONPATH="+root, "PYTHONDONTWRITEBYTECODE=1",
		"COORDBENCH_URL="+hs.URL, "COORDBENCH_TOKEN="+token,
		"COORDBENCH_IMPATIENT_URL="+hsi.URL, "COORDBENCH_BIN="+bin)
}
