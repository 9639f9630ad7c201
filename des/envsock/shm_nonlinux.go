//go:build unix && !linux

package envsock

import "os"

// anonymousFile is a temporary file, private to its owner, removed at once
// (it lives on as long as a descriptor or mapping holds it). Its size
// cannot be sealed here: a client of the same user that truncated it
// would make the server fault, as it could kill the server anyway.
func anonymousFile() (*os.File, error) {
	f, err := os.CreateTemp("", "coordbench-envsock-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func sealSize(*os.File) error { return nil }
