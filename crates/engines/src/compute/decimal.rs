//! Exact decimal numbers for telco: an i128 coefficient and a base-10 exponent (value =
//! coefficient × 10^exponent), with exact products and sums and quantisation to a given
//! exponent under a named rounding (half-even or truncation, the two telco uses).

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    pub coef: i128,
    pub exp: i32,
}

/// How [`Decimal::quantize`] drops digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// To nearest; a tie goes to the even neighbour (IEEE 754 roundTiesToEven).
    HalfEven,
    /// Toward zero (truncation).
    Down,
}

fn pow10(k: u32) -> i128 {
    10i128.pow(k)
}

impl Decimal {
    pub const fn new(coef: i128, exp: i32) -> Decimal {
        Decimal { coef, exp }
    }
    pub fn from_int(n: i128) -> Decimal {
        Decimal { coef: n, exp: 0 }
    }
    /// Parses `123`, `-0.0675`; None for anything else.
    pub fn parse(text: &str) -> Option<Decimal> {
        let (neg, t) = match text.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, text),
        };
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) || frac.len() > 30 {
            return None;
        }
        let coef: i128 = format!("{int}{frac}").parse().ok()?;
        Some(Decimal { coef: if neg { -coef } else { coef }, exp: -(frac.len() as i32) })
    }
    /// The exact product.
    pub fn mul(self, o: Decimal) -> Decimal {
        Decimal { coef: self.coef * o.coef, exp: self.exp + o.exp }
    }
    /// The exact sum (at the smaller exponent).
    pub fn add(self, o: Decimal) -> Decimal {
        let exp = self.exp.min(o.exp);
        let scale = |d: Decimal| d.coef * pow10((d.exp - exp) as u32);
        Decimal { coef: scale(self) + scale(o), exp }
    }
    /// The value at exponent `exp`, rounded by `mode` where digits are dropped.
    pub fn quantize(self, exp: i32, mode: Rounding) -> Decimal {
        if exp <= self.exp {
            return Decimal { coef: self.coef * pow10((self.exp - exp) as u32), exp };
        }
        let div = pow10((exp - self.exp) as u32);
        let (mut q, rem) = (self.coef / div, self.coef % div);
        if mode == Rounding::HalfEven {
            let twice = 2 * rem.abs();
            if twice > div || (twice == div && q % 2 != 0) {
                q += self.coef.signum();
            }
        }
        Decimal { coef: q, exp }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.exp >= 0 {
            return write!(f, "{}", self.coef * pow10(self.exp as u32));
        }
        let digits = self.coef.unsigned_abs().to_string();
        let places = (-self.exp) as usize;
        let padded = format!("{digits:0>width$}", width = places + 1);
        let (int, frac) = padded.split_at(padded.len() - places);
        write!(f, "{}{int}.{frac}", if self.coef < 0 { "-" } else { "" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rounding_modes() {
        let d = |s| Decimal::parse(s).unwrap();
        assert_eq!(d("0.125").quantize(-2, Rounding::HalfEven), d("0.12"));
        assert_eq!(d("0.135").quantize(-2, Rounding::HalfEven), d("0.14"));
        assert_eq!(d("0.1251").quantize(-2, Rounding::HalfEven), d("0.13"));
        assert_eq!(d("0.129").quantize(-2, Rounding::Down), d("0.12"));
        assert_eq!(d("-0.129").quantize(-2, Rounding::Down), d("-0.12"));
        assert_eq!(d("-0.125").quantize(-2, Rounding::HalfEven), d("-0.12"));
        assert_eq!(d("1.5").quantize(-3, Rounding::Down), d("1.500"));
    }

    #[test]
    fn arithmetic_and_text() {
        let d = |s| Decimal::parse(s).unwrap();
        assert_eq!(d("0.00894").mul(Decimal::from_int(308)).to_string(), "2.75352");
        assert_eq!(d("0.05").add(d("1")).to_string(), "1.05");
        assert_eq!(d("-0.07").to_string(), "-0.07");
        assert_eq!(Decimal::from_int(12).to_string(), "12");
        assert!(Decimal::parse("1.2.3").is_none() && Decimal::parse(".5").is_none());
    }

    proptest! {
        #[test]
        fn parse_and_display_round_trip(coef in -1_000_000_000i64..1_000_000_000, places in 0u32..8) {
            let d = Decimal::new(i128::from(coef), -(places as i32));
            prop_assert_eq!(Decimal::parse(&d.to_string()), Some(d));
        }

        #[test]
        fn half_even_is_within_half_a_unit(coef in -1_000_000i64..1_000_000) {
            let d = Decimal::new(i128::from(coef), -4);
            let q = d.quantize(-2, Rounding::HalfEven);
            let back = q.quantize(-4, Rounding::Down);
            prop_assert!((back.coef - d.coef).abs() <= 50);
        }
    }
}
