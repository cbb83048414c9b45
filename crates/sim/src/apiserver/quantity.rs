//! Resource quantities (`500m`, `1.5Gi`, `1e3`) parsed, compared, added and printed in
//! canonical form exactly as apimachinery's `resource.Quantity` does.
//!
//! A value is an exact decimal `mantissa × 10^scale` (i128 mantissa) remembering the
//! suffix family it was written in. Like upstream, parsing rounds up (away from zero) to
//! nano precision and caps binary-SI values at 2^63-1; arithmetic that would leave i128
//! saturates instead of growing without bound (upstream switches to big decimals there).

use std::cmp::Ordering;
use std::fmt;

/// The suffix family a quantity prints in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `e3`, `E-6`.
    DecimalExponent,
    /// `Ki`, `Mi`, … `Ei`.
    BinarySI,
    /// `n`, `u`, `m`, ``, `k`, `M`, … `E`.
    DecimalSI,
}

/// Upstream's regular expression, quoted in the format error.
pub const QUANTITY_REGEX: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
/// `resource.ErrFormatWrong`.
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `resource.ErrNumeric`.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// `resource.ErrSuffix`.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

/// A resource quantity.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    mantissa: i128,
    scale: i32,
    format: Format,
}

const MAX_INT64: i128 = i64::MAX as i128;

impl Quantity {
    /// Zero, printed as `0`.
    pub fn zero() -> Quantity {
        Quantity {
            mantissa: 0,
            scale: 0,
            format: Format::DecimalSI,
        }
    }

    /// `value` units in the given format (`resource.NewQuantity`).
    pub fn new(value: i64, format: Format) -> Quantity {
        Quantity {
            mantissa: i128::from(value),
            scale: 0,
            format,
        }
    }

    /// `milli` thousandths, decimal SI (`resource.NewMilliQuantity`).
    pub fn new_milli(milli: i64) -> Quantity {
        Quantity {
            mantissa: i128::from(milli),
            scale: -3,
            format: Format::DecimalSI,
        }
    }

    /// The suffix family.
    pub fn format(&self) -> Format {
        self.format
    }

    /// True when the value is zero.
    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> i32 {
        self.mantissa.signum() as i32
    }

    /// The value rounded away from zero to an integer, saturated to i64 (`Value()`).
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// The value in thousandths, rounded away from zero, saturated (`MilliValue()`).
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }

    /// The value in units of 10^scale, rounded away from zero, saturated to i64.
    pub fn scaled_value(&self, scale: i32) -> i64 {
        let v = rescale_round_up(self.mantissa, self.scale, scale);
        v.clamp(i128::from(i64::MIN), MAX_INT64) as i64
    }

    /// Rounds away from zero to `scale` (`RoundUp`); the defaulting path uses -3.
    pub fn round_up(&self, scale: i32) -> Quantity {
        if self.scale >= scale {
            return *self;
        }
        Quantity {
            mantissa: rescale_round_up(self.mantissa, self.scale, scale),
            scale,
            format: self.format,
        }
    }

    /// `self + other`; the result keeps this quantity's format unless this one is zero.
    pub fn add(&self, other: &Quantity) -> Quantity {
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        let (a, b, scale) = align(self, other);
        Quantity {
            mantissa: a.saturating_add(b),
            scale,
            format,
        }
        .normalized()
    }

    /// `self - other`, keeping this quantity's format unless this one is zero.
    pub fn sub(&self, other: &Quantity) -> Quantity {
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        let (a, b, scale) = align(self, other);
        Quantity {
            mantissa: a.saturating_sub(b),
            scale,
            format,
        }
        .normalized()
    }

    /// Compares numeric values (`Cmp`).
    pub fn cmp_value(&self, other: &Quantity) -> Ordering {
        if self.mantissa.signum() != other.mantissa.signum() {
            return self.mantissa.signum().cmp(&other.mantissa.signum());
        }
        let (a, b, _) = align(self, other);
        a.cmp(&b)
    }

    /// Strips trailing decimal zeros so alignment stays within i128 for longer.
    fn normalized(mut self) -> Quantity {
        if self.mantissa == 0 {
            self.scale = 0;
            return self;
        }
        while self.mantissa % 10 == 0 && self.scale < i32::MAX {
            self.mantissa /= 10;
            self.scale += 1;
        }
        self
    }

    /// The canonical string, as `Quantity.String()` prints it.
    pub fn canonical(&self) -> String {
        if self.mantissa == 0 {
            return "0".to_string();
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            let small = self.cmp_value(&Quantity::new(-1024, Format::DecimalSI))
                == Ordering::Greater
                && self.cmp_value(&Quantity::new(1024, Format::DecimalSI)) == Ordering::Less;
            let n = self.normalized();
            if small || n.scale < 0 {
                format = Format::DecimalSI;
            } else if let Some(int) = pow10(n.scale).and_then(|p| n.mantissa.checked_mul(p)) {
                let (amount, exp) = remove_factors(int, 1024);
                let suffix = match exp {
                    0 => "",
                    1 => "Ki",
                    2 => "Mi",
                    3 => "Gi",
                    4 => "Ti",
                    5 => "Pi",
                    6 => "Ei",
                    _ => {
                        return decimal_canonical(
                            self.mantissa,
                            self.scale,
                            Format::DecimalExponent,
                        )
                    }
                };
                return format!("{amount}{suffix}");
            } else {
                format = Format::DecimalSI;
            }
        }
        decimal_canonical(self.mantissa, self.scale, format)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.cmp_value(other) == Ordering::Equal
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Quantity) -> Option<Ordering> {
        Some(self.cmp_value(other))
    }
}

fn decimal_canonical(mantissa: i128, scale: i32, format: Format) -> String {
    let (mut m, times) = remove_factors(mantissa, 10);
    let mut e = scale.saturating_add(times);
    while e % 3 != 0 {
        match m.checked_mul(10) {
            Some(v) => m = v,
            None => break,
        }
        e -= 1;
    }
    if format == Format::DecimalSI {
        let suffix = match e {
            -9 => Some("n"),
            -6 => Some("u"),
            -3 => Some("m"),
            0 => Some(""),
            3 => Some("k"),
            6 => Some("M"),
            9 => Some("G"),
            12 => Some("T"),
            15 => Some("P"),
            18 => Some("E"),
            _ => None,
        };
        if let Some(s) = suffix {
            return format!("{m}{s}");
        }
    }
    if e == 0 {
        m.to_string()
    } else {
        format!("{m}e{e}")
    }
}

fn remove_factors(value: i128, base: i128) -> (i128, i32) {
    let neg = value < 0;
    let mut v = value.unsigned_abs();
    let b = base as u128;
    let mut times = 0;
    while v >= b && v.is_multiple_of(b) {
        v /= b;
        times += 1;
    }
    let v = v.min(i128::MAX as u128) as i128;
    (if neg { -v } else { v }, times)
}

fn pow10(exp: i32) -> Option<i128> {
    if !(0..=38).contains(&exp) {
        return None;
    }
    10i128.checked_pow(exp as u32)
}

/// Brings both mantissas to the smaller scale, saturating when a mantissa would overflow.
fn align(a: &Quantity, b: &Quantity) -> (i128, i128, i32) {
    let scale = a.scale.min(b.scale);
    (
        upscale(a.mantissa, a.scale - scale),
        upscale(b.mantissa, b.scale - scale),
        scale,
    )
}

fn upscale(m: i128, by: i32) -> i128 {
    if m == 0 {
        return 0;
    }
    match pow10(by).and_then(|p| m.checked_mul(p)) {
        Some(v) => v,
        None if m > 0 => i128::MAX,
        None => i128::MIN,
    }
}

/// `mantissa × 10^from` expressed in units of 10^to, rounded away from zero.
fn rescale_round_up(mantissa: i128, from: i32, to: i32) -> i128 {
    if from >= to {
        return upscale(mantissa, from.saturating_sub(to));
    }
    let drop = to.saturating_sub(from);
    match pow10(drop) {
        Some(p) => {
            let q = mantissa / p;
            if mantissa % p != 0 {
                q + mantissa.signum()
            } else {
                q
            }
        }
        None => mantissa.signum(),
    }
}

/// Parses a quantity string exactly as `resource.ParseQuantity` does.
pub fn parse_quantity(s: &str) -> Result<Quantity, String> {
    if s.is_empty() {
        return Err(ERR_FORMAT_WRONG.to_string());
    }
    if s == "0" {
        return Ok(Quantity::zero());
    }
    let parts = split_quantity(s)?;
    let (base, exponent, format) = interpret_suffix(parts.suffix).ok_or(ERR_SUFFIX)?;
    let digits = format!("{}{}", parts.num, parts.denom);
    let (mut mantissa, extra_scale) = parse_digits(&digits)?;
    let mut scale = extra_scale - parts.denom.len() as i32;
    if base == 10 {
        scale = scale.saturating_add(exponent);
    } else {
        let factor = 1i128.checked_shl(exponent as u32).unwrap_or(0);
        mantissa = mantissa.checked_mul(factor).unwrap_or(i128::MAX);
    }
    if !parts.positive {
        mantissa = -mantissa;
    }
    let mut q = Quantity {
        mantissa,
        scale,
        format,
    };
    // Round anything finer than a nano up, so asking for a little gets a little.
    if q.scale < -9 {
        q = Quantity {
            mantissa: rescale_round_up(q.mantissa, q.scale, -9),
            scale: -9,
            format,
        };
    }
    if format == Format::BinarySI {
        let max = Quantity::new(i64::MAX, Format::BinarySI);
        if q.mantissa > 0 && q.cmp_value(&max) == Ordering::Greater {
            q = max;
        } else if q.mantissa < 0
            && q.cmp_value(&Quantity::new(-i64::MAX, Format::BinarySI)) == Ordering::Less
        {
            q = Quantity::new(-i64::MAX, Format::BinarySI);
        }
    }
    Ok(q.normalized())
}

/// Parses a quantity as the JSON decoder does (surrounding whitespace ignored).
pub fn parse_api_quantity(
    q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
) -> Result<Quantity, String> {
    parse_quantity(q.0.trim())
}

struct Parts<'a> {
    positive: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// Splits sign, numerator, denominator and suffix like `parseQuantityString`.
fn split_quantity(s: &str) -> Result<Parts<'_>, String> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let mut num = &s[num_start..pos];
    if num.is_empty() {
        num = "0";
    }
    let mut denom = "";
    if pos < end && b[pos] == b'.' {
        pos += 1;
        let d = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[d..pos];
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(ERR_FORMAT_WRONG.to_string());
    }
    Ok(Parts {
        positive,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

fn interpret_suffix(suffix: &str) -> Option<(i32, i32, Format)> {
    let r = match suffix {
        "" => (10, 0, Format::DecimalSI),
        "n" => (10, -9, Format::DecimalSI),
        "u" => (10, -6, Format::DecimalSI),
        "m" => (10, -3, Format::DecimalSI),
        "k" => (10, 3, Format::DecimalSI),
        "M" => (10, 6, Format::DecimalSI),
        "G" => (10, 9, Format::DecimalSI),
        "T" => (10, 12, Format::DecimalSI),
        "P" => (10, 15, Format::DecimalSI),
        "E" => (10, 18, Format::DecimalSI),
        "Ki" => (2, 10, Format::BinarySI),
        "Mi" => (2, 20, Format::BinarySI),
        "Gi" => (2, 30, Format::BinarySI),
        "Ti" => (2, 40, Format::BinarySI),
        "Pi" => (2, 50, Format::BinarySI),
        "Ei" => (2, 60, Format::BinarySI),
        s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
            // Go parses an int64 and truncates it to int32.
            let exp: i64 = s[1..].parse().ok()?;
            (10, exp as i32, Format::DecimalExponent)
        }
        _ => return None,
    };
    Some(r)
}

/// Digits to an i128 mantissa; digits beyond i128's precision are dropped into the scale,
/// rounding the magnitude up.
fn parse_digits(digits: &str) -> Result<(i128, i32), String> {
    let mut m: i128 = 0;
    let mut extra = 0i32;
    let mut dropped_nonzero = false;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            return Err(ERR_NUMERIC.to_string());
        }
        let d = i128::from(c - b'0');
        match m.checked_mul(10).and_then(|v| v.checked_add(d)) {
            Some(v) if extra == 0 => m = v,
            _ => {
                extra = extra.saturating_add(1);
                dropped_nonzero |= d != 0;
            }
        }
    }
    if dropped_nonzero {
        m = m.saturating_add(1);
    }
    Ok((m, extra))
}

#[cfg(test)]
mod tests;
