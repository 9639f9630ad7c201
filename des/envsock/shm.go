package envsock

import "os"

// sharedReply is the fixed part of a session's step reply placed in
// memory shared with the client (OpenRequest.SharedMemory): the slots
// write their entries there in place, and a step's reply frame carries
// only the tail, so that the arrays are neither copied through the
// socket nor out of it. file is what the client maps (its descriptor
// travels with the reply to OpOpen); it and the mapping are released by
// release.
type sharedReply struct {
	file *os.File
	mem  []byte
}

// release unmaps the memory and closes the file; the client's own
// mapping stays valid until it unmaps it.
func (r *sharedReply) release() {
	if r == nil {
		return
	}
	if r.mem != nil {
		unmap(r.mem)
		r.mem = nil
	}
	if r.file != nil {
		r.file.Close()
		r.file = nil
	}
}
