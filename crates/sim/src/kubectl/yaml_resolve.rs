//! How go-yaml v2 decides a scalar's type when reading it back (so which strings kubectl
//! quotes), how it orders map keys, and how it prints numbers.

/// go-yaml's `resolve`: whether an unquoted `s` would read back as a string.
pub(super) fn resolves_to_string(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false; // "" is null
    };
    let hint = match first {
        '+' | '-' | '0'..='9' => 'D',
        'y' | 'Y' | 'n' | 'N' | 't' | 'T' | 'f' | 'F' | 'o' | 'O' | '~' => 'M',
        '.' => '.',
        _ => return true,
    };
    const SPECIAL: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "~", "null", "Null", "NULL",
        ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF",
    ];
    if SPECIAL.contains(&s) {
        return false;
    }
    match hint {
        '.' => !is_go_float(s),
        'D' => {
            if is_yaml_timestamp(s) {
                return false;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            !(is_go_int_base0(&plain)
                || (is_yaml_style_float(&plain) && plain.parse::<f64>().is_ok_and(f64::is_finite))
                || plain
                    .strip_prefix("0b")
                    .or_else(|| plain.strip_prefix("-0b"))
                    .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c == '0' || c == '1')))
        }
        _ => true,
    }
}

/// `strconv.ParseInt(s, 0, 64)` or `ParseUint` succeeding (range ignored: a longer run of
/// digits still reads back as a float).
fn is_go_int_base0(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d, 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d, 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix))
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `strconv.ParseFloat` for strings starting with '.', the only ones asked.
fn is_go_float(s: &str) -> bool {
    is_yaml_style_float(s)
}

/// go-yaml's `parseTimestamp`: `YYYY-M-D`, optionally followed by a time.
fn is_yaml_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let rest = &s[5..];
    let (date, time) = match rest.find(['T', 't', ' ']) {
        Some(p) => (&rest[..p], Some((&rest[p..p + 1], &rest[p + 1..]))),
        None => (rest, None),
    };
    let mut parts = date.split('-');
    let (Some(m), Some(d), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let num = |x: &str, max: u32| {
        (1..=2).contains(&x.len())
            && x.bytes().all(|c| c.is_ascii_digit())
            && x.parse::<u32>().is_ok_and(|v| v >= 1 && v <= max)
    };
    if !num(m, 12) || !num(d, 31) {
        return false;
    }
    let Some((sep, time)) = time else {
        return true;
    };
    let (clock, zone_ok) = if sep == " " {
        (time, true)
    } else if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, true)
    } else if let Some(p) = time.rfind(['+', '-']) {
        let z = &time[p + 1..];
        let ok = z.len() == 5 && z.as_bytes()[2] == b':';
        (&time[..p], ok)
    } else {
        (time, false)
    };
    if !zone_ok {
        return false;
    }
    let (hms, frac) = match clock.split_once('.') {
        Some((h, f)) => (h, Some(f)),
        None => (clock, None),
    };
    if frac.is_some_and(|f| f.is_empty() || !f.bytes().all(|c| c.is_ascii_digit())) {
        return false;
    }
    let f: Vec<&str> = hms.split(':').collect();
    let clock_num = |x: &str, max: u32| {
        (1..=2).contains(&x.len())
            && x.bytes().all(|c| c.is_ascii_digit())
            && x.parse::<u32>().is_ok_and(|v| v <= max)
    };
    f.len() == 3 && clock_num(f[0], 23) && clock_num(f[1], 59) && clock_num(f[2], 59)
}

pub(super) fn is_base60_float(s: &str) -> bool {
    let Some(c) = s.chars().next() else {
        return false;
    };
    if !(c == '+' || c == '-' || c.is_ascii_digit()) || !s.contains(':') {
        return false;
    }
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (main, _frac_ok) = match body.split_once('.') {
        Some((m, f)) => (m, f.chars().all(|c| c.is_ascii_digit() || c == '_')),
        None => (body, true),
    };
    if !_frac_ok {
        return false;
    }
    let mut parts = main.split(':');
    let head = parts.next().unwrap_or("");
    let head_ok = head.starts_with(|c: char| c.is_ascii_digit())
        && head.chars().all(|c| c.is_ascii_digit() || c == '_');
    let mut n = 0;
    let tail_ok = parts.all(|p| {
        n += 1;
        let b = p.as_bytes();
        match b.len() {
            1 => b[0].is_ascii_digit(),
            2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
            _ => false,
        }
    });
    head_ok && tail_ok && n > 0
}

/// go-yaml v2's map key order: letters by code point, a non-letter before a letter (after
/// the letter when following digits), digit runs numerically.
pub fn key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut digits = false;
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            digits = ar[i].is_ascii_digit();
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return if digits { al } else { bl };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// A JSON number as go-yaml prints it after reading it back (ints as-is, floats with Go's
/// `strconv.FormatFloat(f, 'g', -1, 64)`).
pub(super) fn format_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == f.trunc() && f.abs() < 1e21 {
        // A float that JSON wrote as an integer reads back as an int.
        return format!("{}", f as i128);
    }
    go_format_g(f)
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
pub fn go_format_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    let sci = format!("{f:e}"); // shortest digits, e.g. "1.5e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= 6 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}
