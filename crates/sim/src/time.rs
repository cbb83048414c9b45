//! Virtual time: milliseconds since the simulated cluster started, Go-style durations,
//! Kubernetes timestamps, and kubectl's human-readable ages.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time as K8sTime};

/// A point in virtual time: milliseconds since the world started.
pub type Time = u64;

/// Milliseconds per second.
pub const SECOND: Time = 1000;
/// Milliseconds per minute.
pub const MINUTE: Time = 60 * SECOND;

/// The wall-clock instant the simulated cluster starts at (2026-01-01T00:00:00Z), so
/// object timestamps look real and are the same on every run.
pub const EPOCH_UNIX_MS: i64 = 1_767_225_600_000;

/// A Kubernetes `Time` (second precision, as upstream serializes it) for a virtual instant.
pub fn k8s_time(t: Time) -> K8sTime {
    let ms = EPOCH_UNIX_MS + t as i64;
    let secs = ms.div_euclid(1000);
    K8sTime(jiff_ts(secs * 1000))
}

/// A Kubernetes `MicroTime` for a virtual instant (used by Leases and events.k8s.io).
pub fn k8s_micro_time(t: Time) -> MicroTime {
    MicroTime(jiff_ts(EPOCH_UNIX_MS + t as i64))
}

fn jiff_ts(unix_ms: i64) -> k8s_openapi::jiff::Timestamp {
    k8s_openapi::jiff::Timestamp::from_millisecond(unix_ms)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}

/// The virtual instant of a Kubernetes timestamp (0 if before the epoch).
pub fn from_k8s_time(t: &K8sTime) -> Time {
    (t.0.as_millisecond() - EPOCH_UNIX_MS).max(0) as Time
}

/// The virtual instant of a Kubernetes micro timestamp (0 if before the epoch).
pub fn from_k8s_micro_time(t: &MicroTime) -> Time {
    (t.0.as_millisecond() - EPOCH_UNIX_MS).max(0) as Time
}

/// Parses a Go duration (`500ms`, `90s`, `2m30s`, `1.5h`) into milliseconds.
/// Sub-millisecond parts are truncated.
pub fn parse_duration(s: &str) -> Result<Time, String> {
    let err = || format!("time: invalid duration \"{s}\"");
    let body = s.strip_prefix('+').unwrap_or(s);
    if body.starts_with('-') {
        return Err(format!("negative duration \"{s}\" is not allowed"));
    }
    if body == "0" {
        return Ok(0);
    }
    if body.is_empty() {
        return Err(err());
    }
    let mut rest = body;
    let mut total_ns: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(err());
        }
        let num: f64 = rest[..num_len].parse().map_err(|_| err())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let ns_per = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("time: missing unit in duration \"{s}\"")),
            _ => return Err(format!("time: unknown unit \"{unit}\" in duration \"{s}\"")),
        };
        total_ns += num * ns_per;
    }
    Ok((total_ns / 1e6).round() as Time)
}

/// Formats milliseconds the way Go's `Duration.String` does (`1m30s`, `500ms`, `0s`).
pub fn format_duration(ms: Time) -> String {
    if ms == 0 {
        return "0s".to_string();
    }
    if ms < SECOND {
        return format!("{ms}ms");
    }
    let h = ms / 3_600_000;
    let m = (ms / 60_000) % 60;
    let s = ms % 60_000;
    let secs = if s % 1000 == 0 {
        format!("{}s", s / 1000)
    } else {
        let frac = format!("{:03}", s % 1000);
        format!("{}.{}s", s / 1000, frac.trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => secs,
        (0, m) => format!("{m}m{secs}"),
        (h, m) => format!("{h}h{m}m{secs}"),
    }
}

/// kubectl's AGE column (`duration.HumanDuration`), from a signed difference in ms.
pub fn human_duration(d_ms: i64) -> String {
    if d_ms < -1000 {
        return "<invalid>".to_string();
    }
    if d_ms < 0 {
        return "0s".to_string();
    }
    let seconds = d_ms / 1000;
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        let d = hours / 24;
        return if h == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{h}h")
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        let y = hours / 24 / 365;
        return if dy == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{dy}d")
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// `duration.ShortHumanDuration` (used by `kubectl get events` LAST SEEN and RESTARTS).
pub fn short_human_duration(d_ms: i64) -> String {
    let seconds = d_ms / 1000;
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 60 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 24 {
        return format!("{hours}h");
    }
    if hours < 24 * 365 {
        return format!("{}d", hours / 24);
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_duration("500ms"), Ok(500));
        assert_eq!(parse_duration("90s"), Ok(90_000));
        assert_eq!(parse_duration("2m30s"), Ok(150_000));
        assert_eq!(parse_duration("1.5h"), Ok(5_400_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("3x").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn go_durations_format() {
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(500), "500ms");
        assert_eq!(format_duration(90_000), "1m30s");
        assert_eq!(format_duration(3_600_000), "1h0m0s");
        assert_eq!(format_duration(1_500), "1.5s");
    }

    #[test]
    fn human_duration_matches_upstream_table() {
        // Cases from apimachinery duration_test.go.
        let s = 1000i64;
        let cases = [
            (-2 * s, "<invalid>"),
            (-s / 2, "0s"),
            (s, "1s"),
            (119 * s, "119s"),
            (2 * 60 * s, "2m"),
            (2 * 60 * s + 5 * s, "2m5s"),
            (10 * 60 * s, "10m"),
            (179 * 60 * s, "179m"),
            (3 * 3600 * s, "3h"),
            (3 * 3600 * s + 30 * 60 * s, "3h30m"),
            (8 * 3600 * s, "8h"),
            (47 * 3600 * s, "47h"),
            (48 * 3600 * s, "2d"),
            (50 * 3600 * s, "2d2h"),
            (8 * 24 * 3600 * s, "8d"),
            (729 * 24 * 3600 * s, "729d"),
            (730 * 24 * 3600 * s, "2y"),
            (731 * 24 * 3600 * s, "2y1d"),
            (8 * 365 * 24 * 3600 * s, "8y"),
        ];
        for (d, want) in cases {
            assert_eq!(human_duration(d), want, "for {d}ms");
        }
    }

    #[test]
    fn timestamps_round_trip() {
        let t = k8s_time(90_500);
        assert_eq!(serde_json::to_value(&t).unwrap(), "2026-01-01T00:01:30Z");
        assert_eq!(from_k8s_time(&t), 90_000);
    }
}
