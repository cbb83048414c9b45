//! A plain ustar archive of an exported directory, for the page's download button:
//! deterministic (mtime 0, uid/gid 0, sorted as given), `run.sh` executable.

/// One 512-byte tar block.
const BLOCK: usize = 512;

/// The archive of `files` (relative path → contents) under the directory `root`: a
/// directory entry for `root/` and each parent, then the files in the order given. Paths
/// too long for ustar's name and prefix fields get a POSIX pax `path` record.
pub fn to_tar(files: &[(String, String)], root: &str) -> Vec<u8> {
    let root = root.trim_matches('/');
    let mut out = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    let add_dir = |out: &mut Vec<u8>, dirs: &mut Vec<String>, d: String| {
        if !dirs.contains(&d) {
            entry(out, &format!("{d}/"), b"", 0o755, b'5');
            dirs.push(d);
        }
    };
    add_dir(&mut out, &mut dirs, root.to_string());
    for (path, contents) in files {
        let full = format!("{root}/{path}");
        let parts: Vec<&str> = full.split('/').collect();
        for i in 1..parts.len() {
            add_dir(&mut out, &mut dirs, parts[..i].join("/"));
        }
        let mode = if path.ends_with(".sh") { 0o755 } else { 0o644 };
        entry(&mut out, &full, contents.as_bytes(), mode, b'0');
    }
    out.extend([0u8; 2 * BLOCK]);
    out
}

/// Writes one entry (its pax header first if the name does not fit) and its data.
fn entry(out: &mut Vec<u8>, name: &str, data: &[u8], mode: u32, kind: u8) {
    let (prefix, short) = match split_name(name) {
        Some(p) => p,
        None => {
            let record = pax_record("path", name);
            write_header(out, "", "././@PaxHeader", record.len(), 0o644, b'x');
            write_data(out, record.as_bytes());
            ("", truncate(name, 100))
        }
    };
    write_header(out, prefix, short, data.len(), mode, kind);
    write_data(out, data);
}

/// `name` as ustar's (prefix ≤ 155 bytes, name ≤ 100 bytes), split at a `/`.
fn split_name(name: &str) -> Option<(&str, &str)> {
    if name.len() <= 100 {
        return Some(("", name));
    }
    let bytes = name.as_bytes();
    (0..name.len().min(156)).rev().find_map(|i| {
        (bytes[i] == b'/' && name.len() - i - 1 <= 100 && i > 0)
            .then(|| (&name[..i], &name[i + 1..]))
    })
}

/// The first `n` bytes of `s`, cut at a character boundary.
fn truncate(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A pax record `"<len> key=value\n"`, where len counts the whole record.
fn pax_record(key: &str, value: &str) -> String {
    let body = format!(" {key}={value}\n");
    let mut len = body.len() + 1;
    while format!("{len}{body}").len() != len {
        len += 1;
    }
    format!("{len}{body}")
}

fn write_header(out: &mut Vec<u8>, prefix: &str, name: &str, size: usize, mode: u32, kind: u8) {
    let mut h = [0u8; BLOCK];
    put(&mut h[0..100], name.as_bytes());
    put(&mut h[100..108], format!("{mode:07o}").as_bytes());
    put(&mut h[108..116], b"0000000");
    put(&mut h[116..124], b"0000000");
    put(&mut h[124..136], format!("{size:011o}").as_bytes());
    put(&mut h[136..148], b"00000000000");
    h[148..156].copy_from_slice(b"        ");
    h[156] = kind;
    put(&mut h[257..263], b"ustar\0");
    put(&mut h[263..265], b"00");
    put(&mut h[265..297], b"root");
    put(&mut h[297..329], b"root");
    put(&mut h[329..337], b"0000000");
    put(&mut h[337..345], b"0000000");
    put(&mut h[345..500], prefix.as_bytes());
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    put(&mut h[148..156], format!("{sum:06o}\0 ").as_bytes());
    out.extend_from_slice(&h);
}

/// Copies `src` into the field, cut to its width (fields are NUL-padded).
fn put(field: &mut [u8], src: &[u8]) {
    let n = src.len().min(field.len());
    field[..n].copy_from_slice(&src[..n]);
}

fn write_data(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(data);
    let pad = (BLOCK - data.len() % BLOCK) % BLOCK;
    out.extend(std::iter::repeat_n(0u8, pad));
}
