//go:build !unix

package main

// maybeRunAsCLI: the file-size limit of fulldisk_unix_test.go is Unix's.
func maybeRunAsCLI() {}
