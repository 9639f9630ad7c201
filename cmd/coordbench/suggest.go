package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordbench/coordbench/internal/suggest"
)

// A mistyped name is an error, never a silent no-op: cobra suggests
// subcommands only for the root's arguments, and a parent command
// without a Run of its own ("des", "silo") prints its help and exits 0
// on any argument. A mistyped flag gets the closest flags of the command.

// suggestMinDistance is cobra's SuggestionsMinimumDistance for our
// commands (its own default, made explicit: SuggestionsFor reads the
// field as set).
const suggestMinDistance = 2

// refuseUnknownSubcommands makes every command under c that only groups
// subcommands refuse an argument that names none of them, with cobra's
// "did you mean" suggestions; without an argument it prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	c.SuggestionsMinimumDistance = suggestMinDistance
	if !c.HasSubCommands() || c.Runnable() || !c.HasParent() { // cobra checks the root's arguments itself
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return fmt.Errorf("unknown command %q for %q%s", args[0], cmd.CommandPath(), didYouMean(cmd.SuggestionsFor(args[0])))
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// flagSuggestion is the root's FlagErrorFunc: an unknown long flag gets
// the command's closest flags.
func flagSuggestion(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedShortnames() != "" {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	best := suggest.Closest(ne.GetSpecifiedName(), names)
	if best == nil {
		return fmt.Errorf("%w (coordbench %s --help lists the flags)", err, strings.TrimPrefix(cmd.CommandPath(), "coordbench "))
	}
	for i, b := range best {
		best[i] = "--" + b
	}
	return fmt.Errorf("%w%s", err, didYouMean(best))
}

// didYouMean is cobra's suggestion text for names, or "" for none.
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "\n\nDid you mean this?\n\t" + strings.Join(names, "\n\t")
}
