package types

import (
	"net/netip"
	"strconv"
	"strings"

	"lockd/pgerr"
)

// The inet type (PostgreSQL's utils/adt/network.c): an IPv4 or IPv6 host
// address with an optional netmask length. Datum.S holds it as
// "address/bits" with the address in its canonical form, so equal values
// have equal texts; inet_out leaves the "/bits" off when it is the whole
// address, text(inet) keeps it.

// ParseInet is inet_in.
func ParseInet(s string) (Datum, error) {
	p, ok := parseInetPrefix(strings.TrimSpace(s))
	if !ok {
		return Datum{}, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type inet: \"%s\"", s)
	}
	return TextDatum(p.String()), nil
}

func parseInetPrefix(s string) (netip.Prefix, bool) {
	addr, bitsText, masked := strings.Cut(s, "/")
	if masked && !strings.Contains(addr, ":") {
		// IPv4 with a mask may leave trailing octets out: 10/8
		if n := strings.Count(addr, "."); n < 3 && addr != "" {
			addr += strings.Repeat(".0", 3-n)
		}
	}
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	bits := a.BitLen()
	if masked {
		n, err := strconv.Atoi(bitsText)
		if err != nil || n < 0 || n > a.BitLen() || bitsText == "" || bitsText[0] == '+' {
			return netip.Prefix{}, false
		}
		bits = n
	}
	return netip.PrefixFrom(a, bits), true
}

// MakeInet is the inet value of an address with its full mask ("" for
// an address that is not IP).
func MakeInet(a netip.Addr) Datum {
	a = a.WithZone("")
	return TextDatum(netip.PrefixFrom(a, a.BitLen()).String())
}

func inetPrefix(d Datum) netip.Prefix {
	p, _ := netip.ParsePrefix(d.S)
	return p
}

// appendInet is inet_out: the address, and its mask length unless the
// mask is the whole address.
func appendInet(buf []byte, d Datum) []byte {
	p := inetPrefix(d)
	if p.Bits() == p.Addr().BitLen() {
		return p.Addr().AppendTo(buf)
	}
	return append(buf, d.S...)
}

// InetText is text(inet): the address and its mask length always.
func InetText(d Datum) string { return d.S }

// InetHost is host(inet): the address alone.
func InetHost(d Datum) string { return inetPrefix(d).Addr().String() }

// InetMasklen is masklen(inet).
func InetMasklen(d Datum) int64 { return int64(inetPrefix(d).Bits()) }

// InetFamily is family(inet): 4 or 6.
func InetFamily(d Datum) int64 {
	if inetPrefix(d).Addr().Is4() {
		return 4
	}
	return 6
}

// cmpInet is network_cmp: IPv4 before IPv6; then the network parts over
// the shorter mask; then the mask lengths; then the whole addresses.
func cmpInet(a, b Datum) int {
	pa, pb := inetPrefix(a), inetPrefix(b)
	aa, ab := pa.Addr(), pb.Addr()
	if aa.Is4() != ab.Is4() {
		if aa.Is4() {
			return -1
		}
		return 1
	}
	if c := bitnCmp(aa.AsSlice(), ab.AsSlice(), min(pa.Bits(), pb.Bits())); c != 0 {
		return c
	}
	if c := cmpInt(int64(pa.Bits()), int64(pb.Bits())); c != 0 {
		return c
	}
	return bitnCmp(aa.AsSlice(), ab.AsSlice(), aa.BitLen())
}

// bitnCmp compares the first n bits of a and b.
func bitnCmp(a, b []byte, n int) int {
	for i := 0; n > 0; i++ {
		x, y := a[i], b[i]
		if n < 8 {
			mask := byte(0xff << (8 - n))
			x, y = x&mask, y&mask
		}
		if x != y {
			return cmpInt(int64(x), int64(y))
		}
		n -= 8
	}
	return 0
}

// PostgreSQL's address family codes on the wire (utils/inet.h).
const (
	pgsqlAfInet  = 2
	pgsqlAfInet6 = 3
)

// appendInetBinary is inet_send: family, bits, is_cidr, address length,
// address bytes.
func appendInetBinary(buf []byte, d Datum) []byte {
	p := inetPrefix(d)
	fam := byte(pgsqlAfInet)
	if !p.Addr().Is4() {
		fam = pgsqlAfInet6
	}
	b := p.Addr().AsSlice()
	buf = append(buf, fam, byte(p.Bits()), 0, byte(len(b)))
	return append(buf, b...)
}

// decodeInetBinary is inet_recv.
func decodeInetBinary(b []byte) (Datum, error) {
	bad := pgerr.New(pgerr.InvalidBinaryRepresentation, "invalid length in external \"inet\" value")
	if len(b) < 4 {
		return Datum{}, bad
	}
	var a netip.Addr
	switch {
	case b[0] == pgsqlAfInet && b[3] == 4 && len(b) == 8:
		a = netip.AddrFrom4([4]byte(b[4:8]))
	case b[0] == pgsqlAfInet6 && b[3] == 16 && len(b) == 20:
		a = netip.AddrFrom16([16]byte(b[4:20]))
	default:
		return Datum{}, bad
	}
	if int(b[1]) > a.BitLen() {
		return Datum{}, pgerr.New(pgerr.InvalidBinaryRepresentation, "invalid bits in external \"inet\" value")
	}
	return TextDatum(netip.PrefixFrom(a, int(b[1])).String()), nil
}
