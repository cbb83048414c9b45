//! The second line of a pod chip: the pod's IP or its status, shortened to the chip's
//! width (`ContainerCreating` ran into the next chip). The chip's tooltip and label keep
//! the whole status, as `kubectl get pods` prints it.

/// Characters of the 9.5 px status line that fit in a 70-unit chip (from x + 8 to its
/// right edge).
pub const CHIP_CHARS: usize = 11;

/// `s` as it fits in `max` characters: whole, as the short name the legend uses for a
/// long status kubectl prints, or cut with `…`.
pub fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let short = match s {
        "ContainerCreating" => Some("Creating"),
        "PodInitializing" => Some("Init…"),
        "CrashLoopBackOff" => Some("CrashLoop"),
        "ImagePullBackOff" => Some("PullBackOff"),
        "ErrImagePull" => Some("ErrPull"),
        "CreateContainerConfigError" => Some("ConfigErr"),
        _ => None,
    };
    match short {
        Some(t) if t.chars().count() <= max => t.to_string(),
        _ => {
            let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
            out.push('…');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[test]
    #[wasm_bindgen_test]
    fn a_long_status_fits_its_chip() {
        assert_eq!(fit("Running", CHIP_CHARS), "Running");
        assert_eq!(fit("10.244.1.2", CHIP_CHARS), "10.244.1.2");
        assert_eq!(fit("ContainerCreating", CHIP_CHARS), "Creating");
        assert_eq!(fit("CrashLoopBackOff", CHIP_CHARS), "CrashLoop");
        assert_eq!(fit("Init:CrashLoopBackOff", CHIP_CHARS), "Init:Crash…");
        assert_eq!(fit("Terminating", CHIP_CHARS), "Terminating");
        for s in ["ContainerCreating", "Init:CrashLoopBackOff", "Terminating"] {
            assert!(fit(s, CHIP_CHARS).chars().count() <= CHIP_CHARS, "{s}");
        }
    }
}
