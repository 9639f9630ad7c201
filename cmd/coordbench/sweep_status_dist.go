package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/coordbench/coordbench/sweep/jetstream"
)

// distStatus prints DIR's distributed sweep status, if it has one.
func distStatus(w io.Writer, dir string) (bool, error) {
	st, err := jetstream.ReadStatus(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fmt.Fprint(w, st.String())
	return true, nil
}
