//! A worker node's processes and machine: the kubelet (pod workers, volumes, probes, its
//! API), containerd (CRI, CNI, images, container logs), kube-proxy, the data plane
//! (`curl` through the rules to containers), and the OS (journald, mounts).

pub mod backoff;
pub mod behavior;
pub mod container_fs;
pub mod containerd;
pub mod cri;
pub mod curl;
pub mod dns;
pub mod dnsutils;
pub mod env;
pub mod envoy;
pub mod envoy_proxy;
pub mod gateway_model;
pub mod gateway_route;
pub mod gateway_tls;
pub mod grpc_route;
pub mod host;
pub mod http;
pub mod images;
pub mod ingress_nginx;
pub mod ingress_route;
pub mod ingress_tls;
pub mod journal;
pub mod kube_proxy;
pub mod kubelet;
pub mod kubelet_api;
pub mod load;
pub mod load_loop;
pub mod logs;
pub mod machine;
pub mod net;
pub mod netpol;
pub mod netpol_walk;
pub mod pi;
pub mod podstatus;
pub mod podworker;
pub mod prober;
pub mod redis;
pub mod resolver;
pub mod runtime;
pub mod script;
pub mod server;
pub mod sh;
pub mod shell;
pub mod volumes;
pub mod x509;

pub use kube_proxy::KubeProxy;
pub use kubelet::Kubelet;
pub use runtime::{CriRequest, CriResponse, Runtime};
