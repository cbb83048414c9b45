use super::*;
use crate::rng::Rng;

const SCENARIO: &str = "apiVersion: kubeloop.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: nginx-rollout\nspec:\n  seed: 42\n  files:\n    d.yaml: |\n      apiVersion: apps/v1\n      kind: Deployment\n  steps:\n  - at: 0s\n    run: kubectl apply -f d.yaml\n  - {at: 30s, run: \"kubectl get pods -o wide # ünïcödé ✓\"}\n";

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_LENIENT.encode(bytes)
}

#[test]
fn links_round_trip() {
    let fragment = encode_share_fragment(SCENARIO);
    assert!(fragment.starts_with("#s="));
    let payload = &fragment[3..];
    assert!(payload
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    assert_eq!(encode_share_payload(SCENARIO), payload);
    assert!(payload.len() < SCENARIO.len());
    assert_eq!(decode_share_fragment(&fragment).unwrap(), SCENARIO);
    assert_eq!(decode_share_fragment(payload).unwrap(), SCENARIO);
    assert_eq!(
        decode_share_fragment(&format!("s={payload}")).unwrap(),
        SCENARIO
    );
    assert_eq!(
        decode_share_fragment(&format!("#lang=zh&s={payload}&x=1")).unwrap(),
        SCENARIO
    );
    assert_eq!(decode_share_fragment("#s=").unwrap_err(), ShareError::Empty);
    assert_eq!(
        decode_share_fragment(&encode_share_fragment("")).unwrap(),
        ""
    );
}

#[test]
fn encoding_is_deterministic_raw_deflate() {
    assert_eq!(
        encode_share_payload(SCENARIO),
        encode_share_payload(SCENARIO)
    );
    let bytes = URL_SAFE_LENIENT
        .decode(encode_share_payload(SCENARIO))
        .unwrap();
    // Raw DEFLATE: no zlib header, and it inflates as such.
    assert!(!looks_like_zlib(&bytes) || inflate::decompress_to_vec(&bytes).is_ok());
    assert_eq!(
        inflate::decompress_to_vec(&bytes).unwrap(),
        SCENARIO.as_bytes()
    );
}

#[test]
fn lenient_about_wrapping() {
    let compressed = miniz_oxide::deflate::compress_to_vec(SCENARIO.as_bytes(), 6);
    let standard = base64::engine::general_purpose::STANDARD.encode(&compressed);
    assert_eq!(
        decode_share_fragment(&format!("#s={standard}")).unwrap(),
        SCENARIO
    );
    let padded = base64::engine::general_purpose::URL_SAFE.encode(&compressed);
    assert_eq!(
        decode_share_fragment(&format!("#s={padded}")).unwrap(),
        SCENARIO
    );
    let escaped = padded.replace('=', "%3D");
    assert_eq!(
        decode_share_fragment(&format!("#s={escaped}")).unwrap(),
        SCENARIO
    );
    let spaced: String = b64(&compressed)
        .chars()
        .enumerate()
        .flat_map(|(i, c)| if i % 40 == 39 { vec![c, '\n'] } else { vec![c] })
        .collect();
    assert_eq!(
        decode_share_fragment(&format!("  #s={spaced}\n")).unwrap(),
        SCENARIO
    );
    let zlib = miniz_oxide::deflate::compress_to_vec_zlib(SCENARIO.as_bytes(), 6);
    assert_eq!(decode_share_fragment(&b64(&zlib)).unwrap(), SCENARIO);
}

#[test]
fn garbage_base64_is_an_error() {
    assert_eq!(
        decode_share_fragment("#s=ab!cd").unwrap_err(),
        ShareError::Base64 {
            detail: "invalid character '!' at position 2".into()
        }
    );
    assert!(matches!(
        decode_share_fragment("#s=abcde").unwrap_err(),
        ShareError::Base64 { .. }
    ));
    assert_eq!(
        decode_share_fragment("#view=nodes").unwrap_err(),
        ShareError::MissingParameter
    );
    assert_eq!(decode_share_fragment("").unwrap_err(), ShareError::Empty);
    assert_eq!(
        decode_share_fragment("#s=ab!cd").unwrap_err().to_string(),
        "the share link is damaged: not base64url (invalid character '!' at position 2)"
    );
}

#[test]
fn truncated_or_corrupt_deflate_is_an_error() {
    let compressed = miniz_oxide::deflate::compress_to_vec(SCENARIO.as_bytes(), 9);
    let cut = &compressed[..compressed.len() / 2];
    let e = decode_share_fragment(&b64(cut)).unwrap_err();
    assert_eq!(
        e,
        ShareError::Deflate {
            detail: "its data ends too early (was the link cut short?)".into()
        }
    );
    // Block type 3 is reserved.
    let e = decode_share_fragment(&b64(&[0x07, 0x00, 0x00])).unwrap_err();
    assert!(matches!(e, ShareError::Deflate { .. }), "{e:?}");
}

#[test]
fn invalid_utf8_is_an_error() {
    let compressed = miniz_oxide::deflate::compress_to_vec(b"kind: \xff\xfe", 9);
    assert_eq!(
        decode_share_fragment(&b64(&compressed)).unwrap_err(),
        ShareError::NotUtf8 { offset: 6 }
    );
}

/// Writes DEFLATE's bit stream: fields LSB first, Huffman codes MSB first.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, len: u32) {
        self.acc |= value << self.n;
        self.n += len;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    fn huff(&mut self, code: u64, len: u32) {
        let mut rev = 0;
        for i in 0..len {
            rev |= ((code >> i) & 1) << (len - 1 - i);
        }
        self.put(rev, len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A raw DEFLATE stream of `n` zero bytes: one fixed-Huffman block, a literal 0, then
/// copies of 258 bytes at distance 1 (13 bits each).
fn zero_bomb(n: usize) -> Vec<u8> {
    let mut b = Bits {
        out: Vec::new(),
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // BFINAL
    b.put(1, 2); // BTYPE = fixed Huffman
    b.huff(0x30, 8); // literal 0
    let mut left = n - 1;
    while left >= 258 {
        b.huff(0xc5, 8); // length symbol 285 = 258
        b.huff(0, 5); // distance symbol 0 = 1
        left -= 258;
    }
    for _ in 0..left {
        b.huff(0x30, 8);
    }
    b.huff(0, 7); // end of block
    b.finish()
}

#[test]
fn decompression_bombs_are_refused_without_inflating_them() {
    let small = zero_bomb(1000);
    assert_eq!(inflate::decompress_to_vec(&small).unwrap(), vec![0u8; 1000]);

    let bomb = zero_bomb(100 * 1024 * 1024);
    let fragment = format!("#s={}", b64(&bomb));
    assert!(fragment.len() < MAX_FRAGMENT_CHARS);
    assert_eq!(
        decode_share_fragment(&fragment).unwrap_err(),
        ShareError::TooLarge
    );
    assert_eq!(
        ShareError::TooLarge.to_string(),
        "the shared scenario is larger than 1024 KiB once decompressed"
    );
    let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&vec![b'a'; 2 * MAX_DECODED_BYTES], 6);
    assert_eq!(
        decode_share_fragment(&b64(&zlib)).unwrap_err(),
        ShareError::TooLarge
    );
}

#[test]
fn overlong_fragments_are_refused_before_decoding() {
    let long = "A".repeat(MAX_FRAGMENT_CHARS + 1);
    assert_eq!(
        decode_share_fragment(&long).unwrap_err(),
        ShareError::TooLong {
            chars: MAX_FRAGMENT_CHARS + 1
        }
    );
}

/// Random text: bytes from a small alphabet heavy in YAML and JSON punctuation.
fn random_text(rng: &mut Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"ab: -{}[],\"'\n\n  #&*!|>%@`\t0123456789.~?=/";
    let mut bytes = Vec::with_capacity(len);
    for _ in 0..len {
        if rng.intn(20) == 0 {
            bytes.push(rng.next_u64() as u8);
        } else {
            bytes.push(ALPHABET[rng.intn(ALPHABET.len() as u64) as usize]);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `base` with a few random edits.
fn mutate(rng: &mut Rng, base: &str) -> String {
    let mut chars: Vec<char> = base.chars().collect();
    for _ in 0..1 + rng.intn(4) {
        let at = rng.intn(chars.len() as u64 + 1) as usize;
        let c = random_text(rng, 1).chars().next().unwrap_or(' ');
        match rng.intn(3) {
            0 => chars.insert(at, c),
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ if at < chars.len() => chars[at] = c,
            _ => chars.push(c),
        }
    }
    chars.into_iter().collect()
}

#[test]
fn random_input_never_panics_any_parser() {
    const MANIFESTS: &str = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n---\n{\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\"}\n";
    const JSON: &str = "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"spec\": {\"containers\": [{\"name\": \"a\"}]}}";
    let mut rng = Rng::new(20260101);
    let payload = encode_share_payload(SCENARIO);
    // KUBELOOP_FUZZ_ITERATIONS=100000 cargo test random_input explores further.
    let iterations = std::env::var("KUBELOOP_FUZZ_ITERATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1500u64);
    for i in 0..iterations {
        let text = match i % 5 {
            0 => {
                let len = rng.intn(200) as usize;
                random_text(&mut rng, len)
            }
            1 => mutate(&mut rng, SCENARIO),
            2 => mutate(&mut rng, MANIFESTS),
            3 => mutate(&mut rng, JSON),
            _ => {
                let once = mutate(&mut rng, SCENARIO);
                mutate(&mut rng, &once)
            }
        };
        let _ = crate::scenario::parse_scenario(&text);
        let stream = crate::manifest::parse_manifest_stream(&text, "f.yaml");
        for m in &stream.manifests {
            let _ = crate::manifest::locate_field(
                &text,
                m,
                "spec.containers[0].name",
                crate::yamlpos::Target::Key,
            );
        }
        for e in &stream.errors {
            assert!(e.pos.line >= 1 && e.pos.column >= 1, "{text:?}: {e:?}");
        }
        let _ = crate::yamlpos::locate(
            &text,
            (i % 3) as usize,
            "a.b[1]",
            crate::yamlpos::Target::Value,
        );
        let _ = decode_share_fragment(&text);
        let _ = decode_share_fragment(&mutate(&mut rng, &payload));
        let bytes: Vec<u8> = (0..rng.intn(64)).map(|_| rng.next_u64() as u8).collect();
        let _ = decode_share_fragment(&b64(&bytes));
    }
}
