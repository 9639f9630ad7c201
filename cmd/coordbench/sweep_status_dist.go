package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/coordbench/coordbench/sweep/dist"
)

func sweepStatusDistCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status DIR",
		Short: "Report a sweep's progress: cases pending, running, done, failed, dead-lettered",
		Long: `Print the progress of the sweep in DIR. For a distributed sweep (sweep
serve, whose coordinator rewrites DIR/dist_status.json as results come
in): its state and how many cases are pending, running on a worker, done,
failed and dead-lettered, naming the failed and dead-lettered ones.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			found, err := distStatus(cmd.OutOrStdout(), args[0])
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("%s holds no distributed sweep (no %s)", args[0], dist.StatusFile)
			}
			return nil
		},
	}
}

// distStatus prints DIR's distributed sweep status, if it has one.
func distStatus(w io.Writer, dir string) (bool, error) {
	st, err := dist.ReadStatus(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fmt.Fprint(w, st.String())
	return true, nil
}
