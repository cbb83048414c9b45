//! The image catalog: what known images weigh, how their tags look, and how their
//! containers behave (ports served, start time, exit, signal handling).

/// How a container of an image behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Behaviour {
    /// Time from start until the process serves (ms).
    pub start_ms: u64,
    /// Ports it listens on (if the pod declares none).
    pub ports: Vec<i32>,
    /// Exits on its own after this long with this code (None: runs until stopped).
    pub exits: Option<(u64, i32)>,
    /// Whether PID 1 handles SIGTERM (else SIGKILL after the grace period: exit 137).
    pub handles_sigterm: bool,
    /// Time to shut down after SIGTERM (ms).
    pub stop_ms: u64,
    /// Process names shown by `ps` (main process first).
    pub processes: Vec<String>,
}

/// A catalog entry.
#[derive(Clone, Debug)]
pub struct CatalogImage {
    /// Repository as users write it (`nginx`, `registry.k8s.io/pause`).
    pub repo: &'static str,
    /// Full reference prefix (`docker.io/library/nginx`).
    pub full: &'static str,
    /// Compressed size in bytes (what `crictl images` shows).
    pub size: u64,
    /// Whether `tag` is a tag this repository publishes.
    pub tag_ok: fn(&str) -> bool,
}

fn semverish(t: &str) -> bool {
    let base = t.split('-').next().unwrap_or("");
    !base.is_empty()
        && base
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn nginx_tag(t: &str) -> bool {
    matches!(
        t,
        "latest"
            | "stable"
            | "mainline"
            | "alpine"
            | "stable-alpine"
            | "mainline-alpine"
            | "alpine-slim"
            | "perl"
    ) || (semverish(t) && t.starts_with('1'))
}

fn common_tag(t: &str) -> bool {
    matches!(
        t,
        "latest" | "alpine" | "stable" | "bookworm" | "bullseye" | "slim" | "lts"
    ) || semverish(t)
}

const CATALOG: &[CatalogImage] = &[
    CatalogImage {
        repo: "nginx",
        full: "docker.io/library/nginx",
        size: 72_000_000,
        tag_ok: nginx_tag,
    },
    CatalogImage {
        repo: "httpd",
        full: "docker.io/library/httpd",
        size: 58_000_000,
        tag_ok: common_tag,
    },
    CatalogImage {
        repo: "redis",
        full: "docker.io/library/redis",
        size: 45_000_000,
        tag_ok: common_tag,
    },
    CatalogImage {
        repo: "mysql",
        full: "docker.io/library/mysql",
        size: 170_000_000,
        tag_ok: common_tag,
    },
    CatalogImage {
        repo: "postgres",
        full: "docker.io/library/postgres",
        size: 160_000_000,
        tag_ok: common_tag,
    },
    CatalogImage {
        repo: "busybox",
        full: "docker.io/library/busybox",
        size: 2_200_000,
        tag_ok: common_tag,
    },
    CatalogImage {
        repo: "registry.k8s.io/pause",
        full: "registry.k8s.io/pause",
        size: 320_000,
        tag_ok: semverish,
    },
];

/// A parsed image reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    /// What the user wrote.
    pub original: String,
    /// Repository without registry defaults (`nginx`, `myregistry:5000/team/app`).
    pub repo: String,
    /// Tag (empty with a digest).
    pub tag: String,
    /// Digest, if any.
    pub digest: Option<String>,
    /// The normalized full name (`docker.io/library/nginx:1.27`).
    pub full: String,
}

/// Parses an image reference the way containerd normalizes it.
pub fn parse(image: &str) -> ImageRef {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d.to_string())),
        None => (image, None),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repo, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (
            &name[..last_slash + i],
            name[last_slash + i + 1..].to_string(),
        ),
        None => (
            name,
            if digest.is_some() {
                String::new()
            } else {
                "latest".to_string()
            },
        ),
    };
    let first = repo.split('/').next().unwrap_or("");
    let has_registry =
        repo.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let full_repo = if has_registry {
        repo.to_string()
    } else if repo.contains('/') {
        format!("docker.io/{repo}")
    } else {
        format!("docker.io/library/{repo}")
    };
    let full = match &digest {
        Some(d) if tag.is_empty() => format!("{full_repo}@{d}"),
        _ => format!("{full_repo}:{tag}"),
    };
    let short = repo
        .strip_prefix("docker.io/library/")
        .or_else(|| repo.strip_prefix("docker.io/"))
        .unwrap_or(repo);
    ImageRef {
        original: image.to_string(),
        repo: short.to_string(),
        tag,
        digest,
        full,
    }
}

/// What pulling an image gives: its size, or the registry's error.
pub fn resolve(image: &ImageRef) -> Result<u64, String> {
    if let Some(c) = CATALOG
        .iter()
        .find(|c| c.repo == image.repo || c.full.ends_with(&format!("/{}", image.repo)))
    {
        if image.digest.is_some() || (c.tag_ok)(&image.tag) {
            return Ok(c.size);
        }
        return Err(not_found(image));
    }
    if CATALOG.iter().any(|c| is_typo(&image.repo, c.repo)) {
        return Err(access_denied(image));
    }
    // Any other well-formed image runs as a generic container (about 50 MB).
    Ok(50_000_000 + (crate::rng::fnv1a(image.full.as_bytes()) % 40_000_000))
}

fn not_found(image: &ImageRef) -> String {
    format!(
        "failed to pull and unpack image \"{}\": failed to resolve reference \"{}\": {}: not found",
        image.full, image.full, image.full
    )
}

fn access_denied(image: &ImageRef) -> String {
    format!(
        "failed to pull and unpack image \"{f}\": failed to resolve reference \"{f}\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed",
        f = image.full
    )
}

/// Whether `a` is one edit (insert, delete, substitute or adjacent swap) from `b`.
fn is_typo(a: &str, b: &str) -> bool {
    if a == b {
        return false;
    }
    let (x, y): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if x.len() == y.len() {
        let diffs: Vec<usize> = (0..x.len()).filter(|&i| x[i] != y[i]).collect();
        return diffs.len() == 1
            || (diffs.len() == 2
                && diffs[1] == diffs[0] + 1
                && x[diffs[0]] == y[diffs[1]]
                && x[diffs[1]] == y[diffs[0]]);
    }
    let (long, short) = if x.len() > y.len() {
        (&x, &y)
    } else {
        (&y, &x)
    };
    if long.len() != short.len() + 1 {
        return false;
    }
    (0..long.len()).any(|skip| {
        let mut v = long.clone();
        v.remove(skip);
        &v == short
    })
}

/// How a container of `image` running `command` behaves.
pub fn behaviour(image: &ImageRef, command: &[String], cpus: u32) -> Behaviour {
    let cmdline = command.join(" ");
    let generic = Behaviour {
        start_ms: 200,
        ports: Vec::new(),
        exits: None,
        handles_sigterm: true,
        stop_ms: 100,
        processes: vec![command.first().cloned().unwrap_or_else(|| "/app".into())],
    };
    match image.repo.as_str() {
        "nginx" => Behaviour {
            start_ms: 150,
            ports: vec![80],
            processes: std::iter::once("nginx: master process nginx -g daemon off;".to_string())
                .chain((0..cpus.max(1)).map(|_| "nginx: worker process".to_string()))
                .collect(),
            ..generic
        },
        "httpd" => Behaviour {
            start_ms: 300,
            ports: vec![80],
            processes: vec!["httpd -DFOREGROUND".into()],
            ..generic
        },
        "redis" => Behaviour {
            start_ms: 100,
            ports: vec![6379],
            processes: vec!["redis-server *:6379".into()],
            ..generic
        },
        "mysql" => Behaviour {
            start_ms: 8000,
            ports: vec![3306, 33060],
            stop_ms: 2000,
            processes: vec!["mysqld".into()],
            ..generic
        },
        "postgres" => Behaviour {
            start_ms: 3000,
            ports: vec![5432],
            stop_ms: 500,
            processes: vec!["postgres".into()],
            ..generic
        },
        "busybox" => {
            let exits = if command.is_empty()
                || cmdline.contains("exit 0")
                || cmdline == "true"
                || cmdline.starts_with("echo")
            {
                Some((50, 0))
            } else if let Some(code) = exit_code(&cmdline) {
                Some((50, code))
            } else {
                None
            };
            Behaviour {
                start_ms: 20,
                exits,
                handles_sigterm: false,
                processes: vec![if cmdline.is_empty() {
                    "sh".into()
                } else {
                    cmdline.clone()
                }],
                ..generic
            }
        }
        _ => generic,
    }
}

fn exit_code(cmd: &str) -> Option<i32> {
    let i = cmd.find("exit ")?;
    cmd[i + 5..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_normalize_like_containerd() {
        assert_eq!(parse("nginx").full, "docker.io/library/nginx:latest");
        assert_eq!(parse("nginx:1.27").full, "docker.io/library/nginx:1.27");
        assert_eq!(parse("bitnami/redis:7").full, "docker.io/bitnami/redis:7");
        assert_eq!(
            parse("registry.k8s.io/pause:3.10").repo,
            "registry.k8s.io/pause"
        );
        assert_eq!(
            parse("localhost:5000/app").full,
            "localhost:5000/app:latest"
        );
        assert_eq!(parse("nginx@sha256:abc").tag, "");
    }

    #[test]
    fn catalog_tags_typos_and_generic_images() {
        assert_eq!(resolve(&parse("nginx:1.27")), Ok(72_000_000));
        assert!(resolve(&parse("nginx:no-such-tag-42"))
            .unwrap_err()
            .contains(": not found"));
        assert!(resolve(&parse("ngnix"))
            .unwrap_err()
            .contains("pull access denied"));
        assert!(resolve(&parse("ghcr.io/acme/shop:v3")).is_ok());
    }
}
