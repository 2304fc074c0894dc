package catalog

import (
	"encoding/binary"
	"math/bits"

	"lockd/sql/types"
)

// Hash partitioning puts a row where PostgreSQL would: the partition key
// values are hashed with each type's extended hash support function
// (hashint4extended, hashtextextended, ...) seeded with
// HASH_PARTITION_SEED, the per-column hashes are folded with
// hash_combine64, NULLs are skipped, and the row goes to the partition
// whose (modulus, remainder) satisfies hash % modulus == remainder
// (compute_partition_hash_value and get_partition_for_tuple in
// PostgreSQL's partbounds.c / execPartition.c). The functions below are
// Bob Jenkins' lookup3 mix as PostgreSQL's hashfn.c applies it to 32-bit
// words and byte strings on a little-endian machine, written from the
// algorithm's description; parthash_test.go checks them against the
// partitions a real PostgreSQL 15 chose.

// hashPartitionSeed is HASH_PARTITION_SEED (partition.h).
const hashPartitionSeed uint64 = 0x7A5B22367996DCFD

func rot32(x uint32, k int) uint32 { return bits.RotateLeft32(x, k) }

// jenkinsMix is lookup3's mix().
func jenkinsMix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= rot32(c, 4)
	c += b
	b -= a
	b ^= rot32(a, 6)
	a += c
	c -= b
	c ^= rot32(b, 8)
	b += a
	a -= c
	a ^= rot32(c, 16)
	c += b
	b -= a
	b ^= rot32(a, 19)
	a += c
	c -= b
	c ^= rot32(b, 4)
	b += a
	return a, b, c
}

// jenkinsFinal is lookup3's final().
func jenkinsFinal(a, b, c uint32) (uint32, uint32, uint32) {
	c ^= b
	c -= rot32(b, 14)
	a ^= c
	a -= rot32(c, 11)
	b ^= a
	b -= rot32(a, 25)
	c ^= b
	c -= rot32(b, 16)
	a ^= c
	a -= rot32(c, 4)
	b ^= a
	b -= rot32(a, 14)
	c ^= b
	c -= rot32(b, 24)
	return a, b, c
}

// hashUint32Extended is hash_uint32_extended.
func hashUint32Extended(k uint32, seed uint64) uint64 {
	a := uint32(0x9e3779b9) + 4 + 3923095
	b, c := a, a
	if seed != 0 {
		a += uint32(seed >> 32)
		b += uint32(seed)
		a, b, c = jenkinsMix(a, b, c)
	}
	a += k
	_, b, c = jenkinsFinal(a, b, c)
	return uint64(b)<<32 | uint64(c)
}

// hashBytesExtended is hash_bytes_extended (hash_any_extended) for a
// little-endian machine.
func hashBytesExtended(k []byte, seed uint64) uint64 {
	n := uint32(len(k))
	a := uint32(0x9e3779b9) + n + 3923095
	b, c := a, a
	if seed != 0 {
		a += uint32(seed >> 32)
		b += uint32(seed)
		a, b, c = jenkinsMix(a, b, c)
	}
	for len(k) >= 12 {
		a += binary.LittleEndian.Uint32(k)
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		a, b, c = jenkinsMix(a, b, c)
		k = k[12:]
	}
	// The last 0..11 bytes: bytes 0-3 go into a, 4-7 into b and 8-10 into
	// the upper three bytes of c (its low byte is left to the length).
	for i := len(k) - 1; i >= 0; i-- {
		v := uint32(k[i])
		switch {
		case i >= 8:
			c += v << (8 * (i - 7))
		case i >= 4:
			b += v << (8 * (i - 4))
		default:
			a += v << (8 * i)
		}
	}
	_, b, c = jenkinsFinal(a, b, c)
	return uint64(b)<<32 | uint64(c)
}

// hashCombine64 is hash_combine64.
func hashCombine64(a, b uint64) uint64 {
	a ^= b + 0x49a0f4dd15e5a8e3 + (a << 54) + (a >> 7)
	return a
}

// hashableKeyType reports whether lockd can hash a partition key of type
// t the way PostgreSQL does.
func HashableKeyType(t types.Type) bool {
	switch t.OID {
	case types.OIDBool, types.OIDInt2, types.OIDInt4, types.OIDInt8, types.OIDText, types.OIDVarchar, types.OIDBpchar, types.OIDName,
		types.OIDDate, types.OIDTimestamp, types.OIDTimestamptz:
		return true
	}
	return false
}

// extendedHash is the type's extended hash support function applied to a
// non-NULL value.
func extendedHash(t types.Type, d types.Datum, seed uint64) uint64 {
	switch t.OID {
	case types.OIDBool: // hashcharextended
		return hashUint32Extended(uint32(d.I), seed)
	case types.OIDInt2, types.OIDInt4, types.OIDDate: // hashint2extended, hashint4extended (date_ops uses it too)
		return hashUint32Extended(uint32(int32(d.I)), seed)
	case types.OIDInt8:
		return hashInt8Extended(d.I, seed)
	case types.OIDTimestamp, types.OIDTimestamptz: // timestamp_hash_extended = hashint8extended of PostgreSQL's int64
		return hashInt8Extended(d.I-types.PgEpochMicros, seed)
	case types.OIDBpchar: // hashbpcharextended ignores trailing blanks
		return hashBytesExtended([]byte(types.TrimBlanks(d.S)), seed)
	}
	// hashtextextended (text, varchar, name under a deterministic collation)
	return hashBytesExtended([]byte(d.S), seed)
}

// hashInt8Extended is hashint8extended: it folds the high half into the low
// one so that int2, int4 and int8 values that are equal hash alike.
func hashInt8Extended(v int64, seed uint64) uint64 {
	lo := uint32(v)
	hi := uint32(v >> 32)
	if v >= 0 {
		lo ^= hi
	} else {
		lo ^= ^hi
	}
	return hashUint32Extended(lo, seed)
}

// partitionHash is compute_partition_hash_value: the row hash of the key
// values, NULLs skipped.
func PartitionHash(types []types.Type, vals []types.Datum) uint64 {
	var h uint64
	for i, v := range vals {
		if v.Null {
			continue
		}
		h = hashCombine64(h, extendedHash(types[i], v, hashPartitionSeed))
	}
	return h
}
