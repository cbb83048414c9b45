//! Quantity parsing, arithmetic and canonical formatting, checked against apimachinery.

use super::*;

fn canon(s: &str) -> String {
    parse_quantity(s)
        .map(|q| q.canonical())
        .unwrap_or_else(|e| e)
}

#[test]
fn canonical_forms_match_upstream() {
    for (input, want) in [
        ("0", "0"),
        ("100m", "100m"),
        ("1000m", "1"),
        ("0.5", "500m"),
        ("1.5", "1500m"),
        ("1", "1"),
        ("1024", "1024"),
        ("1Ki", "1Ki"),
        ("2048Mi", "2Gi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Ki", "512"),
        ("128974848", "128974848"),
        ("129e6", "129e6"),
        ("129M", "129M"),
        ("123Mi", "123Mi"),
        ("1e3", "1e3"),
        ("1E3", "1e3"),
        ("1k", "1k"),
        ("0.1m", "100u"),
        ("1n", "1n"),
        ("0.0000000001", "1n"),
        ("-1", "-1"),
        ("-100m", "-100m"),
        ("+5", "5"),
        ("00100", "100"),
        ("1.", "1"),
        (".5", "500m"),
        ("10000000000000000000000000000000000000000", "10e39"),
        ("e3", "0"),
    ] {
        assert_eq!(canon(input), want, "input {input}");
    }
}

#[test]
fn bad_strings_are_rejected_with_upstream_messages() {
    for bad in ["", "abc", "1.5.5", "1Ki2", "1 ", "1ee", "--1"] {
        let err = parse_quantity(bad).unwrap_err();
        assert!(
            err == ERR_FORMAT_WRONG || err == ERR_SUFFIX || err == ERR_NUMERIC,
            "{bad}: {err}"
        );
    }
    assert_eq!(parse_quantity("abc").unwrap_err(), ERR_FORMAT_WRONG);
    assert_eq!(parse_quantity("1Kb").unwrap_err(), ERR_FORMAT_WRONG);
    assert_eq!(parse_quantity("1Q").unwrap_err(), ERR_FORMAT_WRONG);
    assert_eq!(parse_quantity("1iK").unwrap_err(), ERR_SUFFIX);
}

#[test]
fn value_rounds_up_and_milli_value_is_exact() {
    assert_eq!(parse_quantity("100m").unwrap().value(), 1);
    assert_eq!(parse_quantity("100m").unwrap().milli_value(), 100);
    assert_eq!(parse_quantity("1.5").unwrap().milli_value(), 1500);
    assert_eq!(parse_quantity("1Gi").unwrap().value(), 1 << 30);
    assert_eq!(parse_quantity("0.1m").unwrap().milli_value(), 1);
    assert_eq!(parse_quantity("-0.5").unwrap().value(), -1);
    assert_eq!(parse_quantity("100Ei").unwrap().value(), i64::MAX);
}

#[test]
fn arithmetic_keeps_first_format() {
    let a = parse_quantity("500m").unwrap();
    let b = parse_quantity("500m").unwrap();
    assert_eq!(a.add(&b).canonical(), "1");
    let z = Quantity::zero();
    let m = parse_quantity("128Mi").unwrap();
    assert_eq!(z.add(&m).add(&m).canonical(), "256Mi");
    assert_eq!(m.sub(&m).canonical(), "0");
    assert!(parse_quantity("1").unwrap() > parse_quantity("999m").unwrap());
    assert_eq!(
        parse_quantity("1000m").unwrap(),
        parse_quantity("1").unwrap()
    );
}

#[test]
fn round_up_to_milli() {
    assert_eq!(
        parse_quantity("0.0001").unwrap().round_up(-3).canonical(),
        "1m"
    );
    assert_eq!(
        parse_quantity("1.0001").unwrap().round_up(-3).canonical(),
        "1001m"
    );
    assert_eq!(
        parse_quantity("2Gi").unwrap().round_up(-3).canonical(),
        "2Gi"
    );
}

#[test]
fn never_panics_on_extreme_inputs() {
    for s in [
        "9".repeat(200),
        "1e2147483647".into(),
        "1e-2147483648".into(),
        "1e99999999999".into(),
        "0.000000000000000001".into(),
        "1Ei".into(),
    ] {
        if let Ok(q) = parse_quantity(&s) {
            let _ = (
                q.canonical(),
                q.value(),
                q.milli_value(),
                q.add(&q),
                q.sub(&q),
                q.round_up(-3),
            );
        }
    }
}
