//! The last leg of a connection: from the machine that holds its destination (a node's
//! hostPort through CNI portmap, a pod's sandbox) to the listening container and what it
//! answers, recorded as one traffic path.

use super::*;

/// A TCP connection that got through the rules and the policies, about to reach the
/// machine that holds its destination.
pub(crate) struct Conn<'s> {
    /// Who the walk is recorded for (the original client).
    pub src: &'s Source,
    /// The machine the connection leaves (the client's, or the ingress controller's).
    pub from_node: u32,
    /// The `Host` header.
    pub host: &'s str,
    /// The request URI.
    pub path: &'s str,
    /// The URL as typed.
    pub url: &'s str,
    /// The client's name lookup.
    pub dns: Option<DnsAnswer>,
    /// The hops so far.
    pub hops: Vec<Hop>,
    /// Destination address after the rules.
    pub ip: Ipv4Addr,
    /// Destination port after the rules.
    pub port: u16,
    /// The source address the server sees.
    pub client: Ipv4Addr,
    /// `User-Agent`.
    pub agent: &'s str,
    /// Proxies passed (the ingress controller proxies once).
    pub depth: u8,
}

/// Delivers `c` to the container listening at its destination and records the walk.
pub(crate) fn deliver(net: &mut Network, c: Conn) -> Fetch {
    let Conn {
        src,
        from_node,
        host,
        path,
        url,
        dns,
        mut hops,
        ip: mut final_ip,
        port: mut final_port,
        client: seen_src,
        agent,
        depth,
    } = c;
    let now = net.now;
    let fin = format!("{final_ip}:{final_port}");
    if final_ip.to_string() == crate::cluster::CONTROL_PLANE_IP && final_port == 6443 {
        let response = Response {
            status: 403,
            body: "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/\\\"\",\n  \"reason\": \"Forbidden\",\n  \"details\": {},\n  \"code\": 403\n}".into(),
            ..Response::default()
        };
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin} (kube-apiserver)"),
            None,
            Fetch::Answered {
                response,
                pod: None,
            },
        );
    }
    if final_ip == Ipv4Addr::LOCALHOST {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin}: nothing listening"),
            None,
            Fetch::Refused,
        );
    }
    let idx = match locate(net, from_node, final_ip) {
        Err(f) => {
            return record(
                net,
                src,
                url,
                dns,
                hops,
                &format!("{fin}: host unreachable (no answer)"),
                None,
                f,
            )
        }
        Ok(None) => {
            return record(
                net,
                src,
                url,
                dns,
                hops,
                &format!("{fin}: no route outside the cluster network"),
                None,
                Fetch::Timeout,
            )
        }
        Ok(Some(i)) => i,
    };
    let node_name = net.hosts[idx as usize].config.name.clone();
    if net.hosts[idx as usize].ip == final_ip.to_string() {
        if let Some((ip, port, hop)) = host_port(net, idx, final_port) {
            hops.push(hop);
            final_ip = ip;
            final_port = port;
        }
    }
    if net.hosts[idx as usize].ip == final_ip.to_string() {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin} on {node_name}: nothing listening"),
            None,
            Fetch::Refused,
        );
    }
    let ip_s = final_ip.to_string();
    let rt = &net.hosts[idx as usize].runtime;
    let Some(sb) = rt.sandbox_by_ip(&ip_s).cloned() else {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin}: no pod has this address"),
            None,
            Fetch::NoRoute,
        );
    };
    let pod = format!("{}/{}", sb.namespace, sb.name);
    let target = rt
        .running_in(&sb.id)
        .find(|c| c.accepts(i32::from(final_port), now))
        .cloned();
    let Some(c) = target else {
        return record(
            net,
            src,
            url,
            dns,
            hops,
            &format!("{fin} ({pod}) on {node_name}: connection refused"),
            Some(pod),
            Fetch::Refused,
        );
    };
    let proto = c
        .behaviour
        .listening(&c.declared_ports)
        .into_iter()
        .find(|(p, _)| *p == i32::from(final_port))
        .map(|(_, s)| s);
    let where_ = format!("{fin} ({pod}) on {node_name}");
    let Some(Proto::Http(server)) = proto else {
        return record(net, src, url, dns, hops, &where_, Some(pod), Fetch::NotHttp);
    };
    let client = seen_src.to_string();
    if server == crate::node::behavior::Server::Envoy
        && depth == 0
        && !matches!(final_port, 8081 | 19001 | 19002 | 19003)
    {
        let at = crate::node::envoy_proxy::Arrival {
            node: idx,
            sandbox: sb,
            container: c,
            port: final_port,
        };
        let conn = Conn {
            src,
            from_node: idx,
            host,
            path,
            url,
            dns,
            hops,
            ip: final_ip,
            port: final_port,
            client: seen_src,
            agent,
            depth: 1,
        };
        return crate::node::envoy_proxy::serve(net, conn, at);
    }
    if server == crate::node::behavior::Server::IngressNginx && depth == 0 {
        let at = crate::node::ingress_nginx::Arrival {
            node: idx,
            sandbox: sb,
            container: c,
            port: final_port,
        };
        let conn = Conn {
            src,
            from_node: idx,
            host,
            path,
            url,
            dns,
            hops,
            ip: final_ip,
            port: final_port,
            client: seen_src,
            agent,
            depth: 1,
        };
        return crate::node::ingress_nginx::serve(net, conn, at);
    }
    let req = Request {
        host,
        path,
        client: &client,
        agent,
        pod_name: &sb.name,
        pod_ip: &ip_s,
        port: i32::from(final_port),
        now,
    };
    if server == crate::node::behavior::Server::Guestbook
        && path.starts_with("/guestbook.php")
        && !c.unready(now)
    {
        let from = Source {
            node: idx,
            ip: final_ip,
            pod: Some((sb.namespace.clone(), sb.name.clone())),
            agent: "Predis".into(),
        };
        let query = path.split_once('?').map_or("", |(_, q)| q);
        let (status, body) = crate::node::redis::guestbook(net, &from, query);
        let f = Fetch::Answered {
            response: Response {
                status,
                body,
                ..Response::default()
            },
            pod: Some(pod.clone()),
        };
        return record(net, src, url, dns, hops, &where_, Some(pod), f);
    }
    let os = &net.hosts[idx as usize].os;
    let response = http::respond_from(server, &c, &req, |root, p| {
        crate::node::container_fs::served(os, &c, &sb, root, p)
    });
    if let Some(line) = logs::access(
        &c,
        now,
        &client,
        path,
        response.status,
        response.body.len(),
        agent,
    ) {
        net.hosts[idx as usize]
            .runtime
            .append_logs(&c.id, vec![line]);
    }
    let f = Fetch::Answered {
        response,
        pod: Some(pod.clone()),
    };
    record(net, src, url, dns, hops, &where_, Some(pod), f)
}

/// CNI portmap on machine `idx`: the sandbox whose PortMappings hold `port`, as the
/// `CNI-HOSTPORT-DNAT` rule rewrites the destination.
fn host_port(net: &Network, idx: u32, port: u16) -> Option<(Ipv4Addr, u16, Hop)> {
    let h = &net.hosts[idx as usize];
    let rt = &h.runtime;
    let (sb, to) = rt.sandboxes.values().filter(|s| s.ready).find_map(|s| {
        s.port_mappings
            .iter()
            .find(|(hp, _)| *hp == port)
            .map(|(_, cp)| (s, *cp))
    })?;
    let ip: Ipv4Addr = sb.ip.parse().ok()?;
    let chain = format!("CNI-DN-{}", &sb.id[..sb.id.len().min(24)]);
    let hop = Hop {
        node: h.config.name.clone(),
        table: "nat".into(),
        chain: "CNI-HOSTPORT-DNAT".into(),
        rule: format!("-A {chain} -p tcp -m tcp --dport {port} -j DNAT --to-destination {ip}:{to}"),
        matched: true,
        note: format!(
            "hostPort {port} of {}/{}: DNAT to {ip}:{to}",
            sb.namespace, sb.name
        ),
    };
    Some((ip, to, hop))
}
