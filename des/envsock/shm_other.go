//go:build !unix

package envsock

import (
	"errors"
	"os"
)

func newSharedReply(int) (*sharedReply, error) {
	return nil, errors.New("shared memory is not supported on this platform")
}

func unmap([]byte) {}

func rightsOf(*os.File) []byte { return nil }
