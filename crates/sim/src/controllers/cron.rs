//! Cron schedules as robfig/cron v3's standard parser reads them (the CronJob
//! controller's `cron.ParseStandard`): five fields with ranges, steps, lists and names,
//! the `@yearly`…`@hourly` descriptors and `@every D`, an optional `TZ=`/`CRON_TZ=`
//! prefix, and `Next` in the schedule's time zone ([`super::tz`]), stepping through
//! daylight-saving transitions as robfig/cron's `SpecSchedule.Next` does.

use super::tz::{self, Zone};
use crate::time::EPOCH_UNIX_MS;

const STAR: u64 = 1 << 63;

/// Unix milliseconds.
pub type UnixMs = i64;

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// The five fields, as bit sets (bit 63: the field was `*` or `?`), evaluated in
    /// `zone`.
    Spec {
        minute: u64,
        hour: u64,
        dom: u64,
        month: u64,
        dow: u64,
        zone: Zone,
    },
    /// `@every D`: every D seconds (at least 1 s).
    Every(i64),
}

struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

fn parse_int(expr: &str) -> Result<u32, String> {
    match expr.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {expr}")),
        Ok(n) => Ok(n.min(u32::MAX as i64) as u32),
        Err(_) => Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing \"{expr}\": invalid syntax"
        )),
    }
}

fn parse_int_or_name(expr: &str, b: &Bounds) -> Result<u32, String> {
    let lower = expr.to_ascii_lowercase();
    match b.names.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => Ok(*v),
        None => parse_int(expr),
    }
}

/// `getRange`: one comma-separated part of a field.
fn get_range(expr: &str, b: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let (start, mut end, mut extra);
    if low_high[0] == "*" || low_high[0] == "?" {
        start = b.min;
        end = b.max;
        extra = STAR;
    } else {
        start = parse_int_or_name(low_high[0], b)?;
        end = match low_high.len() {
            1 => start,
            2 => parse_int_or_name(low_high[1], b)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        extra = 0;
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let s = parse_int(range_and_step[1])?;
            if single {
                end = b.max;
            }
            if s > 1 {
                extra = 0;
            }
            s
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < b.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            b.min
        ));
    }
    if end > b.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            b.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    let mut bits = 0u64;
    let mut i = start;
    while i <= end {
        bits |= 1 << i;
        i += step;
    }
    Ok(bits | extra)
}

fn get_field(field: &str, b: &Bounds) -> Result<u64, String> {
    field
        .split(',')
        .try_fold(0u64, |acc, part| Ok(acc | get_range(part, b)?))
}

/// `ParseStandard`: the schedule, or robfig/cron's error text.
pub fn parse(spec: &str) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    let mut zone = Zone::fixed(0);
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').unwrap_or(0);
        let i = spec.find(' ').unwrap_or(spec.len());
        let name = &spec[eq + 1..i];
        zone = tz::lookup(name)
            .ok_or_else(|| format!("provided bad location {name}: unknown time zone {name}"))?;
        spec = spec[i..].trim();
    }
    if let Some(d) = spec.strip_prefix('@') {
        let five = |m: &str| parse(m).map(|s| in_zone(s, zone));
        return match d {
            "yearly" | "annually" => five("0 0 1 1 *"),
            "monthly" => five("0 0 1 * *"),
            "weekly" => five("0 0 * * 0"),
            "daily" | "midnight" => five("0 0 * * *"),
            "hourly" => five("0 * * * *"),
            _ => match d.strip_prefix("every ") {
                Some(dur) => {
                    let ms = crate::time::parse_duration(dur.trim())
                        .map_err(|e| format!("failed to parse duration {spec}: {e}"))?;
                    Ok(Schedule::Every(((ms / 1000) as i64).max(1)))
                }
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    Ok(Schedule::Spec {
        minute: get_field(fields[0], &MINUTES)?,
        hour: get_field(fields[1], &HOURS)?,
        dom: get_field(fields[2], &DOM)?,
        month: get_field(fields[3], &MONTHS)?,
        dow: get_field(fields[4], &DOW)?,
        zone,
    })
}

/// The schedule evaluated in `zone` (the CronJob's `timeZone`).
pub fn in_zone(s: Schedule, zone: Zone) -> Schedule {
    match s {
        Schedule::Spec {
            minute,
            hour,
            dom,
            month,
            dow,
            ..
        } => Schedule::Spec {
            minute,
            hour,
            dom,
            month,
            dow,
            zone,
        },
        e => e,
    }
}

/// robfig/cron's `dayMatches`: with `*` in either day field both must match, otherwise
/// either.
fn day_matches(dom: u64, dow: u64, c: &tz::Civil) -> bool {
    let dom_match = dom & (1 << c.day) != 0;
    let dow_match = dow & (1 << c.weekday) != 0;
    if dom & STAR != 0 || dow & STAR != 0 {
        dom_match && dow_match
    } else {
        dom_match || dow_match
    }
}

/// `t.AddDate(0, months, days)` in `zone`.
fn add_date(zone: &Zone, t: i64, months: i64, days: i64) -> i64 {
    let c = zone.civil(t);
    zone.date(
        c.year,
        i64::from(c.month) + months,
        i64::from(c.day) + days,
        i64::from(c.hour),
        i64::from(c.minute),
        i64::from(c.second),
    )
}

/// One pass of `SpecSchedule.Next` from `t` (Unix seconds): `Ok(t)` at a match,
/// `Err(t)` where it must start over ("goto WRAP"), with `added` kept across passes.
fn next_pass(f: [u64; 5], zone: &Zone, mut t: i64, added: &mut bool) -> Result<i64, i64> {
    let [minute, hour, dom, month, dow] = f;
    while month & (1 << zone.civil(t).month) == 0 {
        if !*added {
            *added = true;
            let c = zone.civil(t);
            t = zone.date(c.year, i64::from(c.month), 1, 0, 0, 0);
        }
        t = add_date(zone, t, 1, 0);
        if zone.civil(t).month == 1 {
            return Err(t);
        }
    }
    while !day_matches(dom, dow, &zone.civil(t)) {
        if !*added {
            *added = true;
            let c = zone.civil(t);
            t = zone.date(c.year, i64::from(c.month), i64::from(c.day), 0, 0, 0);
        }
        t = add_date(zone, t, 0, 1);
        // A day that does not start at midnight (a transition at 00:00) is moved there.
        let h = i64::from(zone.civil(t).hour);
        if h != 0 {
            t += if h > 12 { (24 - h) * 3600 } else { -h * 3600 };
        }
        if zone.civil(t).day == 1 {
            return Err(t);
        }
    }
    while hour & (1 << zone.civil(t).hour) == 0 {
        if !*added {
            *added = true;
            let c = zone.civil(t);
            t = zone.date(
                c.year,
                i64::from(c.month),
                i64::from(c.day),
                i64::from(c.hour),
                0,
                0,
            );
        }
        // Absolute hours: the hour a spring-forward skips is never visited, the one a
        // fall-back repeats is visited twice.
        t += 3600;
        if zone.civil(t).hour == 0 {
            return Err(t);
        }
    }
    while minute & (1 << zone.civil(t).minute) == 0 {
        if !*added {
            *added = true;
            t -= t.rem_euclid(60);
        }
        t += 60;
        if zone.civil(t).minute == 0 {
            return Err(t);
        }
    }
    while zone.civil(t).second != 0 {
        *added = true;
        t += 1;
        if zone.civil(t).second == 0 {
            return Err(t);
        }
    }
    Ok(t)
}

impl Schedule {
    /// `Next`: the first activation strictly after `t` (Unix ms), or None when there
    /// is none within five years (`"0 0 30 2 *"`).
    pub fn next(&self, t: UnixMs) -> Option<UnixMs> {
        match *self {
            Schedule::Every(secs) => Some((t.div_euclid(1000) + secs) * 1000),
            Schedule::Spec {
                minute,
                hour,
                dom,
                month,
                dow,
                zone,
            } => {
                // Start at the next whole second.
                let mut t = t.div_euclid(1000) + 1;
                let year_limit = zone.civil(t).year + 5;
                let mut added = false;
                // Every pass moves forward; the cap only guards against a broken zone.
                for _ in 0..100_000 {
                    if zone.civil(t).year > year_limit {
                        return None;
                    }
                    match next_pass([minute, hour, dom, month, dow], &zone, t, &mut added) {
                        Ok(t) => return Some(t * 1000),
                        Err(w) => t = w,
                    }
                }
                None
            }
        }
    }

    /// The schedule's zone (UTC for `@every`).
    pub fn zone(&self) -> Zone {
        match self {
            Schedule::Spec { zone, .. } => *zone,
            Schedule::Every(_) => Zone::fixed(0),
        }
    }
}

/// Virtual time (ms since the engine's epoch) to Unix ms.
pub fn to_unix(t: crate::time::Time) -> UnixMs {
    EPOCH_UNIX_MS + t as i64
}

/// Unix ms to virtual time (0 for instants before the engine's epoch).
pub fn from_unix(u: UnixMs) -> crate::time::Time {
    (u - EPOCH_UNIX_MS).max(0) as crate::time::Time
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(y: i64, mo: i64, d: i64, h: i64, mi: i64) -> UnixMs {
        (tz::days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60) * 1000
    }

    /// A local time with its UTC offset in hours (`2012-03-11T00:00:00-0500`).
    fn at(y: i64, mo: i64, d: i64, h: i64, mi: i64, off_h: i64) -> UnixMs {
        unix(y, mo, d, h, mi) - off_h * 3_600_000
    }

    #[test]
    fn daylight_saving_transitions_follow_robfig_s_next() {
        // robfig/cron v3 TestNext's America/New_York cases (seconds field dropped).
        let ny = |s: &str| parse(&format!("CRON_TZ=America/New_York {s}")).unwrap();
        // Spring forward: 02:30 does not exist on 11 March 2012, so the next is a year on.
        assert_eq!(
            ny("30 2 11 3 *").next(at(2012, 3, 11, 0, 0, -5)),
            Some(at(2013, 3, 11, 2, 30, -4))
        );
        let hourly = ny("0 * * * *");
        assert_eq!(
            hourly.next(at(2012, 3, 11, 0, 0, -5)),
            Some(at(2012, 3, 11, 1, 0, -5))
        );
        assert_eq!(
            hourly.next(at(2012, 3, 11, 1, 0, -5)),
            Some(at(2012, 3, 11, 3, 0, -4))
        );
        // Fall back: 01:00 comes twice, in EDT then in EST, and each is an activation.
        assert_eq!(
            hourly.next(at(2012, 11, 4, 0, 0, -4)),
            Some(at(2012, 11, 4, 1, 0, -4))
        );
        assert_eq!(
            hourly.next(at(2012, 11, 4, 1, 0, -4)),
            Some(at(2012, 11, 4, 1, 0, -5))
        );
        assert_eq!(
            hourly.next(at(2012, 11, 4, 1, 0, -5)),
            Some(at(2012, 11, 4, 2, 0, -5))
        );
        assert_eq!(
            ny("30 2 4 11 *").next(at(2012, 11, 4, 0, 0, -4)),
            Some(at(2012, 11, 4, 2, 30, -5))
        );
        assert_eq!(
            ny("30 1 4 11 *").next(at(2012, 11, 4, 1, 45, -4)),
            Some(at(2012, 11, 4, 1, 30, -5))
        );
        // A daily job keeps its local time across the change.
        let daily = ny("0 9 * * *");
        assert_eq!(
            daily.next(at(2026, 3, 7, 10, 0, -5)),
            Some(at(2026, 3, 8, 9, 0, -4))
        );
        let sydney = parse("CRON_TZ=Australia/Sydney 0 9 * * *").unwrap();
        assert_eq!(
            sydney.next(unix(2026, 1, 1, 0, 0)),
            Some(at(2026, 1, 2, 9, 0, 11))
        );
    }

    #[test]
    fn robfig_error_messages() {
        assert_eq!(
            parse("* * *").unwrap_err(),
            "expected exactly 5 fields, found 3: [* * *]"
        );
        assert_eq!(parse("").unwrap_err(), "empty spec string");
        assert_eq!(
            parse("60 * * * *").unwrap_err(),
            "end of range (60) above maximum (59): 60"
        );
        assert_eq!(
            parse("* * 0 * *").unwrap_err(),
            "beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(
            parse("5-2 * * * *").unwrap_err(),
            "beginning of range (5) beyond end of range (2): 5-2"
        );
        assert_eq!(
            parse("*/0 * * * *").unwrap_err(),
            "step of range should be a positive number: */0"
        );
        assert_eq!(
            parse("x * * * *").unwrap_err(),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(
            parse("1-2-3 * * * *").unwrap_err(),
            "too many hyphens: 1-2-3"
        );
        assert_eq!(
            parse("@often").unwrap_err(),
            "unrecognized descriptor: @often"
        );
        assert_eq!(
            parse("* * * * 7").unwrap_err(),
            "end of range (7) above maximum (6): 7"
        );
    }

    #[test]
    fn next_activations() {
        let t = unix(2026, 1, 1, 0, 0);
        let every_minute = parse("* * * * *").unwrap();
        assert_eq!(every_minute.next(t), Some(t + 60_000));
        assert_eq!(every_minute.next(t + 59_999), Some(t + 60_000));
        let s = parse("*/15 9-17 * * mon-fri").unwrap();
        // 2026-01-01 is a Thursday.
        assert_eq!(s.next(t), Some(unix(2026, 1, 1, 9, 0)));
        assert_eq!(
            s.next(unix(2026, 1, 1, 17, 45)),
            Some(unix(2026, 1, 2, 9, 0))
        );
        assert_eq!(
            s.next(unix(2026, 1, 2, 17, 45)),
            Some(unix(2026, 1, 5, 9, 0))
        );
        assert_eq!(
            parse("@monthly").unwrap().next(t),
            Some(unix(2026, 2, 1, 0, 0))
        );
        assert_eq!(
            parse("@weekly").unwrap().next(t),
            Some(unix(2026, 1, 4, 0, 0))
        );
        assert_eq!(
            parse("@yearly").unwrap().next(t),
            Some(unix(2027, 1, 1, 0, 0))
        );
        assert_eq!(
            parse("0 0 29 2 *").unwrap().next(t),
            Some(unix(2028, 2, 29, 0, 0))
        );
        assert_eq!(parse("0 0 30 2 *").unwrap().next(t), None);
        // Day of month OR day of week when both are restricted.
        assert_eq!(
            parse("0 0 15 * fri").unwrap().next(t),
            Some(unix(2026, 1, 2, 0, 0))
        );
        assert_eq!(parse("@every 90s").unwrap().next(t + 500), Some(t + 90_000));
        let tz = parse("CRON_TZ=Etc/GMT-2 0 3 * * *").unwrap();
        assert_eq!(tz.next(t), Some(unix(2026, 1, 1, 1, 0)));
        assert_eq!(
            parse("CRON_TZ=Foo/Bar * * * * *").unwrap_err(),
            "provided bad location Foo/Bar: unknown time zone Foo/Bar"
        );
    }
}
