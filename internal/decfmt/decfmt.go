// Package decfmt writes unsigned integers in decimal for the hot paths of
// traces and payloads, where strconv's general conversion costs several
// times more for the few digits of a time, a job or a machine number.
package decfmt

// AppendUint appends v in decimal, as strconv.AppendUint(b, v, 10) does.
func AppendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	var buf [20]byte
	i := len(buf)
	for v >= 10 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	buf[i] = byte('0' + v)
	return append(b, buf[i:]...)
}
