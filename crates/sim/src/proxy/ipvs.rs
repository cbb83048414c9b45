//! kube-proxy's IPVS mode: `ipvsadm -Ln` and the iptables rules IPVS mode keeps.

use super::iptables::NodeTables;
use super::model::ProxyModel;
use super::ProxyInput;

pub(crate) fn node_tables(_input: &ProxyInput, _model: &ProxyModel) -> NodeTables {
    NodeTables::default()
}
