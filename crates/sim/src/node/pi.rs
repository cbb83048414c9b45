//! π to N significant digits, as perl's `Math::BigFloat::bpi(N)` prints it (the docs'
//! `pi` Job): Machin's formula in base-10⁹ fixed point, rounded half up.

const BASE: u64 = 1_000_000_000;

/// Divides the fixed-point number `a` (most significant limb first) by `d`.
fn div(a: &mut [u64], d: u64) {
    let mut rem = 0u64;
    for x in a.iter_mut() {
        let cur = rem * BASE + *x;
        *x = cur / d;
        rem = cur % d;
    }
}

fn add(a: &mut [u64], b: &[u64], sign: i8) {
    let mut carry: i64 = 0;
    for i in (0..a.len()).rev() {
        let mut v = a[i] as i64 + carry + i64::from(sign) * b[i] as i64;
        carry = 0;
        if v < 0 {
            v += BASE as i64;
            carry = -1;
        } else if v >= BASE as i64 {
            v -= BASE as i64;
            carry = 1;
        }
        a[i] = v as u64;
    }
}

/// `±factor · arctan(1/x)` added to `acc` (`sign` ±1).
fn arctan_into(acc: &mut [u64], x: u64, factor: u64, sign: i8) {
    let mut term = vec![0u64; acc.len()];
    term[0] = factor;
    div(&mut term, x);
    let mut k = 1u64;
    let mut sign = sign;
    loop {
        let mut t = term.clone();
        div(&mut t, k);
        if t.iter().all(|&v| v == 0) {
            break;
        }
        add(acc, &t, sign);
        div(&mut term, x * x);
        k += 2;
        sign = -sign;
    }
}

/// π with `n` significant digits ("3.14…"), n ≥ 1.
pub fn pi(n: usize) -> String {
    let n = n.clamp(1, 100_000);
    let limbs = n / 9 + 3;
    let mut acc = vec![0u64; limbs];
    arctan_into(&mut acc, 5, 16, 1);
    arctan_into(&mut acc, 239, 4, -1);
    let mut digits = acc[0].to_string();
    for l in &acc[1..] {
        digits.push_str(&format!("{l:09}"));
    }
    // Round to n digits, half up.
    let mut d: Vec<u8> = digits.bytes().map(|b| b - b'0').take(n + 1).collect();
    let up = d.len() > n && d[n] >= 5;
    d.truncate(n);
    if up {
        for i in (0..d.len()).rev() {
            if d[i] == 9 {
                d[i] = 0;
            } else {
                d[i] += 1;
                break;
            }
        }
    }
    let s: String = d.iter().map(|x| (x + b'0') as char).collect();
    if n == 1 {
        s
    } else {
        format!("{}.{}", &s[..1], &s[1..])
    }
}

#[cfg(test)]
mod tests {
    use super::pi;

    #[test]
    fn pi_digits_round_half_up() {
        assert_eq!(pi(1), "3");
        assert_eq!(pi(5), "3.1416");
        assert_eq!(pi(30), "3.14159265358979323846264338328");
        let p = pi(2000);
        assert_eq!(p.len(), 2001);
        assert!(p.starts_with("3.14159265358979323846264338327950288419716939937510"));
    }
}
