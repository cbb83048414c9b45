//! Resource quantities (`100m`, `1.5Gi`, `2e3`): parsing to exact integers.

/// A parsed quantity, held exactly in nano-units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Quantity {
    nanos: i128,
}

/// The error upstream gives for a malformed quantity.
pub const QUANTITY_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

impl Quantity {
    /// From whole units.
    pub fn from_units(v: i64) -> Quantity {
        Quantity {
            nanos: i128::from(v) * 1_000_000_000,
        }
    }

    /// From milli-units.
    pub fn from_milli(v: i64) -> Quantity {
        Quantity {
            nanos: i128::from(v) * 1_000_000,
        }
    }

    /// `Value()`: whole units, rounded up.
    pub fn value(self) -> i64 {
        ceil_div(self.nanos, 1_000_000_000)
    }

    /// `MilliValue()`: milli-units, rounded up.
    pub fn milli_value(self) -> i64 {
        ceil_div(self.nanos, 1_000_000)
    }

    /// Whether the quantity is negative.
    pub fn is_negative(self) -> bool {
        self.nanos < 0
    }
}

fn ceil_div(a: i128, b: i128) -> i64 {
    let q = a.div_euclid(b) + i128::from(a.rem_euclid(b) != 0);
    q.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Parses a quantity string.
pub fn parse(s: &str) -> Result<Quantity, String> {
    let s = s.trim();
    let num_end = s
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == '.' || ((*c == '+' || *c == '-') && *i == 0)))
        .map_or(s.len(), |(i, _)| i);
    let (num, suffix) = s.split_at(num_end);
    if num.is_empty()
        || num == "+"
        || num == "-"
        || num.matches('.').count() > 1
        || num.ends_with(['+', '-'])
    {
        return Err(QUANTITY_ERROR.into());
    }
    let (neg, digits) = match num.as_bytes()[0] {
        b'-' => (true, &num[1..]),
        b'+' => (false, &num[1..]),
        _ => (false, num),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(QUANTITY_ERROR.into());
    }
    // (base, exponent) multiplier of the suffix.
    let (base, exp): (i128, i32) = match suffix {
        "" => (10, 0),
        "n" => (10, -9),
        "u" => (10, -6),
        "m" => (10, -3),
        "k" => (10, 3),
        "M" => (10, 6),
        "G" => (10, 9),
        "T" => (10, 12),
        "P" => (10, 15),
        "E" => (10, 18),
        "Ki" => (2, 10),
        "Mi" => (2, 20),
        "Gi" => (2, 30),
        "Ti" => (2, 40),
        "Pi" => (2, 50),
        "Ei" => (2, 60),
        e if e.starts_with(['e', 'E']) => {
            let n: i32 = e[1..].parse().map_err(|_| QUANTITY_ERROR.to_string())?;
            if !(-30..=30).contains(&n) {
                return Err(QUANTITY_ERROR.into());
            }
            (10, n)
        }
        _ => return Err(QUANTITY_ERROR.into()),
    };
    if frac_part.len() > 18 || int_part.len() > 24 {
        return Err(QUANTITY_ERROR.into());
    }
    let mantissa: i128 = format!("{int_part}{frac_part}").parse().unwrap_or(0);
    let mut nanos = mantissa;
    // Scale to nano-units: × base^exp × 10^9 / 10^frac_len.
    let mut dec_exp: i32 = 9 - frac_part.len() as i32;
    if base == 10 {
        dec_exp += exp;
    } else {
        nanos = nanos.checked_mul(1i128 << exp).ok_or(QUANTITY_ERROR)?;
    }
    if dec_exp >= 0 {
        nanos = nanos
            .checked_mul(10i128.checked_pow(dec_exp as u32).ok_or(QUANTITY_ERROR)?)
            .ok_or(QUANTITY_ERROR)?;
    } else {
        let d = 10i128
            .checked_pow((-dec_exp) as u32)
            .ok_or(QUANTITY_ERROR)?;
        nanos = nanos / d + i128::from(nanos % d != 0);
    }
    Ok(Quantity {
        nanos: if neg { -nanos } else { nanos },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_suffixes_users_write() {
        assert_eq!(parse("100m").unwrap().milli_value(), 100);
        assert_eq!(parse("0.5").unwrap().milli_value(), 500);
        assert_eq!(parse("2").unwrap().milli_value(), 2000);
        assert_eq!(parse("1Gi").unwrap().value(), 1 << 30);
        assert_eq!(parse("200Mi").unwrap().value(), 209_715_200);
        assert_eq!(parse("1.5Gi").unwrap().value(), 1_610_612_736);
        assert_eq!(parse("128M").unwrap().value(), 128_000_000);
        assert_eq!(parse("1e3").unwrap().value(), 1000);
        assert_eq!(parse("1m").unwrap().value(), 1, "Value() rounds up");
        assert_eq!(parse("-1").unwrap().value(), -1);
    }

    #[test]
    fn rejects_malformed() {
        for bad in ["", "abc", "1x", "1..2", "--1", "Gi", "1e999", "1.2.3"] {
            assert_eq!(parse(bad), Err(QUANTITY_ERROR.to_string()), "{bad}");
        }
    }
}
