//! The image catalog: which images exist, what they weigh, how their tags look, and the
//! errors containerd gives for everything else (unknown tags, typos, bad registries).

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

/// `major[.minor[.patch]]` (with an optional `-variant`) within the given bounds.
fn version_in(t: &str, major: std::ops::RangeInclusive<u32>, max_minor: u32) -> bool {
    if !semverish(t) {
        return false;
    }
    let base = t.split('-').next().unwrap_or("");
    let parts: Vec<u32> = base.split('.').filter_map(|p| p.parse().ok()).collect();
    match parts.as_slice() {
        [m] => major.contains(m),
        [m, n] => major.contains(m) && *n <= max_minor,
        [m, n, p] => major.contains(m) && *n <= max_minor && *p <= 40,
        _ => false,
    }
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
            | "bookworm"
    ) || version_in(t, 1..=1, 29)
}

fn named_tag(t: &str) -> bool {
    matches!(
        t,
        "latest"
            | "alpine"
            | "stable"
            | "bookworm"
            | "bullseye"
            | "slim"
            | "lts"
            | "oracle"
            | "innovation"
            | "debian"
            | "trixie"
            | "musl"
            | "glibc"
            | "uclibc"
    )
}

fn common_tag(t: &str) -> bool {
    named_tag(t) || version_in(t, 1..=30, 40)
}

fn mysql_tag(t: &str) -> bool {
    named_tag(t) || version_in(t, 5..=9, 7) && !t.starts_with("6") && !t.starts_with("7")
}

fn redis_tag(t: &str) -> bool {
    named_tag(t) || version_in(t, 2..=8, 4)
}

fn postgres_tag(t: &str) -> bool {
    named_tag(t) || version_in(t, 9..=18, 6)
}

fn busybox_tag(t: &str) -> bool {
    named_tag(t) || version_in(t, 1..=1, 37)
}

fn perl_tag(t: &str) -> bool {
    named_tag(t) || version_in(t, 5..=5, 42)
}

fn httpd_tag(t: &str) -> bool {
    named_tag(t) || version_in(t, 2..=2, 4)
}

fn v_semver(t: &str) -> bool {
    t.strip_prefix('v').is_some_and(semverish)
}

fn agnhost_tag(t: &str) -> bool {
    semverish(t) && t.starts_with("2.")
}

fn echoserver_tag(t: &str) -> bool {
    matches!(t, "1.4" | "1.5" | "1.6" | "1.8" | "1.9" | "1.10")
}

fn gb_tag(t: &str) -> bool {
    matches!(t, "v4" | "v5" | "v6")
}

fn gb_follower_tag(t: &str) -> bool {
    matches!(t, "v1" | "v2")
}

/// `registry.k8s.io/nginx-slim` (the StatefulSet tutorial's image): tags 0.1 … 0.27.
fn nginx_slim_tag(t: &str) -> bool {
    t.strip_prefix("0.")
        .and_then(|m| m.parse::<u32>().ok())
        .is_some_and(|m| (1..=27).contains(&m))
}

/// kindnetd's date tags (`v20251212-v0.29.0-alpha-105-g20ccfc88`).
fn kindnetd_tag(t: &str) -> bool {
    t == "latest"
        || t.strip_prefix('v').is_some_and(|r| {
            r.len() > 9 && r[..8].chars().all(|c| c.is_ascii_digit()) && r[8..].starts_with('-')
        })
}

fn local_path_tag(t: &str) -> bool {
    t == "latest" || (v_semver(t) && t.starts_with("v0.0."))
}

const fn img(
    repo: &'static str,
    full: &'static str,
    size: u64,
    tag_ok: fn(&str) -> bool,
) -> CatalogImage {
    CatalogImage {
        repo,
        full,
        size,
        tag_ok,
    }
}

/// Images the simulated registries serve (sizes as `crictl images` shows them).
const CATALOG: &[CatalogImage] = &[
    img("nginx", "docker.io/library/nginx", 72_000_000, nginx_tag),
    img("httpd", "docker.io/library/httpd", 58_200_000, httpd_tag),
    img("redis", "docker.io/library/redis", 45_000_000, redis_tag),
    img("mysql", "docker.io/library/mysql", 170_000_000, mysql_tag),
    img(
        "postgres",
        "docker.io/library/postgres",
        160_000_000,
        postgres_tag,
    ),
    img(
        "busybox",
        "docker.io/library/busybox",
        2_200_000,
        busybox_tag,
    ),
    img("perl", "docker.io/library/perl", 331_000_000, perl_tag),
    img(
        "curlimages/curl",
        "docker.io/curlimages/curl",
        11_300_000,
        common_tag,
    ),
    img(
        "registry.k8s.io/pause",
        "registry.k8s.io/pause",
        320_000,
        semverish,
    ),
    img(
        "registry.k8s.io/coredns/coredns",
        "registry.k8s.io/coredns/coredns",
        20_939_036,
        v_semver,
    ),
    img(
        "registry.k8s.io/e2e-test-images/agnhost",
        "registry.k8s.io/e2e-test-images/agnhost",
        51_400_000,
        agnhost_tag,
    ),
    img(
        "registry.k8s.io/e2e-test-images/jessie-dnsutils",
        "registry.k8s.io/e2e-test-images/jessie-dnsutils",
        112_300_000,
        semverish,
    ),
    img(
        "registry.k8s.io/echoserver",
        "registry.k8s.io/echoserver",
        46_200_000,
        echoserver_tag,
    ),
    img(
        "registry.k8s.io/hpa-example",
        "registry.k8s.io/hpa-example",
        138_000_000,
        named_tag,
    ),
    img(
        "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend",
        "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend",
        148_000_000,
        gb_tag,
    ),
    img(
        "us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower",
        "us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower",
        38_400_000,
        gb_follower_tag,
    ),
    img(
        "registry.k8s.io/nginx-slim",
        "registry.k8s.io/nginx-slim",
        20_100_000,
        nginx_slim_tag,
    ),
    img(
        "quay.io/fluentd_elasticsearch/fluentd",
        "quay.io/fluentd_elasticsearch/fluentd",
        141_000_000,
        v_semver,
    ),
    img(
        "registry.k8s.io/kube-proxy",
        "registry.k8s.io/kube-proxy",
        30_600_000,
        v_semver,
    ),
    img(
        "kindest/kindnetd",
        "docker.io/kindest/kindnetd",
        40_700_000,
        kindnetd_tag,
    ),
    img(
        "registry.k8s.io/ingress-nginx/controller",
        "registry.k8s.io/ingress-nginx/controller",
        105_300_000,
        v_semver,
    ),
    img(
        "rancher/local-path-provisioner",
        "docker.io/rancher/local-path-provisioner",
        19_800_000,
        local_path_tag,
    ),
];

/// Registries that answer; a host one typo away from one of these does not resolve.
const REGISTRIES: &[&str] = &[
    "docker.io",
    "registry.k8s.io",
    "us-docker.pkg.dev",
    "ghcr.io",
    "quay.io",
    "gcr.io",
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

/// What pulling an image gives: its size, or containerd's error as the kubelet sees it
/// over gRPC (`rpc error: code = NotFound desc = failed to pull and unpack image …`).
pub fn resolve(image: &ImageRef) -> Result<u64, String> {
    let host = image.full.split('/').next().unwrap_or("");
    if !REGISTRIES.contains(&host) && REGISTRIES.iter().any(|r| is_typo(host, r)) {
        return Err(no_such_host(image, host));
    }
    if let Some(c) = CATALOG
        .iter()
        .find(|c| c.repo == image.repo || c.full == full_repo(image))
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

fn full_repo(image: &ImageRef) -> String {
    match image.full.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => r.to_string(),
        _ => image.full.clone(),
    }
}

/// Why an image reference cannot even be parsed (kubelet's `InvalidImageName`).
pub fn invalid_name(image: &str) -> Option<String> {
    let name = image.split('@').next().unwrap_or("");
    let repo = match name.rfind(':') {
        Some(i) if !name[i..].contains('/') => &name[..i],
        _ => name,
    };
    if image.is_empty()
        || image.contains(char::is_whitespace)
        || repo.ends_with('/')
        || repo.is_empty()
    {
        return Some(format!(
            "Failed to apply default image tag \"{image}\": couldn't parse image name \"{image}\": invalid reference format"
        ));
    }
    if repo.chars().any(|c| c.is_ascii_uppercase()) {
        let normalized = parse(image).full;
        let path = normalized.split_once('/').map_or("", |(_, p)| p);
        let path = path.rsplit_once(':').map_or(path, |(p, _)| p);
        return Some(format!(
            "Failed to apply default image tag \"{image}\": couldn't parse image name \"{image}\": invalid reference format: repository name ({path}) must be lowercase"
        ));
    }
    None
}

fn not_found(image: &ImageRef) -> String {
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{f}\": failed to resolve reference \"{f}\": {f}: not found",
        f = image.full
    )
}

fn access_denied(image: &ImageRef) -> String {
    format!(
        "rpc error: code = Unknown desc = failed to pull and unpack image \"{f}\": failed to resolve reference \"{f}\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed",
        f = image.full
    )
}

fn no_such_host(image: &ImageRef, host: &str) -> String {
    let path = image.full.strip_prefix(&format!("{host}/")).unwrap_or("");
    let (repo, reference) = match path.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => (r, t),
        _ => (path, "latest"),
    };
    format!(
        "rpc error: code = Unknown desc = failed to pull and unpack image \"{f}\": failed to resolve reference \"{f}\": failed to do request: Head \"https://{host}/v2/{repo}/manifests/{reference}\": dial tcp: lookup {host} on 172.18.0.1:53: no such host",
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
        assert_eq!(
            resolve(&parse("nginx:1.277")).unwrap_err(),
            "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:1.277\": failed to resolve reference \"docker.io/library/nginx:1.277\": docker.io/library/nginx:1.277: not found"
        );
        assert!(resolve(&parse("registry.k8s.io/e2e-test-images/agnhost:2.53")).is_ok());
        assert!(resolve(&parse(
            "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5"
        ))
        .is_ok());
        assert!(resolve(&parse("regsitry.k8s.io/pause:3.10"))
            .unwrap_err()
            .contains("lookup regsitry.k8s.io on 172.18.0.1:53: no such host"));
        assert_eq!(invalid_name("Nginx:1.27").unwrap(), "Failed to apply default image tag \"Nginx:1.27\": couldn't parse image name \"Nginx:1.27\": invalid reference format: repository name (library/Nginx) must be lowercase");
        assert!(invalid_name("nginx:1.27").is_none());
        assert!(resolve(&parse("ngnix"))
            .unwrap_err()
            .contains("pull access denied"));
        assert!(resolve(&parse("ghcr.io/acme/shop:v3")).is_ok());
    }
}
