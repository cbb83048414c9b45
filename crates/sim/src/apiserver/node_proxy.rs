//! kube-apiserver's proxy to the kubelets (`pods/log`, `pods/exec`,
//! `nodes/NODE/proxy/stats/summary`): it finds the Node in its cache and dials the
//! kubelet at the Node's InternalIP on port 10250, then hands the kubelet's answer back
//! to the client that asked.

use k8s_openapi::api::core::v1::Node;

use crate::message::{Actor, Ctx, Payload};
use crate::node::kubelet_api::{KubeletRequest, KubeletResponse};
use crate::object::{Kind, Object};

use super::server::ApiServer;

impl ApiServer {
    /// Forwards a kubelet API call to the node's kubelet.
    pub(crate) fn proxy_to_kubelet(&mut self, ctx: &mut Ctx, from: Actor, mut req: KubeletRequest) {
        req.client = Some(from);
        let node = match self.cache.get(Kind::Node, "", &req.node).map(|o| &**o) {
            Some(Object::Node(n)) => Some(internal_ip(n)),
            _ => None,
        };
        let target = match node {
            None => Err(format!("nodes \"{}\" not found", req.node)),
            Some(ip) => ip
                .as_deref()
                .and_then(crate::cluster::node_index_of_ip)
                .ok_or_else(|| "no preferred addresses found; known addresses: []".to_string()),
        };
        match target {
            Ok(n) => ctx.send(Actor::Kubelet(n), Payload::KubeletApi(req)),
            Err(e) => ctx.send(
                from,
                Payload::KubeletApiResp(KubeletResponse {
                    id: req.id,
                    client: from,
                    result: Err(e),
                }),
            ),
        }
    }

    /// Hands a kubelet's answer back to the client that asked.
    pub(crate) fn proxy_response(&mut self, ctx: &mut Ctx, resp: KubeletResponse) {
        let client = resp.client;
        ctx.send(client, Payload::KubeletApiResp(resp));
    }
}

fn internal_ip(n: &Node) -> Option<String> {
    n.status
        .as_ref()?
        .addresses
        .iter()
        .flatten()
        .find(|a| a.type_ == "InternalIP")
        .map(|a| a.address.clone())
}
