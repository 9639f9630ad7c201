// Command coordbench benchmarks how multi-agent systems coordinate.
//
// See README.md and docs/cli.md. This package only wires flags, output
// paths and exit codes, and names the flags in the library's errors
// (flagerr.go); the work lives in the library packages.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/internal/untrusted"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		// Errors quote files, endpoints and controllers: no terminal
		// control of theirs reaches the screen.
		fmt.Fprintln(os.Stderr, "coordbench:", untrusted.Printable(err.Error()))
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "coordbench",
		Short:         "Benchmark how multi-agent systems coordinate",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("coordbench {{.Version}}\n")
	// Every command prints names and text from files, models and runners
	// (a model name, an agent's message, a runner's error): its stdout
	// and stderr go through untrusted.Terminal, so that no terminal
	// control of theirs reaches the screen.
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		cmd.SetOut(untrusted.NewTerminal(cmd.OutOrStdout()))
		cmd.SetErr(untrusted.NewTerminal(cmd.ErrOrStderr()))
	}
	root.AddCommand(desCmd(), siloCmd(), llmCmd(), reportCmd(), exportCmd(), sweepCmd(), workerCmd())
	inFlagTermsAll(root)
	return root
}

// version is the module version and the VCS commit the binary was built
// from (runtime/debug.ReadBuildInfo): "v1.2.0" for a tagged install,
// "(devel) commit 1a2b3c4d5e6f (modified)" for a build from a checkout.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown: built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev != "" {
		v += " commit " + rev[:min(12, len(rev))] + modified
	}
	return v
}
