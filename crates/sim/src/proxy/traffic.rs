//! Walks a packet through a node's kube-proxy rules to an endpoint, hop by hop.
