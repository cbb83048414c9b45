//! Cron schedules as robfig/cron v3's standard parser reads them (the CronJob
//! controller's `cron.ParseStandard`): five fields with ranges, steps, lists and names,
//! the `@yearly`…`@hourly` descriptors and `@every D`, an optional `TZ=`/`CRON_TZ=`
//! prefix, and `Next`, in fixed-offset time zones.

use crate::time::EPOCH_UNIX_MS;

const STAR: u64 = 1 << 63;

/// Unix milliseconds.
pub type UnixMs = i64;

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// The five fields, as bit sets (bit 63: the field was `*` or `?`), evaluated at
    /// `offset_s` seconds east of UTC.
    Spec {
        minute: u64,
        hour: u64,
        dom: u64,
        month: u64,
        dow: u64,
        offset_s: i64,
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

/// The offset (seconds east of UTC) of the time zones this engine can compute: UTC
/// and its aliases, and the fixed `Etc/GMT±N` zones (whose sign is inverted, as in the
/// tz database). Zones with daylight-saving rules are not modelled.
pub fn zone_offset(name: &str) -> Option<i64> {
    match name {
        "UTC" | "Etc/UTC" | "GMT" | "Etc/GMT" | "Etc/Universal" | "Etc/Zulu" | "Universal"
        | "Zulu" | "Etc/GMT0" | "Etc/GMT+0" | "Etc/GMT-0" | "GMT0" | "Etc/Greenwich"
        | "Greenwich" | "UCT" | "Etc/UCT" => Some(0),
        _ => {
            let rest = name.strip_prefix("Etc/GMT")?;
            let (sign, n) = match rest.as_bytes().first()? {
                b'+' => (-1, &rest[1..]),
                b'-' => (1, &rest[1..]),
                _ => return None,
            };
            let h: i64 = n.parse().ok()?;
            let ok = if sign < 0 { h <= 12 } else { h <= 14 };
            (ok && !n.starts_with('0')).then_some(sign * h * 3600)
        }
    }
}

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
    let mut offset_s = 0;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').unwrap_or(0);
        let i = spec.find(' ').unwrap_or(spec.len());
        let name = &spec[eq + 1..i];
        offset_s = zone_offset(name)
            .ok_or_else(|| format!("provided bad location {name}: unknown time zone {name}"))?;
        spec = spec[i..].trim();
    }
    if let Some(d) = spec.strip_prefix('@') {
        let five = |m: &str| parse(m).map(|s| with_offset(s, offset_s));
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
        offset_s,
    })
}

fn with_offset(s: Schedule, off: i64) -> Schedule {
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
            offset_s: off,
        },
        e => e,
    }
}

/// The schedule evaluated in another fixed zone (the CronJob's `timeZone`).
pub fn in_zone(s: Schedule, offset_s: i64) -> Schedule {
    with_offset(s, offset_s)
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn days_in_month(y: i64, m: u32) -> u32 {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    (days_from_civil(ny, nm, 1) - days_from_civil(y, m, 1)) as u32
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
                offset_s,
            } => {
                // Work in local minutes.
                let local_s = t.div_euclid(1000) + offset_s;
                let mut m = local_s.div_euclid(60) + 1;
                let limit = m + 5 * 366 * 24 * 60;
                while m < limit {
                    let days = m.div_euclid(1440);
                    let (y, mo, d) = civil_from_days(days);
                    if month & (1 << mo) == 0 {
                        let (ny, nm) = if mo == 12 { (y + 1, 1) } else { (y, mo + 1) };
                        m = days_from_civil(ny, nm, 1) * 1440;
                        continue;
                    }
                    let wd = (days + 4).rem_euclid(7) as u32;
                    let dom_match = dom & (1 << d) != 0 && d <= days_in_month(y, mo);
                    let dow_match = dow & (1 << wd) != 0;
                    let day_ok = if dom & STAR != 0 || dow & STAR != 0 {
                        dom_match && dow_match
                    } else {
                        dom_match || dow_match
                    };
                    if !day_ok {
                        m = (days + 1) * 1440;
                        continue;
                    }
                    let h = (m.rem_euclid(1440) / 60) as u32;
                    if hour & (1 << h) == 0 {
                        m = (m.div_euclid(60) + 1) * 60;
                        continue;
                    }
                    let mi = (m.rem_euclid(60)) as u32;
                    if minute & (1 << mi) == 0 {
                        m += 1;
                        continue;
                    }
                    return Some((m * 60 - offset_s) * 1000);
                }
                None
            }
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

    fn unix(y: i64, mo: u32, d: u32, h: i64, mi: i64) -> UnixMs {
        (days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60) * 1000
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
        assert_eq!(zone_offset("Etc/GMT+5"), Some(-5 * 3600));
        assert_eq!(zone_offset("America/New_York"), None);
    }
}
