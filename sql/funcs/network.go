package funcs

import (
	"net"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// networkFuncs are the inet functions (PostgreSQL's utils/adt/network.c):
// the connection's addresses and ports, and the parts of an inet value.
var networkFuncs = map[string][]Builtin{
	"inet_client_addr": {{Result: fixed(types.TypeInet), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return addrInet(ec.B.ClientAddr), nil
	}}},
	"inet_server_addr": {{Result: fixed(types.TypeInet), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return addrInet(ec.B.ServerAddr), nil
	}}},
	"inet_client_port": {{Result: fixed(types.TypeInt4), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return addrPort(ec.B.ClientAddr), nil
	}}},
	"inet_server_port": {{Result: fixed(types.TypeInt4), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return addrPort(ec.B.ServerAddr), nil
	}}},
	"host": {{args: []types.Type{types.TypeInet}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.TextDatum(types.InetHost(a[0])), nil
	}}},
	"masklen": {{args: []types.Type{types.TypeInet}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.IntDatum(types.InetMasklen(a[0])), nil
	}}},
	"family": {{args: []types.Type{types.TypeInet}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.IntDatum(types.InetFamily(a[0])), nil
	}}},
	"abbrev": {{args: []types.Type{types.TypeInet}, Result: fixed(types.TypeText), Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.TextDatum(string(types.AppendText(nil, types.TypeInet, a[0], nil))), nil
	}}},
}

// addrInet is a connection end's address as inet; NULL when it is not
// an IP connection (PostgreSQL: a Unix-domain socket).
func addrInet(a net.Addr) types.Datum {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return types.NullDatum
	}
	return types.MakeInet(ta.AddrPort().Addr().Unmap())
}

func addrPort(a net.Addr) types.Datum {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return types.NullDatum
	}
	return types.IntDatum(int64(ta.Port))
}
