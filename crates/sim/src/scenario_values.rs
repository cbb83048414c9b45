//! Kubernetes value syntax the scenario checks: quantities, DNS names, resource names.

const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// Checks a name as Kubernetes checks node names (`IsDNS1123Subdomain`).
pub(super) fn dns1123_subdomain(name: &str) -> Result<(), String> {
    if name.len() > 253 {
        return Err("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase() || *c == b'-')
    };
    if name
        .split('.')
        .all(|l| label_ok(l) && !l.bytes().any(|c| c.is_ascii_uppercase()))
    {
        Ok(())
    } else {
        Err(DNS1123_SUBDOMAIN.to_string())
    }
}

/// Node resource names: the standard ones, `hugepages-<size>`, or a fully qualified
/// extended resource (`nvidia.com/gpu`).
pub(super) fn resource_name(name: &str) -> Result<(), String> {
    const STANDARD: &[&str] = &["cpu", "memory", "pods", "ephemeral-storage", "storage"];
    if STANDARD.contains(&name) || name.starts_with("hugepages-") {
        return Ok(());
    }
    match name.split_once('/') {
        Some((domain, rest))
            if !domain.is_empty()
                && !rest.is_empty()
                && !rest.contains('/')
                && dns1123_subdomain(domain).is_ok() =>
        {
            Ok(())
        }
        _ => Err("must be a standard resource type or fully qualified".to_string()),
    }
}

/// Parses a Kubernetes quantity (`4`, `500m`, `8Gi`, `1e3`) into thousandths of a unit,
/// rounding up as `Quantity.MilliValue` does. Errors carry upstream's message.
pub fn parse_quantity_milli(s: &str) -> Result<i128, String> {
    let format_err = || QUANTITY_FORMAT.to_string();
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let num_len = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(num_len);
    if number.is_empty() || !number.bytes().any(|b| b.is_ascii_digit()) {
        return Err(format_err());
    }
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) if !f.contains('.') => (w, f),
        Some(_) => return Err("unable to parse quantity's numeric part".to_string()),
        None => (number, ""),
    };
    // The regex's suffix part: letters from [eEinumkKMGTP], then an optional signed integer.
    let letters = suffix
        .find(|c: char| !"eEinumkKMGTP".contains(c))
        .unwrap_or(suffix.len());
    let (alpha, exp) = suffix.split_at(letters);
    let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    if !exp_digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format_err());
    }
    let (pow10, pow2): (i64, u32) = match (alpha, exp) {
        ("", "") => (0, 0),
        ("n", "") => (-9, 0),
        ("u", "") => (-6, 0),
        ("m", "") => (-3, 0),
        ("k", "") => (3, 0),
        ("M", "") => (6, 0),
        ("G", "") => (9, 0),
        ("T", "") => (12, 0),
        ("P", "") => (15, 0),
        ("E", "") => (18, 0),
        ("Ki", "") => (0, 10),
        ("Mi", "") => (0, 20),
        ("Gi", "") => (0, 30),
        ("Ti", "") => (0, 40),
        ("Pi", "") => (0, 50),
        ("Ei", "") => (0, 60),
        ("e" | "E", e) if !exp_digits.is_empty() => {
            let e: i64 = e
                .parse()
                .map_err(|_| "unable to parse quantity's suffix".to_string())?;
            (e, 0)
        }
        _ => return Err("unable to parse quantity's suffix".to_string()),
    };
    let too_large = || "quantity is too large".to_string();
    let digits = format!("{whole}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return Err(too_large());
    }
    let mantissa: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| too_large())?
    };
    // value = mantissa × 10^(pow10 − len(frac)) × 2^pow2; milli adds 3 to the exponent.
    let exp10 = pow10 - frac.len() as i64 + 3;
    let mut v = mantissa.checked_mul(1i128 << pow2).ok_or_else(too_large)?;
    if exp10 >= 0 {
        if exp10 > 36 && v != 0 {
            return Err(too_large());
        }
        for _ in 0..exp10.min(37) {
            v = v.checked_mul(10).ok_or_else(too_large)?;
        }
    } else {
        let div = 10i128
            .checked_pow((-exp10).min(38) as u32)
            .unwrap_or(i128::MAX);
        v = v / div + i128::from(v % div != 0);
    }
    Ok(if negative { -v } else { v })
}
