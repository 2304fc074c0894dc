package sql

import (
	"lockd/pgerr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// AppendValue appends the wire encoding of a non-NULL d of type t in the
// given format (0 text, 1 binary) for this session.
func (s *Session) AppendValue(buf []byte, t types.Type, d types.Datum, format int16) ([]byte, error) {
	if format == 0 {
		return types.AppendText(buf, t, d, &s.Format), nil
	}
	return types.AppendBinary(buf, t, d)
}

// BindParams converts the client's parameter values for st, the
// prepared statement named name ("" for the unnamed one). formats
// follows the Bind message rules: none = all text, one = applies to all.
func (s *Session) BindParams(st *plan.Stmt, name string, values [][]byte, formats []int16) ([]types.Datum, error) {
	// the checks in the order of PostgreSQL's exec_bind_message
	if len(formats) > 1 && len(formats) != len(values) {
		return nil, pgerr.New(pgerr.ProtocolViolation, "bind message has %d parameter formats but %d parameters", len(formats), len(values))
	}
	if len(values) != len(st.Params) {
		return nil, pgerr.New(pgerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement \"%s\" requires %d", len(values), name, len(st.Params))
	}
	out := s.spareParams
	s.spareParams = nil
	if cap(out) < len(values) {
		out = make([]types.Datum, len(values))
	}
	out = out[:len(values)]
	for i, v := range values {
		if v == nil {
			out[i] = types.NullDatum
			continue
		}
		f := int16(0)
		if len(formats) == 1 {
			f = formats[0]
		} else if len(formats) > 1 {
			f = formats[i]
		}
		t := st.Params[i]
		var err error
		if f == 0 || isText(t) {
			// a parameter's text, and a text value's binary form, come in
			// the client's encoding (pg_client_to_server)
			err = types.VerifyUTF8Bytes(v)
		}
		if err == nil && f == 0 {
			out[i], err = types.ParseText(t, string(v), &s.Format)
		} else if err == nil {
			out[i], err = types.DecodeBinary(t, v)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// isText reports whether t's binary form is its text (textrecv and the
// types that share it).
func isText(t types.Type) bool {
	switch t.OID {
	case types.OIDText, types.OIDVarchar, types.OIDBpchar, types.OIDName:
		return true
	}
	return false
}
