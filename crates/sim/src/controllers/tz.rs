//! The time zones a CronJob's `timeZone` (and a schedule's `CRON_TZ=`) may name, as
//! rules rather than a copy of the tz database (there is none to load offline): each
//! zone's standard offset and, for zones that keep daylight-saving time, today's rule
//! for when it starts and ends, applied to every year. `Etc/GMT±N` are computed. Go's
//! `time.Date` and the zone lookups robfig/cron relies on are reproduced on top, so a
//! schedule steps over the hour a spring-forward skips and meets the repeated hour of a
//! fall-back twice, as robfig/cron's `Next` does. docs/controlplane.md lists the table.

/// Which clock a transition's time of day is given in (the tz database's `u`, `s`, wall).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// The local time in force just before the transition.
    Wall,
    /// The zone's standard time.
    Standard,
    /// UTC.
    Utc,
}

/// A transition rule: the `nth` (`5` = last) `weekday` (0 = Sunday) of `month`, at
/// `at_s` seconds after midnight on the `base` clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rule {
    month: u32,
    nth: u32,
    weekday: u32,
    at_s: i64,
    base: Base,
}

/// Daylight-saving time: `save` seconds added from `start` until `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dst {
    save: i64,
    start: Rule,
    end: Rule,
}

const H: i64 = 3600;

/// The United States and Canada since 2007: second Sunday of March 02:00 to first Sunday
/// of November 02:00, local time.
const US: Dst = Dst {
    save: H,
    start: Rule {
        month: 3,
        nth: 2,
        weekday: 0,
        at_s: 2 * H,
        base: Base::Wall,
    },
    end: Rule {
        month: 11,
        nth: 1,
        weekday: 0,
        at_s: 2 * H,
        base: Base::Wall,
    },
};
/// The European Union and the United Kingdom since 1996: last Sunday of March to last
/// Sunday of October, both at 01:00 UTC.
const EU: Dst = Dst {
    save: H,
    start: Rule {
        month: 3,
        nth: 5,
        weekday: 0,
        at_s: H,
        base: Base::Utc,
    },
    end: Rule {
        month: 10,
        nth: 5,
        weekday: 0,
        at_s: H,
        base: Base::Utc,
    },
};
/// South-eastern Australia since 2008: first Sunday of October 02:00 standard time to
/// first Sunday of April 02:00 standard time (03:00 daylight).
const AU: Dst = Dst {
    save: H,
    start: Rule {
        month: 10,
        nth: 1,
        weekday: 0,
        at_s: 2 * H,
        base: Base::Standard,
    },
    end: Rule {
        month: 4,
        nth: 1,
        weekday: 0,
        at_s: 2 * H,
        base: Base::Standard,
    },
};
/// New Zealand since 2007: last Sunday of September 02:00 standard time to first Sunday
/// of April 02:00 standard time.
const NZ: Dst = Dst {
    save: H,
    start: Rule {
        month: 9,
        nth: 5,
        weekday: 0,
        at_s: 2 * H,
        base: Base::Standard,
    },
    end: Rule {
        month: 4,
        nth: 1,
        weekday: 0,
        at_s: 2 * H,
        base: Base::Standard,
    },
};

/// The zones kubeloop knows: name, standard offset (seconds east of UTC), DST rule.
const ZONES: &[(&str, i64, Option<Dst>)] = &[
    ("America/New_York", -5 * H, Some(US)),
    ("US/Eastern", -5 * H, Some(US)),
    ("America/Detroit", -5 * H, Some(US)),
    ("America/Toronto", -5 * H, Some(US)),
    ("America/Chicago", -6 * H, Some(US)),
    ("US/Central", -6 * H, Some(US)),
    ("America/Winnipeg", -6 * H, Some(US)),
    ("America/Denver", -7 * H, Some(US)),
    ("US/Mountain", -7 * H, Some(US)),
    ("America/Edmonton", -7 * H, Some(US)),
    ("America/Los_Angeles", -8 * H, Some(US)),
    ("US/Pacific", -8 * H, Some(US)),
    ("America/Vancouver", -8 * H, Some(US)),
    ("America/Anchorage", -9 * H, Some(US)),
    ("America/Halifax", -4 * H, Some(US)),
    ("America/St_Johns", -(3 * H + 1800), Some(US)),
    ("America/Phoenix", -7 * H, None),
    ("Pacific/Honolulu", -10 * H, None),
    ("America/Mexico_City", -6 * H, None),
    ("America/Bogota", -5 * H, None),
    ("America/Lima", -5 * H, None),
    ("America/Sao_Paulo", -3 * H, None),
    ("America/Argentina/Buenos_Aires", -3 * H, None),
    ("Europe/London", 0, Some(EU)),
    ("Europe/Dublin", 0, Some(EU)),
    ("Europe/Lisbon", 0, Some(EU)),
    ("Europe/Amsterdam", H, Some(EU)),
    ("Europe/Berlin", H, Some(EU)),
    ("Europe/Brussels", H, Some(EU)),
    ("Europe/Copenhagen", H, Some(EU)),
    ("Europe/Madrid", H, Some(EU)),
    ("Europe/Oslo", H, Some(EU)),
    ("Europe/Paris", H, Some(EU)),
    ("Europe/Prague", H, Some(EU)),
    ("Europe/Rome", H, Some(EU)),
    ("Europe/Stockholm", H, Some(EU)),
    ("Europe/Vienna", H, Some(EU)),
    ("Europe/Warsaw", H, Some(EU)),
    ("Europe/Zurich", H, Some(EU)),
    ("Europe/Athens", 2 * H, Some(EU)),
    ("Europe/Bucharest", 2 * H, Some(EU)),
    ("Europe/Helsinki", 2 * H, Some(EU)),
    ("Europe/Kyiv", 2 * H, Some(EU)),
    ("Europe/Istanbul", 3 * H, None),
    ("Europe/Moscow", 3 * H, None),
    ("Africa/Lagos", H, None),
    ("Africa/Johannesburg", 2 * H, None),
    ("Africa/Nairobi", 3 * H, None),
    ("Asia/Dubai", 4 * H, None),
    ("Asia/Karachi", 5 * H, None),
    ("Asia/Kolkata", 5 * H + 1800, None),
    ("Asia/Calcutta", 5 * H + 1800, None),
    ("Asia/Kathmandu", 5 * H + 2700, None),
    ("Asia/Dhaka", 6 * H, None),
    ("Asia/Bangkok", 7 * H, None),
    ("Asia/Jakarta", 7 * H, None),
    ("Asia/Ho_Chi_Minh", 7 * H, None),
    ("Asia/Shanghai", 8 * H, None),
    ("Asia/Hong_Kong", 8 * H, None),
    ("Asia/Singapore", 8 * H, None),
    ("Asia/Taipei", 8 * H, None),
    ("Asia/Manila", 8 * H, None),
    ("Australia/Perth", 8 * H, None),
    ("Asia/Seoul", 9 * H, None),
    ("Asia/Tokyo", 9 * H, None),
    ("Australia/Adelaide", 9 * H + 1800, Some(AU)),
    ("Australia/Brisbane", 10 * H, None),
    ("Australia/Sydney", 10 * H, Some(AU)),
    ("Australia/Melbourne", 10 * H, Some(AU)),
    ("Australia/Hobart", 10 * H, Some(AU)),
    ("Pacific/Auckland", 12 * H, Some(NZ)),
];

/// The names of UTC in the tz database.
const UTC_NAMES: &[&str] = &[
    "UTC",
    "Etc/UTC",
    "GMT",
    "Etc/GMT",
    "Etc/Universal",
    "Etc/Zulu",
    "Universal",
    "Zulu",
    "Etc/GMT0",
    "Etc/GMT+0",
    "Etc/GMT-0",
    "GMT0",
    "Etc/Greenwich",
    "Greenwich",
    "UCT",
    "Etc/UCT",
];

/// A time zone: a fixed offset, or a standard offset with a daylight-saving rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    std: i64,
    dst: Option<Dst>,
}

/// The zone of an IANA name kubeloop knows (`time.LoadLocation`), or None.
pub fn lookup(name: &str) -> Option<Zone> {
    if UTC_NAMES.contains(&name) {
        return Some(Zone::fixed(0));
    }
    if let Some(rest) = name.strip_prefix("Etc/GMT") {
        // The tz database's signs are inverted: Etc/GMT-2 is two hours east.
        let (sign, n) = match rest.as_bytes().first()? {
            b'+' => (-1, &rest[1..]),
            b'-' => (1, &rest[1..]),
            _ => return None,
        };
        let h: i64 = n.parse().ok()?;
        let ok = if sign < 0 { h <= 12 } else { h <= 14 };
        return (ok && !n.starts_with('0')).then(|| Zone::fixed(sign * h * H));
    }
    ZONES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, std, dst)| Zone {
            std: *std,
            dst: *dst,
        })
}

/// Days since 1970-01-01 of a civil date (months past 12 roll into later years, days
/// past the month's end into later months, as Go's `time.Date` normalizes them).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = y + (m - 1).div_euclid(12);
    let m = (m - 1).rem_euclid(12) + 1;
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// The civil date of a day count.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A local date and time, with the weekday (0 = Sunday).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    /// Year.
    pub year: i64,
    /// Month 1–12.
    pub month: u32,
    /// Day 1–31.
    pub day: u32,
    /// Hour 0–23.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
    /// Weekday, 0 = Sunday.
    pub weekday: u32,
}

impl Rule {
    /// The rule's instant in `year` (Unix seconds), given the offsets in force before.
    fn instant(&self, year: i64, std: i64, before: i64) -> i64 {
        let first = days_from_civil(year, i64::from(self.month), 1);
        let first_wd = (first + 4).rem_euclid(7);
        let mut day = first + (i64::from(self.weekday) - first_wd).rem_euclid(7);
        day += 7 * (i64::from(self.nth.min(5)) - 1);
        let next_month = days_from_civil(year, i64::from(self.month) + 1, 1);
        while day >= next_month {
            day -= 7;
        }
        let local = day * 86_400 + self.at_s;
        match self.base {
            Base::Wall => local - before,
            Base::Standard => local - std,
            Base::Utc => local,
        }
    }
}

impl Zone {
    /// A zone at a fixed offset.
    pub fn fixed(offset_s: i64) -> Zone {
        Zone {
            std: offset_s,
            dst: None,
        }
    }

    /// The transitions of the years around `utc` (instant, offset from then on), sorted.
    fn transitions(&self, dst: &Dst, utc: i64) -> Vec<(i64, i64)> {
        let (y, _, _) = civil_from_days((utc + self.std).div_euclid(86_400));
        let daylight = self.std + dst.save;
        let mut out = Vec::with_capacity(6);
        for year in y - 1..=y + 1 {
            out.push((dst.start.instant(year, self.std, self.std), daylight));
            out.push((dst.end.instant(year, self.std, daylight), self.std));
        }
        out.sort_unstable();
        out
    }

    /// `Location.lookup`: the offset at `utc` and the period [start, end) it holds for.
    fn period(&self, utc: i64) -> (i64, i64, i64) {
        let Some(dst) = &self.dst else {
            return (self.std, i64::MIN, i64::MAX);
        };
        let ts = self.transitions(dst, utc);
        let i = ts.iter().rposition(|(at, _)| *at <= utc);
        let start = i.map_or(i64::MIN, |i| ts[i].0);
        let end = ts.get(i.map_or(0, |i| i + 1)).map_or(i64::MAX, |t| t.0);
        let offset = match i {
            Some(i) => ts[i].1,
            // Before the first computed transition: the state the last one of the earlier
            // year left, the opposite of the first one's.
            None => {
                if ts[0].1 == self.std {
                    self.std + dst.save
                } else {
                    self.std
                }
            }
        };
        (offset, start, end)
    }

    /// The offset (seconds east of UTC) in force at `utc` (Unix seconds).
    pub fn offset_at(&self, utc: i64) -> i64 {
        self.period(utc).0
    }

    /// The local date and time at `utc`.
    pub fn civil(&self, utc: i64) -> Civil {
        let local = utc + self.offset_at(utc);
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: (secs / 3600) as u32,
            minute: (secs % 3600 / 60) as u32,
            second: (secs % 60) as u32,
            weekday: (days + 4).rem_euclid(7) as u32,
        }
    }

    /// `time.Date(y, mo, d, h, mi, s, 0, zone)` (Unix seconds): fields normalized, and
    /// a wall time a transition skips or repeats resolved as Go resolves it.
    pub fn date(&self, y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> i64 {
        let wall = days_from_civil(y, mo, d) * 86_400 + h * H + mi * 60 + s;
        let (mut offset, start, end) = self.period(wall);
        let utc = wall - offset;
        if utc < start || utc >= end {
            offset = self.offset_at(utc);
        }
        wall - offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(y: i64, mo: i64, d: i64, h: i64, mi: i64) -> i64 {
        days_from_civil(y, mo, d) * 86_400 + h * H + mi * 60
    }

    #[test]
    fn daylight_saving_starts_and_ends_by_each_zones_rule() {
        let ny = lookup("America/New_York").unwrap();
        // 2026: 8 March 07:00 UTC and 1 November 06:00 UTC.
        assert_eq!(ny.offset_at(utc(2026, 3, 8, 6, 59)), -5 * H);
        assert_eq!(ny.offset_at(utc(2026, 3, 8, 7, 0)), -4 * H);
        assert_eq!(ny.offset_at(utc(2026, 11, 1, 5, 59)), -4 * H);
        assert_eq!(ny.offset_at(utc(2026, 11, 1, 6, 0)), -5 * H);
        let london = lookup("Europe/London").unwrap();
        // Last Sundays: 29 March and 25 October 2026, 01:00 UTC.
        assert_eq!(london.offset_at(utc(2026, 3, 29, 1, 0)), H);
        assert_eq!(london.offset_at(utc(2026, 3, 29, 0, 59)), 0);
        assert_eq!(london.offset_at(utc(2026, 10, 25, 1, 0)), 0);
        let berlin = lookup("Europe/Berlin").unwrap();
        assert_eq!(berlin.offset_at(utc(2026, 7, 1, 0, 0)), 2 * H);
        assert_eq!(berlin.offset_at(utc(2026, 1, 1, 0, 0)), H);
        let sydney = lookup("Australia/Sydney").unwrap();
        // Southern summer: daylight in January, standard in July; 5 April 2026 16:00 UTC.
        assert_eq!(sydney.offset_at(utc(2026, 1, 1, 0, 0)), 11 * H);
        assert_eq!(sydney.offset_at(utc(2026, 7, 1, 0, 0)), 10 * H);
        assert_eq!(sydney.offset_at(utc(2026, 4, 4, 15, 59)), 11 * H);
        assert_eq!(sydney.offset_at(utc(2026, 4, 4, 16, 0)), 10 * H);
        assert_eq!(lookup("Asia/Tokyo").unwrap().offset_at(0), 9 * H);
        assert_eq!(lookup("Etc/GMT+5").unwrap().offset_at(0), -5 * H);
        assert!(lookup("Foo/Bar").is_none());
        assert!(lookup("Etc/GMT+13").is_none());
    }

    #[test]
    fn wall_times_in_a_gap_or_an_overlap_resolve_as_go_does() {
        let ny = lookup("America/New_York").unwrap();
        // 02:30 on 8 March 2026 does not exist: Go's lookup-and-adjust lands on 06:30 UTC.
        assert_eq!(ny.date(2026, 3, 8, 2, 30, 0), utc(2026, 3, 8, 6, 30));
        // 01:30 on 1 November happens twice: Go gives the first, EDT (05:30 UTC).
        assert_eq!(ny.date(2026, 11, 1, 1, 30, 0), utc(2026, 11, 1, 5, 30));
        // Normalization: 32 January is 1 February.
        assert_eq!(ny.date(2026, 1, 32, 0, 0, 0), ny.date(2026, 2, 1, 0, 0, 0));
        let c = ny.civil(utc(2026, 11, 1, 6, 30));
        assert_eq!((c.hour, c.minute, c.weekday), (1, 30, 0));
    }
}
