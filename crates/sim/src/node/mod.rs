//! A worker node's processes: the kubelet (with its pod workers), containerd (CRI, CNI,
//! images) and kube-proxy.

pub mod images;
pub mod kube_proxy;
pub mod kubelet;
pub mod podstatus;
pub mod podworker;
pub mod runtime;

pub use kube_proxy::KubeProxy;
pub use kubelet::Kubelet;
pub use runtime::{CriRequest, CriResponse, Runtime};
