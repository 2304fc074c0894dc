package catalog

import ()

// clipValue shortens a value shown in an error detail to 64 bytes plus
// "..." at a character boundary, as PostgreSQL's row descriptions do.
func ClipValue(v string) string {
	const maxField = 64
	if len(v) <= maxField {
		return v
	}
	n := maxField
	for n > 0 && v[n]&0xc0 == 0x80 {
		n--
	}
	return v[:n] + "..."
}
