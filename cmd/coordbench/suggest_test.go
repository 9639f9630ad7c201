package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// A mistyped subcommand fails with cobra's suggestions at every level (a
// parent without a run of its own printed its help and exited 0), and a
// mistyped flag gets the closest flag of its command.
func TestMistypedNamesFailWithSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"des", "suit"}, "unknown command \"suit\" for \"coordbench des\"\n\nDid you mean this?\n\tsuite"},
		{[]string{"silo", "rn"}, "unknown command \"rn\" for \"coordbench silo\"\n\nDid you mean this?\n\trun"},
		{[]string{"sweep", "stauts", "x"}, "Did you mean this?\n\tstatus"},
		{[]string{"sil"}, "unknown command \"sil\" for \"coordbench\"\n\nDid you mean this?\n\tsilo"},
		{[]string{"des", "frobnicate"}, "unknown command \"frobnicate\" for \"coordbench des\""},
		{[]string{"des", "run", "--controler", "rule"}, "unknown flag: --controler\n\nDid you mean this?\n\t--controller"},
		{[]string{"silo", "suite", "--protocol", "p2p"}, "unknown flag: --protocol\n\nDid you mean this?\n\t--protocols"},
		{[]string{"des", "run", "--zzzzzzzz"}, "unknown flag: --zzzzzzzz (coordbench des run --help lists the flags)"},
	} {
		out, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q\n%s", tc.args, err, tc.want, out)
		}
	}
	// A parent alone still prints its help and succeeds.
	if out, err := run(t, "des"); err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("des: %v\n%s", err, out)
	}
	// The built binary exits 1, the suggestion on stderr.
	cmd := exec.Command(coordbenchBinary(t), "des", "suit")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "Did you mean this?\n\tsuite") {
		t.Errorf("coordbench des suit: %v\n%s", err, stderr.String())
	}
}
