//! `curl` and busybox `wget` as a node or a container runs them: options, the progress
//! meter, headers, and curl's own error lines and exit codes over the data plane.

use std::net::Ipv4Addr;

use crate::node::http::Response;
use crate::node::net::{self, Fetch, Network, Source, DNS_TIMEOUT, SYN_TIMEOUT};
use crate::time::{Time, EPOCH_UNIX_MS, SECOND};

pub use crate::node::kubelet_api::RunResult;

#[path = "curl_tls.rs"]
pub(crate) mod curl_tls;
use curl_tls::{connect_target, pinned_address, server_certificate};

/// A parsed URL.
struct Url {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

fn parse_url(u: &str) -> Option<Url> {
    let (scheme, rest) = match u.split_once("://") {
        Some((s, r)) => (s.to_ascii_lowercase(), r),
        None => ("http".to_string(), u),
    };
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().ok()?),
        None => (
            hostport.to_string(),
            if scheme == "https" { 443 } else { 80 },
        ),
    };
    if host.is_empty() {
        return None;
    }
    Some(Url {
        scheme,
        host,
        port,
        path,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Time-out",
        _ => "",
    }
}

fn headers(r: &Response, server: &str, now: Time) -> String {
    let date = k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + now as i64)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
        .strftime("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    // nginx's own status line for 503 (`ngx_http_status_lines`).
    let text = match (r.status, server.starts_with("nginx")) {
        (503, true) => "Service Temporarily Unavailable",
        (s, _) => reason(s),
    };
    let mut h = format!("HTTP/1.1 {} {text}\r\n", r.status);
    if !server.is_empty() {
        h.push_str(&format!("Server: {server}\r\n"));
    }
    h.push_str(&format!("Date: {date}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: keep-alive\r\n", r.body.len()));
    if let Some(l) = &r.location {
        h.push_str(&format!("Location: {l}\r\n"));
    }
    h.push_str("\r\n");
    h
}

fn meter(bytes: usize) -> String {
    let speed = if bytes == 0 {
        "    0".to_string()
    } else {
        format!("{:>4}k", (bytes * 1000 / 1024).min(9999))
    };
    format!(
        "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n100 {bytes:>5}  100 {bytes:>5}    0     0 {speed}      0 --:--:-- --:--:-- --:--:-- {speed}\n"
    )
}

/// Runs `curl ARGS` from `src`.
pub fn curl(net: &mut Network, src: &Source, args: &[String]) -> RunResult {
    let mut silent = false;
    let mut show_error = false;
    let mut head = false;
    let mut include = false;
    let mut fail = false;
    let mut insecure = false;
    let mut verbose = false;
    let mut discard = false;
    let mut write_out: Option<String> = None;
    let mut timeout: Option<Time> = None;
    let mut url: Option<String> = None;
    let mut host_header: Option<String> = None;
    let mut resolve: Vec<String> = Vec::new();
    let mut connect_to: Vec<String> = Vec::new();
    let mut extras = net::RequestExtras::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = |i: &mut usize| -> Option<String> {
            *i += 1;
            args.get(*i).cloned()
        };
        match a {
            "-s" | "--silent" => silent = true,
            "-S" | "--show-error" => show_error = true,
            "-sS" | "-Ss" => {
                silent = true;
                show_error = true;
            }
            "-I" | "--head" => head = true,
            "-i" | "--include" => include = true,
            "-f" | "--fail" => fail = true,
            "-k" | "--insecure" => insecure = true,
            // The request's HTTP version does not change how kubeloop's servers answer.
            "--http2" | "--http2-prior-knowledge" | "--http1.1" => {}
            "-v" | "--verbose" => verbose = true,
            "-L" | "--location" | "-4" | "-sL" | "-fsSL" => {
                if a.contains('s') {
                    silent = true;
                }
                if a.contains('S') {
                    show_error = true;
                }
                if a.contains('f') {
                    fail = true;
                }
            }
            "-o" | "--output" => {
                discard = value(&mut i).is_some_and(|f| f == "/dev/null");
            }
            "-w" | "--write-out" => write_out = value(&mut i),
            "-m" | "--max-time" | "--connect-timeout" => {
                let v = value(&mut i).unwrap_or_default();
                match v.parse::<f64>() {
                    // The kernel gives up on a SYN before any longer timeout ends.
                    Ok(s) if s >= 0.0 => {
                        timeout = Some(((s * SECOND as f64) as Time).min(SYN_TIMEOUT))
                    }
                    _ => return RunResult::err(2, format!("curl: option {a}: expected a proper numerical parameter\ncurl: try 'curl --help' or 'curl --manual' for more information\n")),
                }
            }
            "-H" | "--header" => {
                let h = value(&mut i).unwrap_or_default();
                if let Some((name, v)) = h.split_once(':') {
                    if name.trim().eq_ignore_ascii_case("host") {
                        host_header = Some(v.trim().to_string());
                    } else {
                        extras
                            .headers
                            .push((name.trim().to_string(), v.trim().to_string()));
                    }
                }
            }
            "--resolve" => resolve.extend(value(&mut i)),
            "--connect-to" => connect_to.extend(value(&mut i)),
            "-X" | "--request" => {
                extras.method = value(&mut i).unwrap_or_default();
            }
            "-A" | "--user-agent" | "-d" | "--data" => {
                i += 1;
            }
            // Bundled short flags (`-si`, `-kI`).
            _ if a.len() > 2
                && !a.starts_with("--")
                && a[1..].chars().all(|c| "sSiIfkvL4".contains(c)) =>
            {
                for c in a[1..].chars() {
                    match c {
                        's' => silent = true,
                        'S' => show_error = true,
                        'i' => include = true,
                        'I' => head = true,
                        'f' => fail = true,
                        'k' => insecure = true,
                        'v' => verbose = true,
                        _ => {}
                    }
                }
            }
            _ if a.starts_with('-') && a.len() > 1 => {
                return RunResult::err(2, format!("curl: option {a}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n"));
            }
            _ => {
                if url.is_none() {
                    url = Some(a.to_string());
                }
            }
        }
        i += 1;
    }
    let Some(raw) = url else {
        return RunResult::err(
            2,
            "curl: try 'curl --help' or 'curl --manual' for more information\n",
        );
    };
    let Some(u) = parse_url(&raw) else {
        let scheme = raw.split_once("://").map_or("", |(s, _)| s);
        return RunResult::err(
            1,
            format!("curl: (1) Protocol \"{scheme}\" not supported\n"),
        );
    };
    let errors = !silent || show_error;
    let fail_line = |code: i32, msg: String, elapsed: Time| RunResult {
        stdout: write_out.as_deref().map_or(String::new(), |w| {
            w.replace("%{http_code}", "000").replace("\\n", "\n")
        }),
        stderr: if errors {
            format!("curl: ({code}) {msg}\n")
        } else {
            String::new()
        },
        code,
        elapsed,
    };
    let mut err = String::new();
    let pinned = match pinned_address(&resolve, &u) {
        Ok(p) => p,
        Err(bad) => return RunResult::err(49, format!("curl: (49) {bad}\n")),
    };
    if verbose {
        for r in &resolve {
            err.push_str(&format!("* Added {r} to DNS cache\n"));
        }
    }
    let redirected = connect_target(&connect_to, &u);
    let pinned = redirected.map(|(ip, _)| ip).or(pinned);
    let conn_port = redirected.map_or(u.port, |(_, p)| p);
    let (ip, dns) = match pinned {
        Some(ip) => {
            if verbose {
                err.push_str(&format!("* Hostname {} was found in DNS cache\n", u.host));
            }
            (Ok(ip), None)
        }
        None => net::resolve(net, src, &u.host),
    };
    let ip = match ip {
        Ok(ip) => ip,
        Err(Fetch::Timeout) => {
            return fail_line(
                6,
                format!("Could not resolve host: {}", u.host),
                timeout.map_or(DNS_TIMEOUT, |t| t.min(DNS_TIMEOUT)),
            );
        }
        Err(_) => return fail_line(6, format!("Could not resolve host: {}", u.host), 0),
    };
    let mut out = String::new();
    if verbose {
        err.push_str(&format!("*   Trying {ip}:{}...\n", u.port));
    }
    let host = host_header.unwrap_or_else(|| u.host.clone());
    if head && extras.method.is_empty() {
        extras.method = "HEAD".into();
    }
    net.state().request = extras;
    let fetch = net::get(net, src, &host, ip, conn_port, &u.path, &raw, dns);
    net.state().request = net::RequestExtras::default();
    let now = net.now;
    match fetch {
        Fetch::Refused => fail_line(
            7,
            format!(
                "Failed to connect to {} port {} after 0 ms: Couldn't connect to server",
                u.host, u.port
            ),
            0,
        ),
        Fetch::NoRoute => fail_line(
            7,
            format!(
                "Failed to connect to {} port {} after 3071 ms: No route to host",
                u.host, u.port
            ),
            3071,
        ),
        Fetch::Timeout => {
            let t = timeout.unwrap_or(SYN_TIMEOUT) + 1;
            fail_line(
                28,
                format!(
                    "Failed to connect to {} port {} after {t} ms: Timeout was reached",
                    u.host, u.port
                ),
                t,
            )
        }
        Fetch::Unresolved => fail_line(6, format!("Could not resolve host: {}", u.host), 0),
        Fetch::NotHttp => fail_line(1, "Received HTTP/0.9 when not allowed".into(), 2),
        Fetch::EmptyReply => fail_line(52, "Empty reply from server".into(), 1),
        Fetch::Answered { response, pod } => {
            let apiserver = pod.is_none();
            if apiserver && u.scheme == "http" {
                let body = "Client sent an HTTP request to an HTTPS server.\n".to_string();
                return RunResult {
                    stdout: body,
                    ..RunResult::default()
                };
            }
            if u.scheme == "https" && !apiserver && !response.tls {
                return fail_line(
                    35,
                    "OpenSSL/3.0.17: error:0A00010B:SSL routines::wrong version number".into(),
                    1,
                );
            }
            if u.scheme == "https" && !insecure && response.tls {
                let problem = match &response.cert {
                    Some(c) if !c.self_signed() => "unable to get local issuer certificate",
                    _ => "self-signed certificate",
                };
                return fail_line(60, format!("SSL certificate problem: {problem}\nMore details here: https://curl.se/docs/sslcerts.html\n\ncurl failed to verify the legitimacy of the server and therefore could not\nestablish a secure connection to it. To learn more about this situation and\nhow to fix it, please visit the web page mentioned above."), 5);
            }
            if u.scheme == "https" && !insecure {
                return fail_line(60, "SSL certificate problem: unable to get local issuer certificate\nMore details here: https://curl.se/docs/sslcerts.html\n\ncurl failed to verify the legitimacy of the server and therefore could not\nestablish a secure connection to it. To learn more about this situation and\nhow to fix it, please visit the web page mentioned above.".into(), 5);
            }
            if verbose {
                err.push_str(&format!(
                    "* Connected to {} ({ip}) port {} (#0)\n",
                    u.host, u.port
                ));
                if let Some(c) = response.cert.as_deref().filter(|_| u.scheme == "https") {
                    err.push_str(&server_certificate(c));
                }
                err.push_str(&format!(
                    "> GET {} HTTP/1.1\n> Host: {host}\n> User-Agent: {}\n> Accept: */*\n> \n",
                    u.path, src.agent
                ));
            }
            if fail && response.status >= 400 {
                return fail_line(
                    22,
                    format!("The requested URL returned error: {}", response.status),
                    1,
                );
            }
            let server = server_header(&response);
            let head_text = headers(&response, &server, now);
            if verbose {
                // The response's head as curl -v shows it: `< ` before each line.
                let lines = head_text.strip_suffix("\r\n").unwrap_or(&head_text);
                for l in lines.split("\r\n") {
                    err.push_str(&format!("< {l}\n"));
                }
            }
            if head || include {
                out.push_str(&head_text);
            }
            if !head && !discard {
                out.push_str(&response.body);
            }
            if let Some(w) = &write_out {
                out.push_str(
                    &w.replace("%{http_code}", &response.status.to_string())
                        .replace("\\n", "\n"),
                );
            }
            if !silent && !verbose {
                err = format!("{err}{}", meter(if head { 0 } else { response.body.len() }));
            }
            if verbose {
                err.push_str(&format!("* Connection #0 to host {} left intact\n", u.host));
            }
            RunResult {
                stdout: out,
                stderr: err,
                code: 0,
                elapsed: 1,
            }
        }
    }
}

fn server_header(r: &Response) -> String {
    if let Some(s) = &r.server {
        return s.clone();
    }
    if r.body.contains("nginx") {
        return format!("nginx/{}", crate::node::logs::nginx_version("1.27"));
    }
    if r.body.contains("It works!") {
        return "Apache/2.4.65 (Unix)".into();
    }
    String::new()
}

/// Runs busybox `wget ARGS` from `src` (`wget -qO- URL`).
pub fn wget(net: &mut Network, src: &Source, args: &[String]) -> RunResult {
    let mut quiet = false;
    let mut to_stdout = false;
    let mut timeout: Option<Time> = None;
    let mut spider = false;
    let mut url = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-q" => quiet = true,
            "--spider" => spider = true,
            "-O-" | "-qO-" | "-O" => {
                if a == "-O" {
                    i += 1;
                    to_stdout = args.get(i).is_some_and(|f| f == "-");
                } else {
                    to_stdout = true;
                    quiet |= a.contains('q');
                }
            }
            "-T" => {
                i += 1;
                timeout = args
                    .get(i)
                    .and_then(|v| v.parse::<Time>().ok())
                    .map(|s| s.saturating_mul(SECOND).min(SYN_TIMEOUT));
            }
            _ if a.starts_with("--timeout=") => {
                timeout = a[10..]
                    .parse::<Time>()
                    .ok()
                    .map(|s| s.saturating_mul(SECOND).min(SYN_TIMEOUT));
            }
            _ if a.starts_with('-') => {}
            _ => url = Some(a.to_string()),
        }
        i += 1;
    }
    let Some(raw) = url else {
        return RunResult::err(1, "BusyBox v1.37.0 (2024-09-26 21:31:42 UTC) multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n\t[-P DIR] [-U AGENT] [-T SEC] URL...\n");
    };
    let Some(u) = parse_url(&raw) else {
        return RunResult::err(1, format!("wget: not an http or ftp url: {raw}\n"));
    };
    let (ip, dns) = net::resolve(net, src, &u.host);
    let ip: Ipv4Addr = match ip {
        Ok(ip) => ip,
        Err(Fetch::Timeout) => {
            return RunResult {
                stderr: format!("wget: bad address '{}'\n", u.host),
                code: 1,
                elapsed: DNS_TIMEOUT,
                ..RunResult::default()
            }
        }
        Err(_) => return RunResult::err(1, format!("wget: bad address '{}'\n", u.host)),
    };
    let mut err = if quiet {
        String::new()
    } else {
        format!("Connecting to {} ({ip}:{})\n", u.host, u.port)
    };
    match net::get(net, src, &u.host, ip, u.port, &u.path, &raw, dns) {
        Fetch::Answered { response, .. } if response.status < 400 && spider => RunResult {
            stdout: if quiet {
                String::new()
            } else {
                "remote file exists\n".into()
            },
            stderr: err,
            code: 0,
            elapsed: 1,
        },
        Fetch::Answered { response, .. } if response.status < 400 => {
            if !quiet {
                err.push_str(&format!("writing to stdout\n-                    100% |********************************|   {}  0:00:00 ETA\nwritten to stdout\n", response.body.len()));
            }
            RunResult {
                stdout: if to_stdout {
                    response.body
                } else {
                    String::new()
                },
                stderr: err,
                code: 0,
                elapsed: 1,
            }
        }
        Fetch::Answered { response, .. } => {
            err.push_str(&format!(
                "wget: server returned error: HTTP/1.1 {} {}\n",
                response.status,
                reason(response.status)
            ));
            RunResult {
                stderr: err,
                code: 1,
                ..RunResult::default()
            }
        }
        Fetch::Timeout => {
            let t = timeout.unwrap_or(SYN_TIMEOUT);
            err.push_str("wget: download timed out\n");
            RunResult {
                stderr: err,
                code: 1,
                elapsed: t,
                ..RunResult::default()
            }
        }
        Fetch::Unresolved => RunResult::err(1, format!("wget: bad address '{}'\n", u.host)),
        Fetch::NoRoute => {
            err.push_str(&format!(
                "wget: can't connect to remote host ({ip}): No route to host\n"
            ));
            RunResult {
                stderr: err,
                code: 1,
                elapsed: 3071,
                ..RunResult::default()
            }
        }
        Fetch::EmptyReply => {
            err.push_str("wget: error getting response\n");
            RunResult {
                stderr: err,
                code: 1,
                ..RunResult::default()
            }
        }
        Fetch::Refused | Fetch::NotHttp => {
            err.push_str(&format!(
                "wget: can't connect to remote host ({ip}): Connection refused\n"
            ));
            RunResult {
                stderr: err,
                code: 1,
                ..RunResult::default()
            }
        }
    }
}

/// curl's output as a terminal shows it: stdout and stderr in the order curl wrote them.
/// `-v` writes the connection and the request and response heads (`*`, `>`, `<`) before
/// the body and `* Connection #0 … left intact` after it; an error (`curl: (7) …`) is
/// printed before `-w`'s text. Each piece is `(is_stderr, text)`.
pub fn in_written_order(stdout: &str, stderr: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut push = |err: bool, text: &str| {
        if !text.is_empty() {
            out.push((err, text.to_string()));
        }
    };
    if let Some(at) = stderr.find("* Connection #") {
        push(true, &stderr[..at]);
        push(false, stdout);
        push(true, &stderr[at..]);
    } else if stderr.starts_with("curl: (") {
        push(true, stderr);
        push(false, stdout);
    } else {
        push(false, stdout);
        push(true, stderr);
    }
    out
}
