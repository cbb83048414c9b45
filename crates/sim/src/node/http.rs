//! What the HTTP servers in the catalog answer: nginx's welcome page and 404s, httpd's
//! "It works!", agnhost, echoserver, the guestbook frontend, CoreDNS health endpoints.

use crate::node::behavior::Server;
use crate::node::cri::Container;
use crate::node::logs::nginx_version;
use crate::time::{Time, EPOCH_UNIX_MS};

/// nginx's default `index.html` (615 bytes).
pub const NGINX_WELCOME: &str = "<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href=\"http://nginx.org/\">nginx.org</a>.<br/>
Commercial support is available at
<a href=\"http://nginx.com/\">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
";

/// httpd's default `index.html`.
pub const HTTPD_WORKS: &str = "<html><body><h1>It works!</h1></body></html>\n";

/// One HTTP request as a server sees it.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The `Host` header (`10.96.0.12` or `web.default.svc.cluster.local:8080`).
    pub host: &'a str,
    /// Path with query.
    pub path: &'a str,
    /// Source address the server sees.
    pub client: &'a str,
    /// `User-Agent`.
    pub agent: &'a str,
    /// The pod's name (its hostname).
    pub pod_name: &'a str,
    /// The pod's IP.
    pub pod_ip: &'a str,
    /// The port hit.
    pub port: i32,
    /// When.
    pub now: Time,
}

/// A response: status code and body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Body.
    pub body: String,
    /// Answered over TLS (the ingress controller's :443).
    pub tls: bool,
    /// The `Location` header of a redirect.
    pub location: Option<String>,
    /// The `Server` header when the server states it (ingress-nginx: `nginx`).
    pub server: Option<String>,
    /// The certificate a TLS server presented (`curl -v` prints it, verification uses it).
    pub cert: Option<Box<crate::node::x509::Certificate>>,
}

fn resp(status: u16, body: impl Into<String>) -> Response {
    Response {
        status,
        body: body.into(),
        ..Response::default()
    }
}

pub(crate) fn nginx_error(status: u16, text: &str, version: &str) -> String {
    format!("<html>\r\n<head><title>{status} {text}</title></head>\r\n<body>\r\n<center><h1>{status} {text}</h1></center>\r\n<hr><center>nginx/{version}</center>\r\n</body>\r\n</html>\r\n")
}

fn apache_404() -> String {
    "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n</body></html>\n".into()
}

/// The response of `server` in container `c` to `req`.
/// [`respond`], with the server's document root read through `files` first (a page an
/// init container wrote into a shared volume, a file written with `kubectl exec`): nginx
/// and httpd serve what is there, and answer 403/404 as they do when it is not.
pub fn respond_from(
    server: Server,
    c: &Container,
    req: &Request,
    files: impl Fn(&str, &str) -> Option<Result<String, bool>>,
) -> Response {
    let path = req.path.split('?').next().unwrap_or("/");
    let tag = crate::node::images::parse(&c.image).tag;
    let root = match server {
        Server::Nginx => "/usr/share/nginx/html",
        Server::Httpd => "/usr/local/apache2/htdocs",
        _ => return respond(server, c, req),
    };
    if c.unready(req.now) {
        return respond(server, c, req);
    }
    match (files(root, path), server) {
        (None, _) => respond(server, c, req),
        (Some(Ok(body)), _) => resp(200, body),
        (Some(Err(true)), Server::Nginx) => resp(403, nginx_error(403, "Forbidden", nginx_version(&tag))),
        (Some(Err(_)), Server::Nginx) => resp(404, nginx_error(404, "Not Found", nginx_version(&tag))),
        (Some(Err(true)), _) => resp(200, "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 3.2 Final//EN\">\n<html>\n <head>\n  <title>Index of /</title>\n </head>\n <body>\n<h1>Index of /</h1>\n<ul></ul>\n</body></html>\n"),
        (Some(Err(false)), _) => resp(404, apache_404()),
    }
}

/// What a server answers to a GET, from the image's own files.
pub fn respond(server: Server, c: &Container, req: &Request) -> Response {
    let path = req.path.split('?').next().unwrap_or("/");
    let tag = crate::node::images::parse(&c.image).tag;
    if c.unready(req.now) {
        return match server {
            Server::Nginx => resp(
                503,
                nginx_error(503, "Service Temporarily Unavailable", nginx_version(&tag)),
            ),
            _ => resp(503, "Service Unavailable\n"),
        };
    }
    match server {
        Server::Nginx => match path {
            "/" | "/index.html" => resp(200, NGINX_WELCOME),
            "/50x.html" => resp(200, "<!DOCTYPE html>\n<html>\n<head>\n<title>Error</title>\n</head>\n<body>\n<h1>An error occurred.</h1>\n</body>\n</html>\n"),
            _ => resp(404, nginx_error(404, "Not Found", nginx_version(&tag))),
        },
        Server::Httpd => match path {
            "/" | "/index.html" => resp(200, HTTPD_WORKS),
            _ => resp(404, apache_404()),
        },
        Server::Agnhost => {
            if req.port == 9376 {
                return resp(200, req.pod_name);
            }
            match path {
                "/" | "/echo" => {
                    let ts = k8s_openapi::jiff::Timestamp::from_millisecond(EPOCH_UNIX_MS + req.now as i64)
                        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
                    let up = req.now.saturating_sub(c.started.unwrap_or(0));
                    resp(200, format!("NOW: {}.{:09} +0000 UTC m=+{}.{:09}", ts.strftime("%Y-%m-%d %H:%M:%S"), (req.now % 1000) * 1_000_000, up / 1000, (up % 1000) * 1_000_000))
                }
                "/hostname" => resp(200, req.pod_name),
                "/clientip" => resp(200, format!("{}:{}", req.client, 40000 + req.now % 20000)),
                "/healthz" | "/readyz" => resp(200, ""),
                "/exit" => resp(200, ""),
                _ => resp(404, "404 page not found\n"),
            }
        }
        Server::Echo => resp(200, format!(
            "\n\nHostname: {}\n\nPod Information:\n\t-no pod information available-\n\nServer values:\n\tserver_version=nginx: 1.13.3 - lua: 10008\n\nRequest Information:\n\tclient_address={}\n\tmethod=GET\n\treal path={path}\n\tquery={}\n\trequest_version=1.1\n\trequest_scheme=http\n\trequest_uri=http://{}:8080{}\n\nRequest Headers:\n\taccept=*/*\n\thost={}\n\tuser-agent={}\n\nRequest Body:\n\t-no body in request-\n\n",
            req.pod_name,
            req.client,
            req.path.split_once('?').map_or("", |(_, q)| q),
            req.host.split(':').next().unwrap_or(""),
            req.path,
            req.host,
            req.agent
        )),
        Server::HpaExample => resp(200, "OK!"),
        Server::Guestbook => match path {
            "/" | "/index.html" => resp(200, "<html ng-app=\"redis\">\n  <head>\n    <title>Guestbook</title>\n    <link rel=\"stylesheet\" href=\"//netdna.bootstrapcdn.com/bootstrap/3.1.1/css/bootstrap.min.css\">\n    <script src=\"https://ajax.googleapis.com/ajax/libs/angularjs/1.2.12/angular.min.js\"></script>\n    <script src=\"controllers.js\"></script>\n    <script src=\"https://cdnjs.cloudflare.com/ajax/libs/angular-ui-bootstrap/0.13.0/ui-bootstrap-tpls.js\"></script>\n  </head>\n  <body ng-controller=\"RedisCtrl\">\n    <div style=\"width: 50%; margin-left: 20px\">\n      <h2>Guestbook</h2>\n    <form>\n    <fieldset>\n    <input ng-model=\"msg\" placeholder=\"Messages\" class=\"form-control\" type=\"text\" name=\"input\"><br>\n    <button type=\"button\" class=\"btn btn-primary\" ng-click=\"controller.onRedis()\">Submit</button>\n    </fieldset>\n    </form>\n    <div>\n      <div ng-repeat=\"msg in messages track by $index\">\n        {{msg}}\n      </div>\n    </div>\n    </div>\n  </body>\n</html>\n"),
            "/guestbook.php" => resp(200, "{\"data\": \"\"}"),
            _ => resp(404, apache_404()),
        },
        Server::CoreDns => match (req.port, path) {
            (8080, "/health") => resp(200, "OK"),
            (8181, "/ready") => resp(200, "OK"),
            (9153, "/metrics") => resp(200, "# HELP coredns_build_info A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built.\n# TYPE coredns_build_info gauge\ncoredns_build_info{goversion=\"go1.24.1\",revision=\"707c7c1\",version=\"1.12.1\"} 1\n"),
            _ => resp(404, "404 page not found\n"),
        },
        Server::IngressNginx => match (req.port, path) {
            (10254, "/healthz") => resp(200, "ok"),
            _ => resp(404, "404 page not found\n"),
        },
        Server::Envoy => match (req.port, path) {
            (8081, "/readyz" | "/healthz") | (19002, "/healthz") => resp(200, "ok"),
            (19003, "/ready") => resp(200, "LIVE\n"),
            (19001, "/stats/prometheus") => resp(200, "# TYPE envoy_server_live gauge\nenvoy_server_live{} 1\n"),
            _ => resp(404, ""),
        },
        Server::Generic => resp(200, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_pages_have_their_real_sizes() {
        assert_eq!(NGINX_WELCOME.len(), 615);
        assert_eq!(HTTPD_WORKS.len(), 45);
        assert_eq!(nginx_error(404, "Not Found", "1.27.5").len(), 153);
    }
}
