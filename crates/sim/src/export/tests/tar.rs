//! The tar archive read back, and extracted by the system's tar.

use super::{file, gallery};
use crate::export::*;

/// (name, mode, typeflag, data) of each tar entry, read back from the bytes.
fn read_tar(bytes: &[u8]) -> Vec<(String, u32, u8, Vec<u8>)> {
    let field =
        |h: &[u8]| String::from_utf8(h.iter().take_while(|&&b| b != 0).copied().collect()).unwrap();
    let octal = |h: &[u8]| u64::from_str_radix(field(h).trim(), 8).unwrap();
    let mut out = Vec::new();
    let mut i = 0;
    let mut pax_path = None;
    while i + 512 <= bytes.len() && bytes[i..i + 512].iter().any(|&b| b != 0) {
        let h = &bytes[i..i + 512];
        let sum: u64 = h
            .iter()
            .enumerate()
            .map(|(j, &b)| {
                if (148..156).contains(&j) {
                    32
                } else {
                    u64::from(b)
                }
            })
            .sum();
        assert_eq!(sum, octal(&h[148..156]), "checksum");
        assert_eq!(&h[257..263], b"ustar\0");
        assert_eq!(octal(&h[136..148]), 0, "mtime 0");
        let size = octal(&h[124..136]) as usize;
        let data = bytes[i + 512..i + 512 + size].to_vec();
        let prefix = field(&h[345..500]);
        let mut name = field(&h[0..100]);
        if !prefix.is_empty() {
            name = format!("{prefix}/{name}");
        }
        if h[156] == b'x' {
            let rec = String::from_utf8(data.clone()).unwrap();
            pax_path = rec
                .split_once(" path=")
                .map(|(_, p)| p.trim_end().to_string());
        } else {
            out.push((
                pax_path.take().unwrap_or(name),
                octal(&h[100..108]) as u32,
                h[156],
                data,
            ));
        }
        i += 512 + size.div_ceil(512) * 512;
    }
    out
}

#[test]
fn tar_holds_the_directory_with_run_sh_executable() {
    let files = to_kind(&gallery("nginx-basic"));
    let tar = to_tar(&files, "nginx-basic");
    assert_eq!(tar.len() % 512, 0);
    let entries = read_tar(&tar);
    let listing: Vec<(String, u32)> = entries.iter().map(|e| (e.0.clone(), e.1)).collect();
    assert_eq!(
        listing,
        [
            ("nginx-basic/".to_string(), 0o755),
            ("nginx-basic/README.md".to_string(), 0o644),
            ("nginx-basic/kind-config.yaml".to_string(), 0o644),
            ("nginx-basic/manifests/".to_string(), 0o755),
            ("nginx-basic/manifests/nginx-deploy.yaml".to_string(), 0o644),
            ("nginx-basic/run.sh".to_string(), 0o755),
        ]
    );
    assert_eq!(entries[5].3, file(&files, RUN_SH).as_bytes());
}

#[test]
fn tar_extracts_with_the_system_tar_even_with_long_names() {
    let long = format!("{}/{}.yaml", "d".repeat(120), "f".repeat(110));
    let files = vec![
        ("run.sh".to_string(), "echo hi\n".to_string()),
        (long.clone(), "x: 1\n".to_string()),
    ];
    let tmp = std::env::temp_dir().join(format!("kubeloop-tar-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("a.tar"), to_tar(&files, "out")).unwrap();
    let Ok(st) = std::process::Command::new("tar")
        .arg("-xf")
        .arg("a.tar")
        .current_dir(&tmp)
        .status()
    else {
        return; // no tar on this machine: read_tar's checks above still ran
    };
    assert!(st.success());
    assert_eq!(
        std::fs::read_to_string(tmp.join("out").join(&long)).unwrap(),
        "x: 1\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(tmp.join("out/run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "run.sh is executable");
    let _ = std::fs::remove_dir_all(&tmp);
    let names: Vec<String> = read_tar(&to_tar(&files, "out"))
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert!(names.contains(&format!("out/{long}")));
}
