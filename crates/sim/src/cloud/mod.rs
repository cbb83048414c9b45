//! cloud-provider-kind: the program kind's docs have users run on the host, outside the
//! cluster. It talks to the cluster only through kube-apiserver (with the kind
//! kubeconfig's `kubernetes-admin`) and to the host's docker daemon, where it runs one
//! envoy container per LoadBalancer Service (docs/design.md §6.19).

pub mod docker;
pub mod service_controller;
mod service_lb;

use crate::client::Client;
use crate::controllers::ControllerManager;
use crate::rng::Rng;

/// The add-on's name in `spec.addons` and in `sim start|stop`.
pub const ADDON: &str = "cloud-provider-kind";

/// A freshly started cloud-provider-kind: the service controller on its own informers.
pub fn process(seed: u64) -> ControllerManager {
    ControllerManager::with_identity(
        vec![Box::new(service_controller::ServiceController::default())],
        Client::new(
            crate::cmd::kubectl::ADMIN_USER,
            crate::cmd::kubectl::ADMIN_GROUPS,
        ),
        Rng::stream(seed, ADDON),
    )
}
