//! Share links (design §3.5): `#s=` + base64url(DEFLATE(scenario YAML)), read back safely.
//!
//! The compression is raw DEFLATE (RFC 1951: no zlib header or checksum, the shortest
//! form), written at miniz_oxide's level 9, and the base64url has no padding (RFC 4648 §5).
//! Reading is lenient about the wrapping (`#s=`, `s=`, other `&`-separated parameters,
//! padding, the standard `+/` alphabet, percent-escapes, stray whitespace, zlib-wrapped
//! data) and strict about the contents: decompression stops at [`MAX_DECODED_BYTES`]
//! without ever allocating more, and the result must be UTF-8. Every failure is a
//! [`ShareError`] value; nothing panics.

use std::fmt;

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use miniz_oxide::inflate::{self, TINFLStatus};

/// The most bytes a shared scenario may have once decompressed (1 MiB).
pub const MAX_DECODED_BYTES: usize = 1 << 20;

/// The longest fragment accepted. DEFLATE never grows data by more than a few bytes per
/// 64 KiB, so a valid link to a 1 MiB scenario is well under this.
pub const MAX_FRAGMENT_CHARS: usize = 1_500_000;

/// The URL fragment's prefix.
pub const FRAGMENT_PREFIX: &str = "#s=";

/// miniz_oxide's compression level for links (9 = best ordinary compression).
const LEVEL: u8 = 9;

const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Why a share link could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// The fragment holds no scenario (`#s=` with nothing after it, or nothing at all).
    Empty,
    /// The fragment has parameters but no `s`.
    MissingParameter,
    /// The fragment is longer than [`MAX_FRAGMENT_CHARS`].
    TooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// Not base64url.
    Base64 {
        /// What is wrong: `invalid character '!' at position 3`.
        detail: String,
    },
    /// The data does not decompress.
    Deflate {
        /// What is wrong.
        detail: String,
    },
    /// The scenario would be larger than [`MAX_DECODED_BYTES`] (a decompression bomb, or
    /// simply too big).
    TooLarge,
    /// The scenario is not UTF-8 text.
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::Empty => f.write_str("the share link holds no scenario (expected #s=…)"),
            ShareError::MissingParameter => {
                f.write_str("the share link has no s= parameter holding a scenario")
            }
            ShareError::TooLong { chars } => write!(
                f,
                "the share link is too long ({chars} characters; at most {MAX_FRAGMENT_CHARS})"
            ),
            ShareError::Base64 { detail } => {
                write!(f, "the share link is damaged: not base64url ({detail})")
            }
            ShareError::Deflate { detail } => {
                write!(f, "the share link is damaged: {detail}")
            }
            ShareError::TooLarge => write!(
                f,
                "the shared scenario is larger than {} KiB once decompressed",
                MAX_DECODED_BYTES / 1024
            ),
            ShareError::NotUtf8 { offset } => write!(
                f,
                "the shared scenario is not UTF-8 text (invalid byte at offset {offset})"
            ),
        }
    }
}

impl std::error::Error for ShareError {}

/// The link payload for a scenario: base64url (no padding) of its raw DEFLATE, without
/// the `#s=` prefix.
pub fn encode_share_payload(yaml: &str) -> String {
    let compressed = miniz_oxide::deflate::compress_to_vec(yaml.as_bytes(), LEVEL);
    URL_SAFE_LENIENT.encode(compressed)
}

/// The whole URL fragment for a scenario, `#s=` included, ready to append to the page's
/// address.
pub fn encode_share_fragment(yaml: &str) -> String {
    format!("{FRAGMENT_PREFIX}{}", encode_share_payload(yaml))
}

/// Reads the scenario YAML back from a fragment: `#s=…`, `s=…`, `#a=b&s=…` or the bare
/// payload.
pub fn decode_share_fragment(fragment: &str) -> Result<String, ShareError> {
    let chars = fragment.chars().count();
    if chars > MAX_FRAGMENT_CHARS {
        return Err(ShareError::TooLong { chars });
    }
    let payload = payload_of(fragment)?;
    let bytes = decode_base64(&payload)?;
    let raw = inflate_capped(&bytes)?;
    String::from_utf8(raw).map_err(|e| ShareError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

/// The `s` parameter's value (or the bare payload), percent-escapes undone and whitespace
/// dropped.
fn payload_of(fragment: &str) -> Result<String, ShareError> {
    let f = fragment.trim();
    let f = f.strip_prefix('#').unwrap_or(f);
    // A bare payload has '=' only as trailing padding; anything else is `name=value`.
    let is_param = |p: &str| p.trim_end_matches('=').contains('=');
    let value = match f.split('&').find_map(|p| p.strip_prefix("s=")) {
        Some(v) => v,
        None if !f.contains('&') && !is_param(f) => f,
        None => return Err(ShareError::MissingParameter),
    };
    let value = percent_decode(value);
    let value: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    if value.trim_end_matches('=').is_empty() {
        return Err(ShareError::Empty);
    }
    Ok(value)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn decode_base64(payload: &str) -> Result<Vec<u8>, ShareError> {
    // Accept the standard alphabet too: some tools re-encode links with it.
    let normalized: String = payload
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            c => c,
        })
        .collect();
    if let Some((i, c)) = normalized
        .chars()
        .enumerate()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(ShareError::Base64 {
            detail: format!("invalid character {c:?} at position {i}"),
        });
    }
    URL_SAFE_LENIENT
        .decode(normalized.as_bytes())
        .map_err(|e| ShareError::Base64 {
            detail: match e {
                base64::DecodeError::InvalidLength(n) => {
                    format!("{n} characters cannot be base64 (one too many)")
                }
                other => other.to_string(),
            },
        })
}

/// Inflates raw DEFLATE (or, failing that, zlib-wrapped DEFLATE), never producing or
/// allocating more than [`MAX_DECODED_BYTES`].
fn inflate_capped(data: &[u8]) -> Result<Vec<u8>, ShareError> {
    let raw_err = match inflate::decompress_to_vec_with_limit(data, MAX_DECODED_BYTES) {
        Ok(v) => return Ok(v),
        Err(e) => e.status,
    };
    if raw_err == TINFLStatus::HasMoreOutput {
        return Err(ShareError::TooLarge);
    }
    if looks_like_zlib(data) {
        match inflate::decompress_to_vec_zlib_with_limit(data, MAX_DECODED_BYTES) {
            Ok(v) => return Ok(v),
            Err(e) if e.status == TINFLStatus::HasMoreOutput => return Err(ShareError::TooLarge),
            Err(_) => {}
        }
    }
    Err(ShareError::Deflate {
        detail: match raw_err {
            TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                "its data ends too early (was the link cut short?)".to_string()
            }
            _ => "its data is not valid DEFLATE".to_string(),
        },
    })
}

/// A zlib header: deflate method, window ≤ 32 KiB, header checksum, no preset dictionary.
fn looks_like_zlib(data: &[u8]) -> bool {
    match data {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8
                && cmf >> 4 <= 7
                && flg & 0x20 == 0
                && (u16::from(*cmf) * 256 + u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "share_tests.rs"]
mod tests;
