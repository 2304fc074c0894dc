package types

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"lockd/pgerr"
)

// numeric is an exact decimal: coef × 10^-scale. scale is the display
// scale (PostgreSQL's dscale), so 1.50 keeps its trailing zero.
type Numeric struct {
	Coef  big.Int
	scale int32
}

var errBadNumeric = errors.New("sql: invalid numeric")

func ParseNumeric(s string) (*Numeric, error) {
	if s == "" {
		return nil, errBadNumeric
	}
	n := &Numeric{}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return nil, errBadNumeric
		}
		exp = e
		s = s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return nil, errBadNumeric
	}
	digits := intPart + frac
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return nil, errBadNumeric
		}
	}
	if _, ok := n.Coef.SetString(digits, 10); !ok {
		return nil, errBadNumeric
	}
	scale := len(frac) - exp
	if scale < 0 {
		n.Coef.Mul(&n.Coef, pow10(-scale))
		scale = 0
	}
	n.scale = int32(scale)
	if neg {
		n.Coef.Neg(&n.Coef)
	}
	return n, nil
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

func NumericFromInt(i int64) *Numeric {
	n := &Numeric{}
	n.Coef.SetInt64(i)
	return n
}

func numericFromFloat(f float64) (*Numeric, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, pgerr.NotSupported("numeric NaN and infinity are not supported")
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	return ParseNumeric(s)
}

func (n *Numeric) String() string {
	s := n.Coef.String()
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if n.scale > 0 {
		sc := int(n.scale)
		if len(s) <= sc {
			s = strings.Repeat("0", sc-len(s)+1) + s
		}
		s = s[:len(s)-sc] + "." + s[len(s)-sc:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// rescale returns coef adjusted to scale s (s >= n.scale).
func (n *Numeric) coefAt(s int32) *big.Int {
	if s == n.scale {
		return new(big.Int).Set(&n.Coef)
	}
	return new(big.Int).Mul(&n.Coef, pow10(int(s-n.scale)))
}

func maxScale(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func (a *Numeric) Add(b *Numeric) *Numeric {
	s := maxScale(a.scale, b.scale)
	r := &Numeric{scale: s}
	r.Coef.Add(a.coefAt(s), b.coefAt(s))
	return r
}

func (a *Numeric) Sub(b *Numeric) *Numeric {
	s := maxScale(a.scale, b.scale)
	r := &Numeric{scale: s}
	r.Coef.Sub(a.coefAt(s), b.coefAt(s))
	return r
}

func (a *Numeric) Mul(b *Numeric) *Numeric {
	r := &Numeric{scale: a.scale + b.scale}
	r.Coef.Mul(&a.Coef, &b.Coef)
	return r
}

func (a *Numeric) Cmp(b *Numeric) int {
	s := maxScale(a.scale, b.scale)
	return a.coefAt(s).Cmp(b.coefAt(s))
}

// nbaseWeight returns PostgreSQL's base-10000 weight and leading base-10000
// digit of |n| (0, 0 for zero).
func (n *Numeric) nbaseWeight() (weight int, first int64) {
	if n.Coef.Sign() == 0 {
		return 0, 0
	}
	s := new(big.Int).Abs(&n.Coef).String()
	// position of the leading decimal digit: 0 = units, -1 = tenths
	p := len(s) - 1 - int(n.scale)
	weight = p / 4
	if p < 0 && p%4 != 0 {
		weight--
	}
	// value of the leading base-10000 digit: digits from weight*4+3 down to weight*4
	hi := weight*4 + 3
	var d int64
	for pos := hi; pos >= weight*4; pos-- {
		idx := len(s) - 1 - int(n.scale) - pos // index into s
		d *= 10
		if idx >= 0 && idx < len(s) {
			d += int64(s[idx] - '0')
		}
	}
	return weight, d
}

// div divides with PostgreSQL's select_div_scale rule for the result scale
// and rounds half away from zero.
func (a *Numeric) Div(b *Numeric) (*Numeric, error) {
	if b.Coef.Sign() == 0 {
		return nil, pgerr.New(pgerr.DivisionByZero, "division by zero")
	}
	w1, f1 := a.nbaseWeight()
	w2, f2 := b.nbaseWeight()
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := int32(16 - qweight*4)
	rscale = maxScale(rscale, a.scale)
	rscale = maxScale(rscale, b.scale)
	if rscale < 0 {
		rscale = 0
	}
	if rscale > 1000 {
		rscale = 1000
	}
	return a.divScale(b, rscale), nil
}

func (a *Numeric) divScale(b *Numeric, rscale int32) *Numeric {
	// a/b = (a.coef * 10^(rscale + b.scale - a.scale)) / b.coef at scale rscale
	num := new(big.Int).Set(&a.Coef)
	shift := int(rscale + b.scale - a.scale)
	den := new(big.Int).Set(&b.Coef)
	if shift >= 0 {
		num.Mul(num, pow10(shift))
	} else {
		den.Mul(den, pow10(-shift))
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	// round half away from zero
	r2 := new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2))
	if r2.Cmp(new(big.Int).Abs(den)) >= 0 {
		if (num.Sign() < 0) != (den.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	res := &Numeric{scale: rscale}
	res.Coef.Set(q)
	return res
}

// round returns n rounded half away from zero to scale s.
func (n *Numeric) Round(s int32) *Numeric {
	if s >= n.scale {
		r := &Numeric{scale: s}
		r.Coef.Set(n.coefAt(s))
		return r
	}
	one := NumericFromInt(1)
	return n.divScale(one, s)
}

// Trunc returns n truncated toward zero to scale s, as PostgreSQL's
// trunc(numeric, int): a larger scale pads with zeros, a negative one
// zeroes digits left of the point and leaves no fraction.
func (n *Numeric) Trunc(s int32) *Numeric {
	if s >= n.scale {
		return n.Round(s)
	}
	r := &Numeric{scale: max(s, 0)}
	r.Coef.Quo(&n.Coef, pow10(int(n.scale-s)))
	if s < 0 {
		r.Coef.Mul(&r.Coef, pow10(int(-s)))
	}
	return r
}

func (n *Numeric) Mod(b *Numeric) (*Numeric, error) {
	if b.Coef.Sign() == 0 {
		return nil, pgerr.New(pgerr.DivisionByZero, "division by zero")
	}
	s := maxScale(n.scale, b.scale)
	r := &Numeric{scale: s}
	r.Coef.Rem(n.coefAt(s), b.coefAt(s))
	return r, nil
}

func (n *Numeric) toInt64(t Type) (int64, error) {
	r := n.Round(0)
	if !r.Coef.IsInt64() {
		return 0, OutOfRange(t)
	}
	v := r.Coef.Int64()
	if err := CheckIntRange(t, v); err != nil {
		return 0, err
	}
	return v, nil
}

func (n *Numeric) toFloat() float64 {
	f, _ := strconv.ParseFloat(n.String(), 64)
	return f
}

func MustNumeric(s string) *Numeric {
	n, err := ParseNumeric(s)
	if err != nil {
		return NumericFromInt(0)
	}
	return n
}

// applyTypmod rounds n to a numeric(p,s) typmod and checks its precision
// (apply_typmod): 22003 "numeric field overflow" when the integer digits
// do not fit.
func (n *Numeric) applyTypmod(mod int32) (*Numeric, error) {
	if mod < 4 {
		return n, nil
	}
	m := mod - 4
	prec, scale := (m>>16)&0xffff, int32(int16(m&0xffff))
	r := n.Round(scale)
	if r.Coef.Sign() == 0 {
		return r, nil
	}
	digits := len(new(big.Int).Abs(&r.Coef).String()) - int(r.scale)
	if digits > int(prec-scale) {
		return nil, pgerr.New(pgerr.NumericValueOutOfRange, "numeric field overflow").
			WithDetail(fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than %s.", prec, scale, pow10Text(prec-scale)))
	}
	return r, nil
}

func pow10Text(e int32) string {
	if e <= 0 {
		return "1"
	}
	return "10^" + strconv.Itoa(int(e))
}

// pow is numeric ^ numeric: exact for integer exponents (rounded to at
// least 16 fractional digits, as PostgreSQL's power_var does for small
// results), through float64 otherwise.
func (n *Numeric) Pow(e *Numeric) (*Numeric, error) {
	if n.Coef.Sign() == 0 && e.Coef.Sign() < 0 {
		return nil, pgerr.New("2201F", "zero raised to a negative power is undefined")
	}
	ei := e.Round(0)
	if ei.Cmp(e) == 0 && ei.Coef.IsInt64() && ei.Coef.Int64() >= -1000 && ei.Coef.Int64() <= 1000 {
		k := ei.Coef.Int64()
		neg := k < 0
		if neg {
			k = -k
		}
		r := &Numeric{scale: n.scale * int32(k)}
		r.Coef.Exp(&n.Coef, big.NewInt(k), nil)
		if neg {
			q, err := NumericFromInt(1).Div(r)
			if err != nil {
				return nil, err
			}
			r = q.divScale(NumericFromInt(1), 16)
		}
		if r.scale < 16 {
			r = r.Round(16)
		}
		return r, nil
	}
	if n.Coef.Sign() < 0 {
		return nil, pgerr.New("2201F", "a negative number raised to a non-integer power yields a complex result")
	}
	if n.Coef.Sign() == 0 {
		return NumericFromInt(0).Round(16), nil
	}
	// x^y = exp(y ln x), in binary floating point with ample precision,
	// rounded to PostgreSQL's result scale: 16 significant digits past
	// the decimal weight, at least the inputs' scales (power_var).
	const prec = 256
	x := n.bigFloat(prec)
	y := e.bigFloat(prec)
	t := new(big.Float).SetPrec(prec).Mul(y, bigLn(x))
	tf, _ := t.Float64()
	if tf > 2300 || tf < -2300 {
		return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	r := bigExp(t)
	scale := int32(16 - int(math.Floor(tf*0.434294481903252)))
	if tf*0.434294481903252 < 0 {
		scale = int32(16 - int(tf*0.434294481903252))
	}
	scale = max(scale, n.scale, e.scale, 0)
	scale = min(scale, 1000)
	out, err := ParseNumeric(r.Text('f', int(scale)+8))
	if err != nil {
		return nil, err
	}
	return out.Round(scale), nil
}

func (n *Numeric) bigFloat(prec uint) *big.Float {
	f := new(big.Float).SetPrec(prec).SetInt(&n.Coef)
	if n.scale > 0 {
		f.Quo(f, new(big.Float).SetPrec(prec).SetInt(pow10(int(n.scale))))
	}
	return f
}

// bigLn is the natural logarithm of x > 0: x = m * 2^k with m in
// [0.5, 1), ln m = 2 atanh((m-1)/(m+1)) by its series.
func bigLn(x *big.Float) *big.Float {
	prec := x.Prec()
	m := new(big.Float).SetPrec(prec)
	k := x.MantExp(m)
	res := atanhTwice(m, prec)
	if k != 0 {
		ln2 := atanhTwice(new(big.Float).SetPrec(prec).SetInt64(2), prec)
		res.Add(res, new(big.Float).SetPrec(prec).Mul(ln2, new(big.Float).SetPrec(prec).SetInt64(int64(k))))
	}
	return res
}

func atanhTwice(m *big.Float, prec uint) *big.Float {
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	z := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Sub(m, one), new(big.Float).SetPrec(prec).Add(m, one))
	z2 := new(big.Float).SetPrec(prec).Mul(z, z)
	sum := new(big.Float).SetPrec(prec).Set(z)
	term := new(big.Float).SetPrec(prec).Set(z)
	eps := new(big.Float).SetPrec(prec).SetMantExp(one, -int(prec))
	for i := int64(3); i < 100000; i += 2 {
		term.Mul(term, z2)
		q := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(i))
		sum.Add(sum, q)
		if q.Sign() == 0 || new(big.Float).Abs(q).Cmp(eps) < 0 {
			break
		}
	}
	return sum.Mul(sum, new(big.Float).SetPrec(prec).SetInt64(2))
}

// bigExp is e^t: t = k ln2 + r with |r| <= ln2/2, e^r by its series,
// scaled by 2^k.
func bigExp(t *big.Float) *big.Float {
	prec := t.Prec()
	ln2 := atanhTwice(new(big.Float).SetPrec(prec).SetInt64(2), prec)
	kf := new(big.Float).SetPrec(prec).Quo(t, ln2)
	kv, _ := kf.Float64()
	k := int64(math.Round(kv))
	r := new(big.Float).SetPrec(prec).Sub(t, new(big.Float).SetPrec(prec).Mul(ln2, new(big.Float).SetPrec(prec).SetInt64(k)))
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	eps := new(big.Float).SetPrec(prec).SetMantExp(one, -int(prec))
	for i := int64(1); i < 10000; i++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(i))
		sum.Add(sum, term)
		if term.Sign() == 0 || new(big.Float).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	m := new(big.Float).SetPrec(prec)
	exp := sum.MantExp(m)
	return m.SetMantExp(m, exp+int(k))
}
