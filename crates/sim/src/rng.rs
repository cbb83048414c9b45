//! A small, portable, seeded PRNG (xoshiro256++ seeded by SplitMix64), split into one
//! stream per component so one component's draws never shift another's.

/// A deterministic random stream. Same seed and name ⇒ same sequence on every platform.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Folds `bytes` into an FNV-1a hash `h`.
fn fnv1a_fold(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// FNV-1a, used to derive a stream's seed from its name (stable across platforms).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_fold(FNV_OFFSET, bytes)
}

/// FNV-1a over a value's JSON text, without building the text.
pub fn fnv1a_json(v: &impl serde::Serialize) -> u64 {
    struct Fnv(u64);
    impl std::io::Write for Fnv {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = fnv1a_fold(self.0, bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Fnv(FNV_OFFSET);
    // Writing to `Fnv` cannot fail, and serializing a `Serialize` value to JSON fails only
    // for maps with non-string keys, which hash as far as they got.
    let _ = serde_json::to_writer(&mut h, v);
    h.0
}

impl Rng {
    /// A stream from a seed.
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    /// The stream named `name` of the world seeded with `seed` (e.g. "kube-scheduler").
    pub fn stream(seed: u64, name: &str) -> Rng {
        Rng::new(seed ^ fnv1a(name.as_bytes()).rotate_left(17))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (Go's `rand.Intn`); `n == 0` gives 0.
    pub fn intn(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Rejection sampling keeps the distribution exactly uniform.
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }

    /// A float in [0, 1).
    pub fn float(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_json_hashes_the_json_text() {
        let v = serde_json::json!({"phase": "Running", "conditions": [{"type": "Ready"}]});
        assert_eq!(fnv1a_json(&v), fnv1a(v.to_string().as_bytes()));
        assert_ne!(
            fnv1a_json(&v),
            fnv1a_json(&serde_json::json!({"phase": "Pending"}))
        );
    }

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..4)
            .map(|_| Rng::stream(42, "kube-scheduler").next_u64())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut s = Rng::stream(42, "kube-scheduler");
        let mut c = Rng::stream(42, "kube-controller-manager");
        assert_ne!(s.next_u64(), c.next_u64());
    }

    #[test]
    fn intn_stays_in_range_and_covers_it() {
        let mut r = Rng::new(7);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let v = r.intn(5) as usize;
            seen[v] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(r.intn(0), 0);
    }
}
