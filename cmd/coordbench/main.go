// Command coordbench benchmarks how multi-agent systems coordinate.
//
// See README.md and docs/cli.md. This package only wires flags, output
// paths and exit codes, and names the flags in the library's errors
// (flagerr.go); the work lives in the library packages.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "coordbench:", err)
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "coordbench",
		Short:         "Benchmark how multi-agent systems coordinate",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(desCmd(), siloCmd(), llmCmd())
	inFlagTermsAll(root)
	return root
}
