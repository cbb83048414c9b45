//! IPv4 CIDR blocks and the address tests kube-proxy's rules make.

use std::fmt;
use std::net::Ipv4Addr;

/// An IPv4 CIDR block such as `10.244.0.0/16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cidr {
    /// The address as written (host bits are kept, as iptables keeps what it is given
    /// only after masking; see [`Cidr::network`]).
    pub addr: Ipv4Addr,
    /// Prefix length, 0–32.
    pub prefix: u8,
}

impl Cidr {
    /// A CIDR from an address and a prefix length (clamped to 32).
    pub fn new(addr: Ipv4Addr, prefix: u8) -> Cidr {
        Cidr {
            addr,
            prefix: prefix.min(32),
        }
    }

    /// A single host: `addr/32`.
    pub fn host(addr: Ipv4Addr) -> Cidr {
        Cidr::new(addr, 32)
    }

    /// Parses `a.b.c.d/n` or a bare `a.b.c.d` (a /32). Surrounding spaces are ignored,
    /// as kube-proxy trims `loadBalancerSourceRanges`. `None` for anything else.
    pub fn parse(s: &str) -> Option<Cidr> {
        let s = s.trim();
        match s.split_once('/') {
            Some((a, p)) => {
                let addr: Ipv4Addr = a.parse().ok()?;
                let prefix: u8 = p.parse().ok()?;
                (prefix <= 32).then_some(Cidr { addr, prefix })
            }
            None => s.parse().ok().map(Cidr::host),
        }
    }

    /// The netmask as a number (`/16` → `0xffff0000`).
    pub fn mask(&self) -> u32 {
        if self.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.prefix))
        }
    }

    /// The block with host bits cleared (what iptables stores and prints).
    pub fn network(&self) -> Cidr {
        Cidr {
            addr: Ipv4Addr::from(u32::from(self.addr) & self.mask()),
            prefix: self.prefix,
        }
    }

    /// Whether `ip` lies in the block.
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr) & self.mask()
    }

    /// The `n`th address of the block (`10.244.1.0/24`.nth(1) = `10.244.1.1`).
    pub fn nth(&self, n: u32) -> Ipv4Addr {
        Ipv4Addr::from((u32::from(self.addr) & self.mask()).wrapping_add(n))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// `127.0.0.0/8`, the loopback block iptables rules guard.
pub const LOOPBACK: Cidr = Cidr {
    addr: Ipv4Addr::new(127, 0, 0, 0),
    prefix: 8,
};

/// Parses an IPv4 address, `None` for IPv6, empty, `None` (headless) and junk.
pub fn parse_ipv4(s: &str) -> Option<Ipv4Addr> {
    s.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_contains_and_prints() {
        let c = Cidr::parse(" 10.244.0.0/16").unwrap();
        assert_eq!(c.to_string(), "10.244.0.0/16");
        assert!(c.contains(Ipv4Addr::new(10, 244, 3, 7)));
        assert!(!c.contains(Ipv4Addr::new(10, 245, 0, 1)));
        assert_eq!(Cidr::parse("10.1.2.3").unwrap().to_string(), "10.1.2.3/32");
        assert_eq!(Cidr::parse("10.1.2.3/33"), None);
        assert_eq!(Cidr::parse("nonsense"), None);
        assert_eq!(
            Cidr::parse("10.244.1.0/24").unwrap().nth(1),
            Ipv4Addr::new(10, 244, 1, 1)
        );
        assert_eq!(
            Cidr::parse("10.1.2.3/8").unwrap().network().to_string(),
            "10.0.0.0/8"
        );
        assert!(Cidr::parse("0.0.0.0/0")
            .unwrap()
            .contains(Ipv4Addr::new(8, 8, 8, 8)));
        assert_eq!(parse_ipv4("None"), None);
    }
}
